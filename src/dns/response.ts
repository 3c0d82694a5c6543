// Encodes replies. Header bits as the protocol behaviour section of README.md: RD copied, CD copied
// in answers to QUERY (RFC 4035 3.1.6; miekg/dns SetReply, so CoreDNS, does the same), RA/Z/AD
// clear, OPT only when the query had one (our payload size 1232, DO copied).
import type { Packet } from 'dns-packet';
import { sharedEncoder, type Encoder, type FitOptions } from './encode.js';
import type { ParsedQuery } from './query.js';
import { className, typeName } from './query.js';
import { type DnsResponse, optRr, type Rr } from './records.js';

/** Our own EDNS0 UDP payload size (DNS flag day 2020). */
const OUR_UDP_SIZE = 1232;
const PLAIN_UDP_SIZE = 512;

/** The largest reply a UDP client can take for this query. */
export function udpLimit(q: ParsedQuery): number {
  if (!q.edns) return PLAIN_UDP_SIZE;
  return Math.min(OUR_UDP_SIZE, Math.max(PLAIN_UDP_SIZE, q.edns.udpSize));
}

function headerFlags(q: ParsedQuery, rcode: number, aa: boolean, relayed: { ra?: boolean; ad?: boolean } = {}): number {
  return (
    (q.opcode << 11) |
    (aa ? 0x0400 : 0) |
    (q.flags & 0x0100) | // RD copied
    (q.opcode === 0 ? q.flags & 0x0010 : 0) | // CD copied
    (relayed.ra ? 0x0080 : 0) |
    (relayed.ad ? 0x0020 : 0) |
    (rcode & 0xf)
  );
}

function optRecord(q: ParsedQuery, rcode: number): Rr {
  return optRr(OUR_UDP_SIZE, q.edns?.do === true, rcode >> 4);
}

// Encoding is synchronous and keeps nothing it is given, so one packet, question and fit object
// serve every reply of every encoder: the miss path builds none per query.
const oneQuestion = { name: '.', type: 'A', class: 'IN' } as NonNullable<Packet['questions']>[number];
const none: Rr[] = [];
const packet: Packet & { questions: NonNullable<Packet['questions']> } = {
  id: 0,
  type: 'response',
  flags: 0,
  questions: [oneQuestion],
  answers: none,
  authorities: none,
  additionals: none,
};
const fit: FitOptions = { limit: 0, opt: undefined };

/**
 * Encodes a chain response within `limit` bytes. A response that does not fit keeps its question
 * and OPT record and as many records as fit, answer records first, then authority, then
 * additional, and has TC set (as CoreDNS, through miekg/dns `Msg.Truncate`): the client gets
 * the records that fit and knows to retry over TCP for the rest.
 */
export function encodeResponse(q: ParsedQuery, res: DnsResponse, limit: number, encoder: Encoder = sharedEncoder): Buffer {
  const flags = headerFlags(q, res.rcode, res.aa, res);
  // The OPT record optRecord makes, as the fast path takes it: extended rcode, version 0, DO.
  const optTtl = (((res.rcode >> 4) & 0xff) << 24) | (q.edns?.do ? 0x8000 : 0);
  const simple = encoder.encodeSimple(
    q.id,
    flags,
    q.name,
    q.qtype,
    q.qclass,
    res.answer,
    res.authority,
    res.additional,
    q.edns ? OUR_UDP_SIZE : 0,
    optTtl,
    limit,
  );
  return simple ?? encodeGeneral(q, res, limit, flags, encoder);
}

/** encodeResponse without its fast path (encodeSimple), which must write the same bytes: for tests. */
export function encodeGeneral(
  q: ParsedQuery,
  res: DnsResponse,
  limit: number,
  flags = headerFlags(q, res.rcode, res.aa, res),
  encoder: Encoder = sharedEncoder,
): Buffer {
  packet.id = q.id;
  packet.flags = flags;
  oneQuestion.name = q.name;
  oneQuestion.type = typeName(q.qtype) as typeof oneQuestion.type;
  oneQuestion.class = className(q.qclass) as typeof oneQuestion.class;
  packet.answers = res.answer;
  packet.authorities = res.authority;
  packet.additionals = res.additional;
  fit.limit = limit;
  fit.opt = q.edns ? optRecord(q, res.rcode) : undefined;
  try {
    return encoder.encodePacket(packet, fit);
  } finally {
    // Hold no reply's records until the next one.
    packet.answers = none;
    packet.authorities = none;
    packet.additionals = none;
    fit.opt = undefined;
  }
}

/** A reply with no records: REFUSED, NOTIMP, BADVERS and friends, question echoed. */
export function encodeBare(q: ParsedQuery, rcode: number, aa = false, encoder: Encoder = sharedEncoder): Buffer {
  return encodeResponse(q, { rcode, aa, answer: [], authority: [], additional: [] }, Number.MAX_SAFE_INTEGER, encoder);
}

/**
 * FORMERR for a packet whose question could not be read: header only, ID and opcode echoed,
 * RD copied; with an OPT record when the problem involved one (RFC 6891 section 7).
 */
export function encodeFormerr(id: number, queryFlags: number, withOpt: boolean): Buffer {
  return encodeHeaderOnly(id, queryFlags, 1, withOpt);
}

/**
 * A header-only reply with `rcode` (FORMERR, or NOTIMP for an unknown opcode without a readable
 * question): QR set, ID and opcode echoed, RD copied, every other flag 0, no records but an
 * optional OPT.
 */
export function encodeHeaderOnly(id: number, queryFlags: number, rcode: number, withOpt = false): Buffer {
  const flags = 0x8000 | (queryFlags & 0x7800) | (queryFlags & 0x0100) | (rcode & 0xf);
  const size = withOpt ? 12 + 11 : 12;
  const out = Buffer.alloc(size);
  out.writeUInt16BE(id, 0);
  out.writeUInt16BE(flags, 2);
  if (withOpt) {
    out.writeUInt16BE(1, 10);
    // root name, type OPT, our payload size, extended rcode 0, version 0, flags 0, rdlen 0
    out.writeUInt8(0, 12);
    out.writeUInt16BE(41, 13);
    out.writeUInt16BE(OUR_UDP_SIZE, 15);
  }
  return out;
}
