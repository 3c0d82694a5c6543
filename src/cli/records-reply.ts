// The answer and additional sections of a reply, as dnsPacket.decode gives them, read directly for
// the records a cluster listing is made of (A, CNAME, PTR, SRV of class IN with ASCII names):
// `clusterdns records` decodes hundreds of thousands of replies, and dns-packet's general decoder
// was a sixth of its time. Other records are handed to dns-packet's own record decoder; a reply
// this reader cannot follow is decoded by dnsPacket.decode whole, so its errors stay dns-packet's.
import dnsPacket, { type Answer } from 'dns-packet';

export interface ReplySections {
  answers: Answer[];
  additionals: Answer[];
}

const A = 1;
const CNAME = 5;
const PTR = 12;
const SRV = 33;
const CLASS_IN = 1;
const FLUSH = 1 << 15;
/** dns-packet's limit on a decoded name (its label bytes plus one per label). */
const MAX_NAME = 254;

/** dns-packet's decoder of one resource record (not in its type declarations). */
const decodeRecord = (dnsPacket as unknown as { answer: { decode: ((buf: Buffer, offset: number) => Answer) & { bytes: number } } }).answer;

class Unusual extends Error {}

/** A name's presentation, built here and read out once: one string per name, not per label. */
const scratch = Buffer.alloc(MAX_NAME + 1);

/** A name at `offset` as dns-packet decodes it, and the bytes it takes there. */
function readName(buf: Buffer, start: number): { name: string; bytes: number } {
  let offset = start;
  let total = 0;
  let bytes = -1;
  let lowest = start; // pointers may only go backwards (dns-packet's rule)
  for (;;) {
    if (offset >= buf.length) throw new Unusual();
    const len = buf[offset]!;
    if (len === 0) {
      if (bytes < 0) bytes = offset + 1 - start;
      break;
    }
    if ((len & 0xc0) === 0xc0) {
      if (offset + 1 >= buf.length) throw new Unusual();
      const jump = ((len & 0x3f) << 8) | buf[offset + 1]!;
      if (jump >= lowest) throw new Unusual();
      if (bytes < 0) bytes = offset + 2 - start;
      offset = lowest = jump;
      continue;
    }
    if ((len & 0xc0) !== 0 || offset + 1 + len > buf.length) throw new Unusual();
    if (total + len + 1 > MAX_NAME) throw new Unusual();
    // Labels joined by dots, as dns-packet joins them; ASCII only, where latin1 and dns-packet's
    // UTF-8 read the same string.
    if (total > 0) scratch[total - 1] = 46;
    for (let i = 0; i < len; i++) {
      const b = buf[offset + 1 + i]!;
      if (b >= 0x80) throw new Unusual();
      scratch[total + i] = b;
    }
    total += len + 1;
    offset += len + 1;
  }
  return { name: total === 0 ? '.' : scratch.toString('latin1', 0, total - 1), bytes };
}

/** One record at `offset`; its length in `next.bytes`. */
function readRecord(buf: Buffer, offset: number, next: { bytes: number }): Answer {
  const owner = readName(buf, offset);
  const at = offset + owner.bytes;
  if (at + 10 > buf.length) throw new Unusual();
  const type = buf.readUInt16BE(at);
  const klass = buf.readUInt16BE(at + 2);
  if ((klass & ~FLUSH) !== CLASS_IN || (type !== A && type !== CNAME && type !== PTR && type !== SRV)) {
    const rr = decodeRecord.decode(buf, offset);
    next.bytes = decodeRecord.decode.bytes;
    return rr;
  }
  const ttl = buf.readUInt32BE(at + 4);
  const flush = (klass & FLUSH) !== 0;
  const rdata = at + 8; // the RDLENGTH field
  if (type === A) {
    if (rdata + 6 > buf.length) throw new Unusual();
    next.bytes = owner.bytes + 8 + 6;
    return { name: owner.name, type: 'A', ttl, class: 'IN', flush, data: `${buf[rdata + 2]}.${buf[rdata + 3]}.${buf[rdata + 4]}.${buf[rdata + 5]}` };
  }
  if (type === SRV) {
    if (rdata + 8 > buf.length) throw new Unusual();
    const len = buf.readUInt16BE(rdata);
    const data = {
      priority: buf.readUInt16BE(rdata + 2),
      weight: buf.readUInt16BE(rdata + 4),
      port: buf.readUInt16BE(rdata + 6),
      target: readName(buf, rdata + 8).name,
    };
    next.bytes = owner.bytes + 8 + len + 2;
    return { name: owner.name, type: 'SRV', ttl, class: 'IN', flush, data };
  }
  const target = readName(buf, rdata + 2);
  next.bytes = owner.bytes + 8 + target.bytes + 2;
  return { name: owner.name, type: type === PTR ? 'PTR' : 'CNAME', ttl, class: 'IN', flush, data: target.name };
}

function readSections(buf: Buffer): ReplySections {
  if (buf.length < 12) throw new Unusual();
  const counts = [buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)];
  let offset = 12;
  for (let q = buf.readUInt16BE(4); q > 0; q--) {
    offset += readName(buf, offset).bytes + 4;
    if (offset > buf.length) throw new Unusual();
  }
  const next = { bytes: 0 };
  const sections: Answer[][] = [];
  for (const count of counts) {
    const records: Answer[] = [];
    for (let i = 0; i < count; i++) {
      records.push(readRecord(buf, offset, next));
      offset += next.bytes;
    }
    sections.push(records);
  }
  return { answers: sections[0]!, additionals: sections[2]! };
}

/** The answers and additionals of `reply`, equal to dnsPacket.decode(reply)'s. */
export function replySections(reply: Buffer): ReplySections {
  try {
    return readSections(reply);
  } catch {
    const packet = dnsPacket.decode(reply);
    return { answers: packet.answers ?? [], additionals: packet.additionals ?? [] };
  }
}
