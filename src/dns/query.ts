// Hand parser for incoming queries. It reads only what the server needs (header, the one
// question, the OPT record) and validates the rest strictly, so malformed packets get the
// RCODE README's "Protocol behaviour" table gives, without ever building dns-packet's object graph on the hot path.
import typesTable from 'dns-packet/types.js';
import { escapeLabel } from '../pkg/names.js';
import classesTable from 'dns-packet/classes.js';

const HEADER_SIZE = 12;

export interface ParsedQuery {
  id: number;
  /** Raw 16-bit flags word of the query. */
  flags: number;
  opcode: number;
  rd: boolean;
  /** Question name as sent, fully qualified with trailing dot ('.' for the root). */
  name: string;
  qtype: number;
  qclass: number;
  /** Offset just past the question: bytes 12..questionEnd identify the question exactly. */
  questionEnd: number;
  edns?: { udpSize: number; version: number; do: boolean };
  /** True when the query carries records we do not implement (TSIG, SIG(0)). */
  signed: boolean;
}

/** Why a packet could not be answered normally. */
export type QueryProblem =
  | { kind: 'drop' }
  | { kind: 'formerr'; id: number; flags: number; withOpt: boolean }
  | { kind: 'notimp'; query: ParsedQuery }
  /** An opcode we do not serve on a packet whose question cannot be read (QDCOUNT 0, say). */
  | { kind: 'notimp-header'; id: number; flags: number };

const OPT = 41;
const TSIG = 250;
const SIG = 24;

class Malformed extends Error {}

/**
 * The 16-bit big-endian value at `at`, which the caller has checked lies inside `buf`: Buffer's
 * readUInt16BE checks again and, called a dozen times a query, was not inlined.
 */
function u16(buf: Buffer, at: number): number {
  return (buf[at]! << 8) | buf[at + 1]!;
}

/** Scratch for the presentation form of a plain question name (at most 255 octets). */
const nameScratch = Buffer.allocUnsafe(256);

/**
 * Reads a name that may not use compression (the question is the first name of a packet). A
 * name whose bytes need no escaping (nearly all) is copied byte by byte, dots for the length
 * octets, in the same pass that validates it, and becomes one string: this runs for every
 * query that misses the answer cache, so it makes no string per label and calls nothing native
 * per label. Where the name ends is endOfName's.
 */
function readQuestionName(buf: Buffer, start: number): string {
  let offset = start;
  let total = 1;
  let plain = true;
  let w = 0;
  for (;;) {
    if (offset >= buf.length) throw new Malformed('name runs past the end of the packet');
    const len = buf[offset]!;
    if (len === 0) {
      offset += 1;
      break;
    }
    // A pointer in the first name can only point backwards into the header or at itself:
    // both are malformed (RFC 1035 4.1.4 pointers reference a prior occurrence of a name).
    if ((len & 0xc0) !== 0) throw new Malformed('compression pointer or extended label in the question');
    const end = offset + 1 + len;
    if (end > buf.length) throw new Malformed('label runs past the end of the packet');
    total += len + 1;
    if (total > 255) throw new Malformed('name longer than 255 octets');
    for (let i = offset + 1; i < end; i++) {
      const c = buf[i]!;
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) plain = false;
      nameScratch[w++] = c;
    }
    nameScratch[w++] = 0x2e;
    offset = end;
  }
  if (offset === start + 1) return '.';
  if (plain) return nameScratch.toString('latin1', 0, w);
  const labels: string[] = [];
  for (let at = start; buf[at] !== 0; at += 1 + buf[at]!) labels.push(escapeLabel(buf, at + 1, at + 1 + buf[at]!));
  return labels.join('.') + '.';
}

/**
 * Just past the root octet of the uncompressed name at `start`, which readQuestionName has read
 * (so it ends within the packet): a walk over a few length octets, instead of state kept between
 * the two calls or a result object per query.
 */
function endOfName(buf: Buffer, start: number): number {
  let at = start;
  while (buf[at] !== 0) at += 1 + buf[at]!;
  return at + 1;
}

/** Skips a possibly compressed name in a record section, validating pointers. */
function skipName(buf: Buffer, start: number): number {
  let offset = start;
  for (;;) {
    if (offset >= buf.length) throw new Malformed('name runs past the end of the packet');
    const len = buf[offset]!;
    if (len === 0) return offset + 1;
    if ((len & 0xc0) === 0xc0) {
      if (offset + 2 > buf.length) throw new Malformed('truncated compression pointer');
      const target = ((len & 0x3f) << 8) | buf[offset + 1]!;
      // Only backward pointers to an earlier name are legal; this also rules out loops.
      if (target >= offset || target < HEADER_SIZE) throw new Malformed('bad compression pointer');
      return offset + 2;
    }
    if ((len & 0xc0) !== 0) throw new Malformed('extended label type');
    offset += 1 + len;
  }
}

/**
 * Parses a query. Returns the query, or the problem that decides the reply:
 * drop (too short for a header, or QR=1), FORMERR, or NOTIMP for opcodes we do not serve (with
 * the question echoed when it can be read, header only otherwise).
 */
export function parseQuery(buf: Buffer): ParsedQuery | QueryProblem {
  if (buf.length < HEADER_SIZE) return { kind: 'drop' };
  const id = u16(buf, 0);
  const flags = u16(buf, 2);
  if (flags & 0x8000) return { kind: 'drop' };
  const opcode = (flags >> 11) & 0xf;
  const qdcount = u16(buf, 4);
  const ancount = u16(buf, 6);
  const nscount = u16(buf, 8);
  const arcount = u16(buf, 10);
  let withOpt = false;
  try {
    if (qdcount !== 1) throw new Malformed(`QDCOUNT ${qdcount}`);
    const name = readQuestionName(buf, HEADER_SIZE);
    const nameEnd = endOfName(buf, HEADER_SIZE);
    if (nameEnd + 4 > buf.length) throw new Malformed('question type/class missing');
    const qtype = (buf[nameEnd]! << 8) | buf[nameEnd + 1]!;
    const qclass = (buf[nameEnd + 2]! << 8) | buf[nameEnd + 3]!;
    const questionEnd = nameEnd + 4;
    let offset = questionEnd;
    let edns: ParsedQuery['edns'];
    let signed = false;
    const records = ancount + nscount + arcount;
    for (let i = 0; i < records; i++) {
      const inAdditional = i >= ancount + nscount;
      const nameStart = offset;
      offset = skipName(buf, offset);
      if (offset + 10 > buf.length) throw new Malformed('record header runs past the end');
      const type = u16(buf, offset);
      const rdlen = u16(buf, offset + 8);
      const rdata = offset + 10;
      if (rdata + rdlen > buf.length) throw new Malformed('record data runs past the end');
      if (type === OPT) {
        withOpt = true;
        // RFC 6891 6.1.1: one OPT, in the additional section, owned by the root.
        if (!inAdditional || edns || buf[nameStart] !== 0) throw new Malformed('misplaced or repeated OPT');
        let o = rdata;
        while (o < rdata + rdlen) {
          if (o + 4 > rdata + rdlen) throw new Malformed('truncated EDNS option');
          const optLen = u16(buf, o + 2);
          o += 4 + optLen;
          if (o > rdata + rdlen) throw new Malformed('EDNS option length past the OPT data');
        }
        edns = {
          udpSize: u16(buf, offset + 2),
          version: buf[offset + 5]!,
          do: (u16(buf, offset + 6) & 0x8000) !== 0,
        };
      } else if (type === TSIG || type === SIG) {
        signed = true;
      }
      offset = rdata + rdlen;
    }
    if (offset !== buf.length) throw new Malformed('bytes after the last record');
    const query: ParsedQuery = {
      id,
      flags,
      opcode,
      rd: (flags & 0x0100) !== 0,
      name,
      qtype,
      qclass,
      questionEnd,
      edns,
      signed,
    };
    if (opcode !== 0) return { kind: 'notimp', query };
    return query;
  } catch (err) {
    // The opcode decides before the question (RFC 1035 4.1.1, RFC 8906 8.1.4): a packet of an
    // opcode we do not implement gets NOTIMP whatever follows its header.
    if (err instanceof Malformed && opcode !== 0) return { kind: 'notimp-header', id, flags };
    if (err instanceof Malformed) return { kind: 'formerr', id, flags, withOpt };
    throw err;
  }
}

export function isProblem(q: ParsedQuery | QueryProblem): q is QueryProblem {
  return 'kind' in q;
}

/** dns-packet's name for a type code ('A', 'UNKNOWN_65280'), so names match its encoder. */
export function typeName(code: number): string {
  return typesTable.toString(code);
}

export function typeCode(name: string): number {
  return typesTable.toType(name);
}

export function className(code: number): string {
  return classesTable.toString(code);
}

/**
 * Where the answer cache finds a plain query, read from the raw bytes without building any
 * string: the end of the question and the reply shape (answerShape), packed as
 * `questionEnd + 512 * shape`; -1 for anything unusual (the full parser then decides).
 */
export function fastCacheSlot(buf: Buffer, tcp: boolean): number {
  const len = buf.length;
  if (len < HEADER_SIZE + 5) return -1;
  // QR=0, opcode QUERY; exactly one question, nothing but an optional OPT after it.
  if ((buf[2]! & 0xf8) !== 0) return -1;
  if (buf[4] !== 0 || buf[5] !== 1 || buf[6] !== 0 || buf[7] !== 0 || buf[8] !== 0 || buf[9] !== 0 || buf[10] !== 0) return -1;
  const arcount = buf[11]!;
  if (arcount > 1) return -1;
  let o = HEADER_SIZE;
  for (;;) {
    if (o >= len) return -1;
    const l = buf[o]!;
    if (l === 0) break;
    if (l > 63) return -1;
    o += l + 1;
  }
  if (o - HEADER_SIZE + 1 > 255) return -1;
  const questionEnd = o + 5;
  if (questionEnd > len) return -1;
  let ednsCode = 0;
  let limit = tcp ? 65535 : 512;
  if (arcount === 1) {
    // Root owner, type OPT, then fixed fields; version must be 0 and the options well formed.
    const r = questionEnd;
    if (r + 11 > len || buf[r] !== 0 || buf[r + 1] !== 0 || buf[r + 2] !== 41 || buf[r + 6] !== 0) return -1;
    const rdlen = u16(buf, r + 9);
    if (r + 11 + rdlen !== len) return -1;
    let opt = r + 11;
    while (opt < len) {
      if (opt + 4 > len) return -1;
      opt += 4 + u16(buf, opt + 2);
    }
    if (opt !== len) return -1;
    ednsCode = (buf[r + 7]! & 0x80) !== 0 ? 2 : 1;
    if (!tcp) limit = Math.min(1232, Math.max(512, u16(buf, r + 3)));
  } else if (questionEnd !== len) {
    return -1;
  }
  return questionEnd + 512 * (ednsCode * 65536 + limit);
}
