// The common replies, written straight into a buffer of their length: a plain question, A/AAAA
// answers owned by it, at most one SOA, an OPT without options. Byte for byte what the general
// writer (encode.ts) gives the same packet; anything else is left to it.
import typesTable from 'dns-packet/types.js';
import { isSubdomain } from '../pkg/names.js';
import { typeCode, type AnyRecord } from './encode-rdata.js';
import type { WireWriter } from './encode-writer.js';

/** A u32 field as encodePacket reads it (`v || 0`), or -1 where encodePacket would throw. */
function u32Value(v: number | undefined): number {
  const n = v || 0;
  return n >= 0 && n <= 0xffffffff && n === Math.floor(n) ? n : -1;
}

function putU32(out: Buffer, at: number, v: number): void {
  out[at] = v >>> 24;
  out[at + 1] = v >>> 16;
  out[at + 2] = v >>> 8;
  out[at + 3] = v;
}

/**
 * Writes a plain, fully qualified name other than the root as labels at `at`: name.length + 1
 * octets. False (part written) for a name the general writer treats otherwise: an escape or a
 * character past '~', an empty label or one over 63 octets.
 */
function putPlainName(out: Buffer, at: number, name: string): boolean {
  let lenAt = at;
  let p = at + 1;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 46) {
      const l = p - lenAt - 1;
      if (l === 0 || l > 63) return false;
      out[lenAt] = l;
      lenAt = p++;
    } else {
      if (c === 92 || c > 126) return false;
      out[p++] = c;
    }
  }
  out[lenAt] = 0;
  return true;
}

/** The last label of a plain fully qualified name's prefix `name[0, end)` (which ends in a dot). */
function lastLabel(name: string, end: number): string {
  let i = end - 2;
  while (i >= 0 && name.charCodeAt(i) !== 46) i--;
  return name.slice(i + 1, end - 1);
}

/**
 * An SOA record whose names the fast path can write: the owner Z a plain name, mname and rname
 * plain names below Z. `bytes` is the record after its owner (type to minimum), with the two
 * pointers to Z left for each reply to fill in at `mPtr` and `rPtr`; mname and rname are written
 * as their labels above Z and a pointer, which is what compression gives unless the question
 * ends in the label of mname or rname just above Z (then it finds a longer suffix there: the
 * general writer runs), or mname and rname end in the same label above Z (never fast).
 */
interface SoaShape {
  name: string;
  ttl: number | undefined;
  mname: string;
  rname: string;
  serial: number | undefined;
  refresh: number | undefined;
  retry: number | undefined;
  expire: number | undefined;
  minimum: number | undefined;
  bytes: Buffer;
  mPtr: number;
  rPtr: number;
  mLast: string;
  rLast: string;
}

interface SoaData {
  mname?: unknown;
  rname?: unknown;
  serial?: number;
  refresh?: number;
  retry?: number;
  expire?: number;
  minimum?: number;
}

/**
 * The last SOA written fast, kept by value (its fields, not the record object): plugins answer
 * from a few zones, so one SOA repeats reply after reply. One per Encoder.
 */
export interface SoaCache {
  last: SoaShape | undefined;
}

function sameSoa(s: SoaShape, r: AnyRecord, d: SoaData): boolean {
  return (
    s.name === r.name &&
    s.ttl === r.ttl &&
    s.mname === d.mname &&
    s.rname === d.rname &&
    s.serial === d.serial &&
    s.refresh === d.refresh &&
    s.retry === d.retry &&
    s.expire === d.expire &&
    s.minimum === d.minimum
  );
}

/** The SoaShape of r, or undefined when the fast path does not write it. */
function soaShapeOf(cache: SoaCache, r: AnyRecord): SoaShape | undefined {
  if (r.type !== 'SOA' || (r.class !== undefined && r.class !== 'IN') || r.flush) return undefined;
  const d = r.data as SoaData | undefined;
  if (d === null || typeof d !== 'object') return undefined;
  const s = cache.last;
  if (s !== undefined && sameSoa(s, r, d)) return s;
  const zone = r.name;
  const { mname, rname } = d;
  if (typeof zone !== 'string' || typeof mname !== 'string' || typeof rname !== 'string') return undefined;
  if (zone.length < 2 || zone.charCodeAt(zone.length - 1) !== 46 || zone.length + 1 > 255) return undefined;
  if (mname.length + 1 > 255 || rname.length + 1 > 255) return undefined;
  if (mname.length <= zone.length || rname.length <= zone.length || !isSubdomain(mname, zone) || !isSubdomain(rname, zone)) return undefined;
  const fields = [u32Value(r.ttl), u32Value(d.serial), u32Value(d.refresh), u32Value(d.retry), u32Value(d.expire), u32Value(d.minimum)];
  if (fields.includes(-1)) return undefined;
  const mLen = mname.length - zone.length;
  const rLen = rname.length - zone.length;
  const mLast = lastLabel(mname, mLen);
  const rLast = lastLabel(rname, rLen);
  if (mLast === rLast) return undefined;
  const rdlen = mLen + 2 + rLen + 2 + 20;
  const bytes = Buffer.alloc(10 + rdlen);
  bytes[1] = 6;
  bytes[3] = 1;
  putU32(bytes, 4, fields[0]!);
  bytes[8] = rdlen >>> 8;
  bytes[9] = rdlen;
  // The labels above the zone: the name's own labels up to the zone's, whose length octet
  // becomes the pointer's first octet.
  const scratch = Buffer.alloc(256);
  if (!putPlainName(scratch, 0, mname) || !putPlainName(scratch, mLen, zone)) return undefined;
  scratch.copy(bytes, 10, 0, mLen);
  const mPtr = 10 + mLen;
  if (!putPlainName(scratch, 0, rname) || !putPlainName(scratch, rLen, zone)) return undefined;
  scratch.copy(bytes, mPtr + 2, 0, rLen);
  const rPtr = mPtr + 2 + rLen;
  for (let i = 1; i < 6; i++) putU32(bytes, rPtr + 2 + 4 * (i - 1), fields[i]!);
  const shape: SoaShape = {
    name: zone,
    ttl: r.ttl,
    mname,
    rname,
    serial: d.serial,
    refresh: d.refresh,
    retry: d.retry,
    expire: d.expire,
    minimum: d.minimum,
    bytes,
    mPtr,
    rPtr,
    mLast,
    rLast,
  };
  cache.last = shape;
  return shape;
}

/** True when the label of `name` just above its suffix at `zoneAt` is `label`. */
function labelAbove(name: string, zoneAt: number, label: string): boolean {
  const start = zoneAt - 1 - label.length;
  return start >= 0 && (start === 0 || name.charCodeAt(start - 1) === 46) && name.startsWith(label, start);
}

/** Question types whose dns-packet name encodes back to the same code: 0 not known yet, 1 yes, 2 no. */
const typeKept = new Uint8Array(65536);

function questionTypeKept(code: number): boolean {
  if (!(code >= 0 && code <= 0xffff) || code !== Math.floor(code)) return false;
  let k = typeKept[code]!;
  if (k === 0) {
    k = typeCode(typesTable.toString(code)) === code ? 1 : 2;
    typeKept[code] = k;
  }
  return k === 1;
}

/** 16 for an A record and 28 for AAAA that the fast path writes (owner: the question name), else 0. */
function addressSize(r: AnyRecord, qname: string): number {
  if (r.name !== qname || (r.class !== undefined && r.class !== 'IN') || r.flush || typeof r.data !== 'string') return 0;
  if (u32Value(r.ttl) < 0) return 0;
  return r.type === 'A' ? 16 : r.type === 'AAAA' ? 28 : 0;
}

/**
 * The reply most queries get, written straight into a buffer of its length instead of through
 * the general writer and a copy: a plain question name, A/AAAA records owned by the question name
 * (each owner a pointer to it), at most one SOA in authority owned by a suffix of the question
 * name (SoaShape), nothing in additional, and an OPT record without options when `optSize` (its
 * UDP payload size) is not 0, `optTtl` its extended rcode, version and flags as one 32-bit word. The
 * question is `qname` with `qtype` and `qclass` as numbers. The bytes are what
 * encodePacket writes for the same packet with `{ limit }` (test/dns/encode.test.ts compares
 * them); undefined for any other reply or one over `limit`, for encodePacket to write.
 */
export function encodeSimple(
  w: WireWriter,
  soaCache: SoaCache,
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
  const qlen = qname.length;
  if (additionals.length > 0 || authorities.length > 1 || answers.length > 0xffff) return undefined;
  if (qlen < 2 || qlen + 1 > 255 || qname.charCodeAt(qlen - 1) !== 46 || qclass !== 1 || !questionTypeKept(qtype)) return undefined;
  if (!(id >= 0 && id <= 0xffff) || id !== Math.floor(id) || !(optSize >= 0 && optSize <= 0xffff)) return undefined;
  let size = 12 + qlen + 1 + 4;
  for (let i = 0; i < answers.length; i++) {
    const n = addressSize(answers[i] as AnyRecord, qname);
    if (n === 0) return undefined;
    size += n;
  }
  let soa: SoaShape | undefined;
  let zoneAt = 0;
  if (authorities.length === 1) {
    soa = soaShapeOf(soaCache, authorities[0] as AnyRecord);
    if (soa === undefined || !isSubdomain(qname, soa.name)) return undefined;
    zoneAt = qlen - soa.name.length;
    if (zoneAt > 0 && (labelAbove(qname, zoneAt, soa.mLast) || labelAbove(qname, zoneAt, soa.rLast))) return undefined;
    size += 2 + soa.bytes.length;
  }
  if (optSize !== 0) size += 11;
  if (size > limit) return undefined;
  const out = Buffer.allocUnsafe(size);
  out[0] = id >>> 8;
  out[1] = id;
  const f = (flags & 0x7fff) | 0x8000;
  out[2] = f >>> 8;
  out[3] = f;
  out[4] = 0;
  out[5] = 1;
  out[6] = answers.length >>> 8;
  out[7] = answers.length;
  out[8] = 0;
  out[9] = authorities.length;
  out[10] = 0;
  out[11] = optSize === 0 ? 0 : 1;
  if (!putPlainName(out, 12, qname)) return undefined;
  let p = 12 + qlen + 1;
  out[p] = qtype >>> 8;
  out[p + 1] = qtype;
  out[p + 2] = 0;
  out[p + 3] = 1;
  p += 4;
  for (let i = 0; i < answers.length; i++) {
    const r = answers[i] as AnyRecord;
    const v6 = r.type === 'AAAA';
    out[p] = 0xc0;
    out[p + 1] = 12;
    out[p + 2] = 0;
    out[p + 3] = v6 ? 28 : 1;
    out[p + 4] = 0;
    out[p + 5] = 1;
    putU32(out, p + 6, r.ttl || 0);
    out[p + 10] = 0;
    out[p + 11] = v6 ? 16 : 4;
    // The address writers' checks and errors: on a bad address the general writer throws them.
    w.pos = 0;
    try {
      if (v6) w.writeIPv6(r.data as string);
      else w.writeIPv4(r.data as string);
    } catch {
      return undefined;
    }
    const { buf, pos } = w;
    for (let j = 0; j < pos; j++) out[p + 12 + j] = buf[j]!;
    p += 12 + pos;
  }
  if (soa !== undefined) {
    const ptr = 0xc000 | (12 + zoneAt);
    out[p] = ptr >>> 8;
    out[p + 1] = ptr;
    p += 2;
    out.set(soa.bytes, p);
    out[p + soa.mPtr] = ptr >>> 8;
    out[p + soa.mPtr + 1] = ptr;
    out[p + soa.rPtr] = ptr >>> 8;
    out[p + soa.rPtr + 1] = ptr;
    p += soa.bytes.length;
  }
  if (optSize !== 0) {
    out[p] = 0;
    out[p + 1] = 0;
    out[p + 2] = 41;
    out[p + 3] = optSize >>> 8;
    out[p + 4] = optSize;
    putU32(out, p + 5, optTtl);
    out[p + 9] = 0;
    out[p + 10] = 0;
  }
  return out;
}
