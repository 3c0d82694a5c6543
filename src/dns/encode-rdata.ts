// Records in wire form, written by a WireWriter: the header fields of each record, native RDATA
// for the types replies carry (A, AAAA, CNAME, DNAME, NS, PTR, MX, SRV, SOA, TXT, CAA and OPT),
// dns-packet's own encoder (uncompressed) for any other type, and sections cut to a budget.
import dnsPacket from 'dns-packet';
import typesTable from 'dns-packet/types.js';
import classesTable from 'dns-packet/classes.js';
import type { WireWriter } from './encode-writer.js';

/** The per-type encoders dns-packet exports but its type definitions leave out. */
interface RdataCodec {
  encode(data: unknown, buf: Buffer, offset: number): Buffer;
  encodingLength(data: unknown): number;
}
interface RdataEncode {
  bytes: number;
}
const dp = dnsPacket as unknown as {
  record(type: string): RdataCodec & { encode: RdataEncode };
  option: RdataCodec & { encode: RdataEncode };
};

export const TYPE_CODES = new Map<string, number>([
  ['A', 1],
  ['NS', 2],
  ['CNAME', 5],
  ['SOA', 6],
  ['PTR', 12],
  ['MX', 15],
  ['TXT', 16],
  ['AAAA', 28],
  ['SRV', 33],
  ['DNAME', 39],
  ['OPT', 41],
  ['CAA', 257],
]);

export function typeCode(type: string): number {
  return TYPE_CODES.get(type) ?? typesTable.toType(type);
}

export function classCode(klass: unknown): number {
  if (klass === undefined || klass === 'IN') return 1;
  if (typeof klass === 'number') return klass;
  return classesTable.toClass(String(klass));
}

export type AnyRecord = {
  name: string;
  type: string;
  class?: unknown;
  ttl?: number;
  flush?: boolean;
  data?: unknown;
  // OPT
  udpPayloadSize?: number;
  extendedRcode?: number;
  ednsVersion?: number;
  flags?: number;
  options?: unknown[];
};

export function writeCharString(w: WireWriter, b: Uint8Array): void {
  // Longer than 255 octets: split into 255-octet strings (dns-packet would corrupt the length).
  let off = 0;
  do {
    const n = Math.min(255, b.length - off);
    w.ensure(n + 1);
    w.buf[w.pos++] = n;
    w.buf.set(b.subarray(off, off + n), w.pos);
    w.pos += n;
    off += n;
  } while (off < b.length);
}

function txtPart(d: unknown): Uint8Array {
  if (typeof d === 'string') return Buffer.from(d);
  if (d instanceof Uint8Array) return d;
  throw new Error('TXT data must be a string, a Buffer or an array of them');
}

export function writeRdata(w: WireWriter, type: string, data: unknown): void {
  switch (type) {
    case 'A':
      w.writeIPv4(data as string);
      return;
    case 'AAAA':
      w.writeIPv6(data as string);
      return;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      w.writeName(data as string, true);
      return;
    case 'DNAME':
      w.writeName(data as string, false);
      return;
    case 'MX': {
      const d = data as { preference?: number; exchange: string };
      w.ensure(2);
      w.u16checked(d.preference || 0, 'MX preference');
      w.writeName(d.exchange, true);
      return;
    }
    case 'SRV': {
      const d = data as { priority?: number; weight?: number; port?: number; target: string };
      w.ensure(6);
      w.u16checked(d.priority || 0, 'SRV priority');
      w.u16checked(d.weight || 0, 'SRV weight');
      w.u16checked(d.port || 0, 'SRV port');
      w.writeName(d.target, false); // RFC 2782: the target is never compressed
      return;
    }
    case 'SOA': {
      const d = data as {
        mname: string;
        rname: string;
        serial?: number;
        refresh?: number;
        retry?: number;
        expire?: number;
        minimum?: number;
      };
      w.writeName(d.mname, true);
      w.writeName(d.rname, true);
      w.ensure(20);
      w.u32(d.serial || 0, 'SOA serial');
      w.u32(d.refresh || 0, 'SOA refresh');
      w.u32(d.retry || 0, 'SOA retry');
      w.u32(d.expire || 0, 'SOA expire');
      w.u32(d.minimum || 0, 'SOA minimum');
      return;
    }
    case 'TXT': {
      if (Array.isArray(data)) for (const d of data) writeCharString(w, txtPart(d));
      else writeCharString(w, txtPart(data));
      return;
    }
    case 'CAA': {
      const d = data as { issuerCritical?: boolean; flags?: number; tag: string; value: string };
      const tag = Buffer.from(d.tag);
      if (tag.length > 255) throw new Error('CAA tag longer than 255 octets');
      const value = Buffer.from(d.value);
      w.ensure(2 + tag.length + value.length);
      w.buf[w.pos++] = d.issuerCritical ? 128 : (d.flags || 0) & 0xff;
      w.buf[w.pos++] = tag.length;
      w.buf.set(tag, w.pos);
      w.pos += tag.length;
      w.buf.set(value, w.pos);
      w.pos += value.length;
      return;
    }
    default: {
      // dns-packet's own encoder for the type, rdlength included: step back over ours.
      const codec = dp.record(type);
      w.pos -= 2;
      w.ensure(codec.encodingLength(data));
      codec.encode(data, w.buf, w.pos);
      w.pos += codec.encode.bytes;
      return;
    }
  }
}

export function writeOpt(w: WireWriter, r: AnyRecord): void {
  if (r.name !== '.' && r.name !== '') throw new Error('OPT name must be root.');
  w.ensure(11);
  w.buf[w.pos++] = 0;
  w.u16(41);
  w.u16checked(r.udpPayloadSize || 4096, 'OPT UDP payload size');
  w.buf[w.pos++] = (r.extendedRcode || 0) & 0xff;
  w.buf[w.pos++] = (r.ednsVersion || 0) & 0xff;
  w.u16checked(r.flags || 0, 'OPT flags');
  const lenAt = w.pos;
  w.pos += 2;
  const options = r.options;
  if (options) {
    for (const o of options) {
      const opt = o as { code: number | string; data?: Uint8Array };
      if (typeof opt.code === 'number' && opt.data instanceof Uint8Array) {
        w.ensure(4 + opt.data.length);
        w.u16checked(opt.code, 'EDNS option code');
        w.u16(opt.data.length);
        w.buf.set(opt.data, w.pos);
        w.pos += opt.data.length;
      } else {
        w.ensure(dp.option.encodingLength(o));
        dp.option.encode(o, w.buf, w.pos);
        w.pos += dp.option.encode.bytes;
      }
    }
  }
  const rdlen = w.pos - lenAt - 2;
  if (rdlen > 0xffff) throw new Error('OPT RDATA longer than 65535 octets');
  w.buf[lenAt] = rdlen >>> 8;
  w.buf[lenAt + 1] = rdlen;
}

export function writeRecord(w: WireWriter, r: AnyRecord): void {
  let type = r.type;
  if (!TYPE_CODES.has(type)) type = type.toUpperCase();
  if (type === 'OPT') {
    writeOpt(w, r);
    return;
  }
  w.writeName(r.name, true);
  w.ensure(10);
  w.u16(typeCode(type));
  let klass = classCode(r.class);
  if (r.flush) klass |= 0x8000;
  w.u16(klass);
  w.u32(r.ttl || 0, 'TTL');
  const lenAt = w.pos;
  w.pos += 2;
  writeRdata(w, type, r.data);
  const rdlen = w.pos - lenAt - 2;
  if (rdlen > 0xffff) throw new Error(`${type} RDATA longer than 65535 octets`);
  w.buf[lenAt] = rdlen >>> 8;
  w.buf[lenAt + 1] = rdlen;
}

export function writeSection(w: WireWriter, list: readonly unknown[]): void {
  for (let i = 0; i < list.length; i++) writeRecord(w, list[i] as AnyRecord);
}

/**
 * Writes the records of `list` while the message stays within `budget` octets; returns how many
 * fit. The record that overflows is taken back; its compression entries point past the end,
 * which is harmless because nothing but a root-owned OPT is written after it.
 */
export function writeSectionWithin(w: WireWriter, list: readonly unknown[], budget: number, maxCount = 0xffff): number {
  // A section count is 16 bits: records past it are left out as records past the budget are.
  const n = Math.min(list.length, maxCount);
  for (let i = 0; i < n; i++) {
    const mark = w.pos;
    writeRecord(w, list[i] as AnyRecord);
    if (w.pos > budget) {
      w.pos = mark;
      return i;
    }
  }
  return n;
}
