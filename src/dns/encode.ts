// Wire encoder for replies: a drop-in replacement for dnsPacket.encode() that takes the same
// packet shapes but compresses names (RFC 1035 4.1.4) and writes in one pass.
//
// Compression follows miekg/dns (what CoreDNS sends):
//  - suffixes match CASE-SENSITIVELY: a name only points at an earlier occurrence spelled
//    identically, so every name keeps the spelling it was given (0x20 clients check the
//    question's case in the answer);
//  - compressed: the question name, every owner name, and the RDATA names RFC 3597 section 4
//    allows: CNAME, NS, PTR, MX exchange, SOA mname and rname;
//  - not compressed, but remembered as targets for later names: SRV targets (RFC 2782) and DNAME;
//  - pointers only to offsets below 0x4000; the root name is never replaced by a pointer.
//
// Names may be given with or without the trailing dot ('.' or '' is the root) in presentation
// form: `\.`, `\\` and `\DDD` escapes are understood (the query parser writes names that way),
// other characters are written as UTF-8. Labels over 63 octets, names over 255 octets and empty
// labels throw.
//
// RDATA of A, AAAA, CNAME, DNAME, NS, PTR, MX, SRV, SOA, TXT, CAA and OPT is written natively;
// any other type is handed to dns-packet's own encoder for that type (uncompressed).
//
// The parts: encode-writer.ts (the scratch buffer, octets, names, addresses), encode-rdata.ts
// (records and sections), encode-simple.ts (the common replies written straight to their bytes).
import type { Packet } from 'dns-packet';
import { WireWriter } from './encode-writer.js';
import { classCode, typeCode, writeRecord, writeSection, writeSectionWithin, type AnyRecord } from './encode-rdata.js';
import { encodeSimple as encodeSimpleWith, type SoaCache } from './encode-simple.js';

export { parseName } from './encode-writer.js';

/** How a reply too large for its transport is cut down (what miekg/dns `Msg.Truncate` does). */
export interface FitOptions {
  /** The largest message allowed, in octets (at least 512 is assumed by callers). */
  limit: number;
  /** The OPT record, written last and always kept: its size comes off the budget first. */
  opt?: unknown;
}

/**
 * One encoder's scratch: the output buffer, the compression targets, the last SOA written fast.
 * Encoding is synchronous, so one Encoder serves every reply of whoever holds it (each listener
 * of an App has one); two Encoders share nothing.
 */
export class Encoder {
  private readonly w = new WireWriter();
  private readonly soa: SoaCache = { last: undefined };

  /**
   * Encodes a packet given in dns-packet's shapes, with name compression. The result is a fresh
   * Buffer of exactly the message's length.
   *
   * With `fit`, a message over `fit.limit` keeps the question and OPT and as many records as fit,
   * in section order: answer records first, then authority, then additional, every name
   * compressed; the first record that does not fit ends the message, and TC is set when any
   * record was left out.
   */
  encodePacket(p: Packet, fit?: FitOptions): Buffer {
    const questions = p.questions ?? [];
    const answers = p.answers ?? [];
    const authorities = p.authorities ?? [];
    const additionals = p.additionals ?? [];
    const w = this.w;
    w.reset();
    try {
      w.ensure(12);
      w.u16checked(p.id || 0, 'ID');
      w.u16(((p.flags || 0) & 0x7fff) | (p.type === 'response' ? 0x8000 : 0));
      w.u16checked(questions.length, 'QDCOUNT');
      // With `fit`, a section over 65,535 records is truncated below and the counts rewritten.
      w.u16checked(fit ? Math.min(answers.length, 0xffff) : answers.length, 'ANCOUNT');
      w.u16checked(fit ? Math.min(authorities.length, 0xffff) : authorities.length, 'NSCOUNT');
      w.u16checked(fit ? Math.min(additionals.length + (fit.opt ? 1 : 0), 0xffff) : additionals.length, 'ARCOUNT');
      for (const q of questions) {
        w.writeName(q.name, true);
        w.ensure(4);
        w.u16(typeCode(q.type));
        w.u16(classCode(q.class));
      }
      if (!fit) {
        writeSection(w, answers);
        writeSection(w, authorities);
        writeSection(w, additionals);
      } else {
        // The OPT record's owner is the root, so its size does not depend on compression.
        let optSize = 0;
        if (fit.opt) {
          const at = w.pos;
          writeRecord(w, fit.opt as AnyRecord);
          optSize = w.pos - at;
          w.pos = at;
        }
        const budget = fit.limit - optSize;
        const an = writeSectionWithin(w, answers, budget);
        const ns = an === answers.length ? writeSectionWithin(w, authorities, budget) : 0;
        const ar = ns === authorities.length && an === answers.length ? writeSectionWithin(w, additionals, budget, fit.opt ? 0xfffe : 0xffff) : 0;
        if (fit.opt) writeRecord(w, fit.opt as AnyRecord);
        if (an < answers.length || ns < authorities.length || ar < additionals.length) {
          w.buf[2] = w.buf[2]! | 0x02; // TC
          w.buf.writeUInt16BE(an, 6);
          w.buf.writeUInt16BE(ns, 8);
          w.buf.writeUInt16BE(ar + (fit.opt ? 1 : 0), 10);
        }
      }
      const out = Buffer.allocUnsafe(w.pos);
      w.buf.copy(out, 0, 0, w.pos);
      return out;
    } finally {
      w.forget();
    }
  }

  /**
   * The reply most queries get, written straight into a buffer of its length (encode-simple.ts),
   * or undefined for encodePacket to write: the same bytes encodePacket writes with `{ limit }`.
   */
  encodeSimple(
    id: number,
    flags: number,
    qname: string,
    qtype: number,
    qclass: number,
    answers: readonly unknown[],
    authorities: readonly unknown[],
    additionals: readonly unknown[],
    optSize: number,
    optTtl: number,
    limit: number,
  ): Buffer | undefined {
    return encodeSimpleWith(this.w, this.soa, id, flags, qname, qtype, qclass, answers, authorities, additionals, optSize, optTtl, limit);
  }
}

/**
 * The encoder of code that has no App's listener to hand it one: queries the forward plugin and
 * its health checks send, tools and tests. Replies to clients use their listener's Encoder.
 */
export const sharedEncoder = new Encoder();

/** Encoder.encodePacket on the shared encoder (see sharedEncoder). */
export function encodePacket(p: Packet, fit?: FitOptions): Buffer {
  return sharedEncoder.encodePacket(p, fit);
}

/** Encoder.encodeSimple on the shared encoder (see sharedEncoder). */
export function encodeSimple(...args: Parameters<Encoder['encodeSimple']>): Buffer | undefined {
  return sharedEncoder.encodeSimple(...args);
}
