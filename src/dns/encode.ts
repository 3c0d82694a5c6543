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
import dnsPacket from 'dns-packet';
import type { Packet } from 'dns-packet';
import typesTable from 'dns-packet/types.js';
import classesTable from 'dns-packet/classes.js';
import { isSubdomain, NameSyntaxError, presentationLabels, type NameProblem } from '../pkg/names.js';

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

const MAX_POINTER = 0x3fff;

// ---------------------------------------------------------------------------------------------
// Output state. encodePacket is synchronous, so one scratch buffer serves every call.

let buf: Buffer = Buffer.allocUnsafe(4096);
let pos = 0;
const comp = new Map<string, number>();

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  let size = buf.length * 2;
  while (size < pos + n) size *= 2;
  const next = Buffer.allocUnsafe(size);
  buf.copy(next, 0, 0, pos);
  buf = next;
}

function u16(v: number): void {
  buf[pos] = v >>> 8;
  buf[pos + 1] = v;
  pos += 2;
}

function u16checked(v: number, what: string): void {
  if (!(v >= 0 && v <= 0xffff) || v !== Math.floor(v)) throw new Error(`${what} out of range: ${v}`);
  u16(v);
}

function u32(v: number, what: string): void {
  if (!(v >= 0 && v <= 0xffffffff) || v !== Math.floor(v)) throw new Error(`${what} out of range: ${v}`);
  buf[pos] = v >>> 24;
  buf[pos + 1] = v >>> 16;
  buf[pos + 2] = v >>> 8;
  buf[pos + 3] = v;
  pos += 4;
}

// ---------------------------------------------------------------------------------------------
// Names

function badName(name: string, why: string): Error {
  return new Error(`cannot encode name ${JSON.stringify(name)}: ${why}`);
}

// Compression targets, in two forms. While a reply has named few names, all plain (nearly every
// reply: the question, an answer owner, an SOA), the names written so far are kept as they are,
// in order, with how much of each was written as labels, and a lookup compares the suffix
// against each of them in place: no key string is sliced and no table entry made. A written
// name's suffix that starts at string index s is at wire offset pos + s (each dot becomes the
// next label's length octet), and the first name holding a suffix is its earliest occurrence,
// which is what the table would have kept. Past LISTED_MAX names, or at the first name that needs
// the slow path (escapes, non-ASCII), every listed suffix goes into `comp` in the same order and
// from then on only `comp` is used (`eager`).
//
// What `comp` then holds is what it held when it was the only table: the suffixes of every name
// but the first, and of the first only the whole name, its suffixes found by comparing with it
// after the table (`pending`). Only a slow-path name that comes while the first is still the only
// name enters them all; one that comes later does not see them and writes them again, and
// later names point there, as they always did.
const LISTED_MAX = 16;
const listedName: string[] = new Array<string>(LISTED_MAX).fill('');
/** Index in the name just past its last label (its trailing dot excluded). */
const listedEnd = new Int32Array(LISTED_MAX);
/** Wire offset of the name's first octet. */
const listedPos = new Int32Array(LISTED_MAX);
/** Index in the name of the first label not written as labels (a pointer, or a target found earlier). */
const listedLit = new Int32Array(LISTED_MAX);
let listed = 0;
let eager = false;
/** A name other than the first has been written (then the first's suffixes stay out of `comp`). */
let second = false;
/** In `eager` mode, the first name as a target looked up after `comp` (pendingSuffix). */
let pendingAlive = false;
let pendingWhole = '';
let pendingPos = 0;

/** Where the suffix `key` of the first name was written, or undefined. */
function pendingSuffix(key: string): number | undefined {
  const off = pendingWhole.length - key.length;
  if (off < 0 || !pendingWhole.endsWith(key)) return undefined;
  if (off > 0 && pendingWhole.charCodeAt(off - 1) !== 46) return undefined;
  const ptr = pendingPos + off;
  return ptr <= MAX_POINTER ? ptr : undefined;
}

/** Where the suffix name[start, end) of a listed name was written as labels, or -1. */
function findListed(name: string, start: number, end: number): number {
  const len = end - start;
  for (let i = 0; i < listed; i++) {
    const s = listedEnd[i]! - len;
    if (s < 0 || s >= listedLit[i]!) continue;
    const other = listedName[i]!;
    if (s > 0 && other.charCodeAt(s - 1) !== 46) continue;
    const ptr = listedPos[i]! + s;
    if (ptr > MAX_POINTER) continue;
    let j = 0;
    while (j < len && other.charCodeAt(s + j) === name.charCodeAt(start + j)) j++;
    if (j === len) return ptr;
  }
  return -1;
}

/** Moves the listed names' suffixes into `comp`, earliest first; `comp` alone serves from now. */
function flushListed(): void {
  eager = true;
  for (let i = 0; i < listed; i++) {
    const name = listedName[i]!;
    const end = listedEnd[i]!;
    const lit = listedLit[i]!;
    const at = listedPos[i]!;
    if (i === 0 && second) {
      pendingWhole = name.length === end + 1 ? name : name.slice(0, end) + '.';
      pendingPos = at;
      pendingAlive = true;
      comp.set(pendingWhole, at);
      listedName[i] = '';
      continue;
    }
    for (let start = 0; start < lit && at + start <= MAX_POINTER; ) {
      const key = start === 0 && name.length === end + 1 ? name : name.slice(start, end) + '.';
      if (!comp.has(key)) comp.set(key, at + start);
      const dot = name.indexOf('.', start);
      if (dot === -1 || dot >= end) break;
      start = dot + 1;
    }
    listedName[i] = '';
  }
  listed = 0;
}

/** Writes the plain label of name that starts at `start` (ending at a dot or `end`); returns where the next one starts. */
function writeLabel(name: string, start: number, end: number): number {
  let dot = name.indexOf('.', start);
  if (dot === -1 || dot > end) dot = end;
  const labelLen = dot - start;
  if (labelLen === 0) throw badName(name, 'empty label');
  if (labelLen > 63) throw badName(name, 'label longer than 63 octets');
  // Locals in the loop: `buf` and `pos` are module bindings, a load and a store per use.
  const b = buf;
  let p = pos;
  b[p++] = labelLen;
  for (let i = start; i < dot; i++) b[p++] = name.charCodeAt(i);
  pos = p;
  return dot + 1;
}

/** Writes the labels of plain name[0, end) and the root octet, without compression. */
function writeLabels(name: string, end: number): void {
  for (let start = 0; start < end; ) start = writeLabel(name, start, end);
  buf[pos++] = 0;
}

function writePointer(ptr: number): void {
  buf[pos] = 0xc0 | (ptr >>> 8);
  buf[pos + 1] = ptr;
  pos += 2;
}

/**
 * Writes `name`, replacing its longest already-written suffix with a pointer when `compress`,
 * and remembering its own suffixes as pointer targets either way.
 */
function writeName(name: string, compress: boolean): void {
  const len = name.length;
  if (len === 0 || (len === 1 && name.charCodeAt(0) === 46)) {
    ensure(1);
    buf[pos++] = 0;
    return;
  }
  // Fast path: plain ASCII without escapes, where each character is one octet and every dot
  // separates labels. The suffix itself (always with trailing dot) is its compression key.
  for (let i = 0; i < len; i++) {
    const c = name.charCodeAt(i);
    if (c === 92 || c > 126) {
      writeNameSlow(name, compress);
      return;
    }
  }
  const fq = name.charCodeAt(len - 1) === 46;
  const end = fq ? len - 1 : len; // end of the last label
  if (end + 2 > 255) throw badName(name, 'longer than 255 octets');
  ensure(end + 2);
  if (!eager) {
    if (listed === LISTED_MAX) {
      flushListed();
    } else {
      // The longest suffix already written, looked up from the left (the whole name first).
      // With nothing written yet (the question) there is nothing to find.
      let start = listed === 0 ? end : 0;
      let ptr = -1;
      while (start < end) {
        ptr = findListed(name, start, end);
        if (ptr >= 0) break;
        const dot = name.indexOf('.', start);
        start = dot === -1 || dot > end ? end : dot + 1;
      }
      if (listed > 0 && !(start === 0 && ptr === listedPos[0])) second = true;
      const at = pos;
      if (ptr >= 0 && compress) {
        for (let l = 0; l < start; ) l = writeLabel(name, l, end);
        writePointer(ptr);
      } else {
        writeLabels(name, end);
      }
      // Only what was written as labels before the first earlier target is a new target.
      if (start > 0) {
        listedName[listed] = name;
        listedEnd[listed] = end;
        listedPos[listed] = at;
        listedLit[listed] = start;
        listed++;
      }
      return;
    }
  }
  let start = 0;
  while (start < end) {
    const key = fq ? (start === 0 ? name : name.slice(start)) : name.slice(start) + '.';
    let ptr = comp.get(key);
    if (ptr === undefined && pendingAlive) ptr = pendingSuffix(key);
    if (ptr !== undefined) {
      if (compress) {
        writePointer(ptr);
        return;
      }
    } else if (pos <= MAX_POINTER) {
      comp.set(key, pos);
    }
    start = writeLabel(name, start, end);
  }
  buf[pos++] = 0;
}

/** How the encoder words each problem of a name it cannot write. */
const NAME_PROBLEM: Record<NameProblem, string> = {
  'empty label': 'empty label',
  'lone backslash': 'ends in a lone backslash',
  'short escape': 'bad \\DDD escape',
  'escape over 255': 'bad \\DDD escape',
  'label too long': 'label longer than 63 octets',
  'name too long': 'longer than 255 octets',
};

/** Labels of a presentation-form name as octets; [] for the root (pkg/names presentationLabels). */
export function parseName(name: string): Uint8Array[] {
  try {
    return presentationLabels(name, true).labels;
  } catch (err) {
    if (err instanceof NameSyntaxError) throw badName(name, NAME_PROBLEM[err.problem]);
    throw err;
  }
}

/** Compression key of a label sequence: octets as latin1 characters, `.` and `\` escaped. */
function labelKey(label: Uint8Array): string {
  let s = '';
  for (const b of label) s += b === 46 ? '\\.' : b === 92 ? '\\\\' : String.fromCharCode(b);
  return s;
}

function writeNameSlow(name: string, compress: boolean): void {
  const labels = parseName(name);
  if (!eager) flushListed();
  let wire = 1;
  for (const l of labels) wire += l.length + 1;
  ensure(wire);
  // keys[i] spells the suffix starting at label i, in the same form the fast path uses.
  const keys: string[] = new Array<string>(labels.length);
  let acc = '.';
  for (let i = labels.length - 1; i >= 0; i--) {
    acc = labelKey(labels[i]!) + (acc === '.' ? '.' : '.' + acc);
    keys[i] = acc;
  }
  for (let i = 0; i < labels.length; i++) {
    const key = keys[i]!;
    const ptr = comp.get(key);
    if (ptr !== undefined) {
      if (compress) {
        buf[pos] = 0xc0 | (ptr >>> 8);
        buf[pos + 1] = ptr;
        pos += 2;
        return;
      }
    } else if (pos <= MAX_POINTER) {
      comp.set(key, pos);
    }
    const label = labels[i]!;
    buf[pos++] = label.length;
    buf.set(label, pos);
    pos += label.length;
  }
  buf[pos++] = 0;
}

// ---------------------------------------------------------------------------------------------
// Addresses

function writeIPv4(s: string): void {
  ensure(4);
  let part = 0;
  let val = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46;
    if (c === 46) {
      if (digits === 0 || val > 255 || part > 3) throw new Error(`invalid IPv4 address: ${s}`);
      buf[pos + part++] = val;
      val = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      val = val * 10 + (c - 48);
      digits++;
    } else {
      throw new Error(`invalid IPv4 address: ${s}`);
    }
  }
  if (part !== 4) throw new Error(`invalid IPv4 address: ${s}`);
  pos += 4;
}

function hexGroup(g: string, s: string): number {
  if (g.length === 0 || g.length > 4) throw new Error(`invalid IPv6 address: ${s}`);
  let v = 0;
  for (let i = 0; i < g.length; i++) {
    const c = g.charCodeAt(i);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 97 && c <= 102) d = c - 87;
    else if (c >= 65 && c <= 70) d = c - 55;
    else throw new Error(`invalid IPv6 address: ${s}`);
    v = (v << 4) | d;
  }
  return v;
}

/** The 16-bit groups of one side of `::`, an embedded IPv4 tail counting as two. */
function v6Groups(side: string, s: string, allowV4: boolean): number[] {
  if (side === '') return [];
  const parts = side.split(':');
  const out: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (allowV4 && i === parts.length - 1 && p.includes('.')) {
      const save = pos;
      ensure(4);
      writeIPv4(p);
      out.push((buf[save]! << 8) | buf[save + 1]!, (buf[save + 2]! << 8) | buf[save + 3]!);
      pos = save;
    } else {
      out.push(hexGroup(p, s));
    }
  }
  return out;
}

function writeIPv6(s: string): void {
  const dbl = s.indexOf('::');
  let groups: number[];
  if (dbl === -1) {
    groups = v6Groups(s, s, true);
    if (groups.length !== 8) throw new Error(`invalid IPv6 address: ${s}`);
  } else {
    if (s.indexOf('::', dbl + 1) !== -1) throw new Error(`invalid IPv6 address: ${s}`);
    const head = v6Groups(s.slice(0, dbl), s, false);
    const tail = v6Groups(s.slice(dbl + 2), s, true);
    const fill = 8 - head.length - tail.length;
    if (fill < 1) throw new Error(`invalid IPv6 address: ${s}`);
    groups = head;
    for (let i = 0; i < fill; i++) groups.push(0);
    for (const g of tail) groups.push(g);
  }
  ensure(16);
  for (const g of groups) u16(g);
}

// ---------------------------------------------------------------------------------------------
// Records

const TYPE_CODES = new Map<string, number>([
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

function typeCode(type: string): number {
  return TYPE_CODES.get(type) ?? typesTable.toType(type);
}

function classCode(klass: unknown): number {
  if (klass === undefined || klass === 'IN') return 1;
  if (typeof klass === 'number') return klass;
  return classesTable.toClass(String(klass));
}

type AnyRecord = {
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

function writeCharString(b: Uint8Array): void {
  // Longer than 255 octets: split into 255-octet strings (dns-packet would corrupt the length).
  let off = 0;
  do {
    const n = Math.min(255, b.length - off);
    ensure(n + 1);
    buf[pos++] = n;
    buf.set(b.subarray(off, off + n), pos);
    pos += n;
    off += n;
  } while (off < b.length);
}

function txtPart(d: unknown): Uint8Array {
  if (typeof d === 'string') return Buffer.from(d);
  if (d instanceof Uint8Array) return d;
  throw new Error('TXT data must be a string, a Buffer or an array of them');
}

function writeRdata(type: string, data: unknown): void {
  switch (type) {
    case 'A':
      writeIPv4(data as string);
      return;
    case 'AAAA':
      writeIPv6(data as string);
      return;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      writeName(data as string, true);
      return;
    case 'DNAME':
      writeName(data as string, false);
      return;
    case 'MX': {
      const d = data as { preference?: number; exchange: string };
      ensure(2);
      u16checked(d.preference || 0, 'MX preference');
      writeName(d.exchange, true);
      return;
    }
    case 'SRV': {
      const d = data as { priority?: number; weight?: number; port?: number; target: string };
      ensure(6);
      u16checked(d.priority || 0, 'SRV priority');
      u16checked(d.weight || 0, 'SRV weight');
      u16checked(d.port || 0, 'SRV port');
      writeName(d.target, false); // RFC 2782: the target is never compressed
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
      writeName(d.mname, true);
      writeName(d.rname, true);
      ensure(20);
      u32(d.serial || 0, 'SOA serial');
      u32(d.refresh || 0, 'SOA refresh');
      u32(d.retry || 0, 'SOA retry');
      u32(d.expire || 0, 'SOA expire');
      u32(d.minimum || 0, 'SOA minimum');
      return;
    }
    case 'TXT': {
      if (Array.isArray(data)) for (const d of data) writeCharString(txtPart(d));
      else writeCharString(txtPart(data));
      return;
    }
    case 'CAA': {
      const d = data as { issuerCritical?: boolean; flags?: number; tag: string; value: string };
      const tag = Buffer.from(d.tag);
      if (tag.length > 255) throw new Error('CAA tag longer than 255 octets');
      const value = Buffer.from(d.value);
      ensure(2 + tag.length + value.length);
      buf[pos++] = d.issuerCritical ? 128 : (d.flags || 0) & 0xff;
      buf[pos++] = tag.length;
      buf.set(tag, pos);
      pos += tag.length;
      buf.set(value, pos);
      pos += value.length;
      return;
    }
    default: {
      // dns-packet's own encoder for the type, rdlength included: step back over ours.
      const codec = dp.record(type);
      pos -= 2;
      ensure(codec.encodingLength(data));
      codec.encode(data, buf, pos);
      pos += codec.encode.bytes;
      return;
    }
  }
}

function writeOpt(r: AnyRecord): void {
  if (r.name !== '.' && r.name !== '') throw new Error('OPT name must be root.');
  ensure(11);
  buf[pos++] = 0;
  u16(41);
  u16checked(r.udpPayloadSize || 4096, 'OPT UDP payload size');
  buf[pos++] = (r.extendedRcode || 0) & 0xff;
  buf[pos++] = (r.ednsVersion || 0) & 0xff;
  u16checked(r.flags || 0, 'OPT flags');
  const lenAt = pos;
  pos += 2;
  const options = r.options;
  if (options) {
    for (const o of options) {
      const opt = o as { code: number | string; data?: Uint8Array };
      if (typeof opt.code === 'number' && opt.data instanceof Uint8Array) {
        ensure(4 + opt.data.length);
        u16checked(opt.code, 'EDNS option code');
        u16(opt.data.length);
        buf.set(opt.data, pos);
        pos += opt.data.length;
      } else {
        ensure(dp.option.encodingLength(o));
        dp.option.encode(o, buf, pos);
        pos += dp.option.encode.bytes;
      }
    }
  }
  const rdlen = pos - lenAt - 2;
  if (rdlen > 0xffff) throw new Error('OPT RDATA longer than 65535 octets');
  buf[lenAt] = rdlen >>> 8;
  buf[lenAt + 1] = rdlen;
}

function writeRecord(r: AnyRecord): void {
  let type = r.type;
  if (!TYPE_CODES.has(type)) type = type.toUpperCase();
  if (type === 'OPT') {
    writeOpt(r);
    return;
  }
  writeName(r.name, true);
  ensure(10);
  u16(typeCode(type));
  let klass = classCode(r.class);
  if (r.flush) klass |= 0x8000;
  u16(klass);
  u32(r.ttl || 0, 'TTL');
  const lenAt = pos;
  pos += 2;
  writeRdata(type, r.data);
  const rdlen = pos - lenAt - 2;
  if (rdlen > 0xffff) throw new Error(`${type} RDATA longer than 65535 octets`);
  buf[lenAt] = rdlen >>> 8;
  buf[lenAt + 1] = rdlen;
}

function writeSection(list: readonly unknown[]): void {
  for (let i = 0; i < list.length; i++) writeRecord(list[i] as AnyRecord);
}

/**
 * Writes the records of `list` while the message stays within `budget` octets; returns how many
 * fit. The record that overflows is taken back; its compression entries point past the end,
 * which is harmless because nothing but a root-owned OPT is written after it.
 */
function writeSectionWithin(list: readonly unknown[], budget: number, maxCount = 0xffff): number {
  // A section count is 16 bits: records past it are left out as records past the budget are.
  const n = Math.min(list.length, maxCount);
  for (let i = 0; i < n; i++) {
    const mark = pos;
    writeRecord(list[i] as AnyRecord);
    if (pos > budget) {
      pos = mark;
      return i;
    }
  }
  return n;
}

/** How a reply too large for its transport is cut down (what miekg/dns `Msg.Truncate` does). */
export interface FitOptions {
  /** The largest message allowed, in octets (at least 512 is assumed by callers). */
  limit: number;
  /** The OPT record, written last and always kept: its size comes off the budget first. */
  opt?: unknown;
}

/**
 * Encodes a packet given in dns-packet's shapes, with name compression. The result is a fresh
 * Buffer of exactly the message's length.
 *
 * With `fit`, a message over `fit.limit` keeps the question and OPT and as many records as fit,
 * in section order: answer records first, then authority, then additional, every name
 * compressed; the first record that does not fit ends the message, and TC is set when any
 * record was left out.
 */
export function encodePacket(p: Packet, fit?: FitOptions): Buffer {
  const questions = p.questions ?? [];
  const answers = p.answers ?? [];
  const authorities = p.authorities ?? [];
  const additionals = p.additionals ?? [];
  pos = 0;
  eager = false;
  second = false;
  pendingAlive = false;
  listed = 0;
  try {
    ensure(12);
    u16checked(p.id || 0, 'ID');
    u16(((p.flags || 0) & 0x7fff) | (p.type === 'response' ? 0x8000 : 0));
    u16checked(questions.length, 'QDCOUNT');
    // With `fit`, a section over 65,535 records is truncated below and the counts rewritten.
    u16checked(fit ? Math.min(answers.length, 0xffff) : answers.length, 'ANCOUNT');
    u16checked(fit ? Math.min(authorities.length, 0xffff) : authorities.length, 'NSCOUNT');
    u16checked(fit ? Math.min(additionals.length + (fit.opt ? 1 : 0), 0xffff) : additionals.length, 'ARCOUNT');
    for (const q of questions) {
      writeName(q.name, true);
      ensure(4);
      u16(typeCode(q.type));
      u16(classCode(q.class));
    }
    if (!fit) {
      writeSection(answers);
      writeSection(authorities);
      writeSection(additionals);
    } else {
      // The OPT record's owner is the root, so its size does not depend on compression.
      let optSize = 0;
      if (fit.opt) {
        const at = pos;
        writeRecord(fit.opt as AnyRecord);
        optSize = pos - at;
        pos = at;
      }
      const budget = fit.limit - optSize;
      const an = writeSectionWithin(answers, budget);
      const ns = an === answers.length ? writeSectionWithin(authorities, budget) : 0;
      const ar = ns === authorities.length && an === answers.length ? writeSectionWithin(additionals, budget, fit.opt ? 0xfffe : 0xffff) : 0;
      if (fit.opt) writeRecord(fit.opt as AnyRecord);
      if (an < answers.length || ns < authorities.length || ar < additionals.length) {
        buf[2] = buf[2]! | 0x02; // TC
        buf.writeUInt16BE(an, 6);
        buf.writeUInt16BE(ns, 8);
        buf.writeUInt16BE(ar + (fit.opt ? 1 : 0), 10);
      }
    }
    const out = Buffer.allocUnsafe(pos);
    buf.copy(out, 0, 0, pos);
    return out;
  } finally {
    // Map.clear allocates a new table even when empty; most replies enter nothing.
    if (comp.size > 0) comp.clear();
    // Names of this reply are not kept alive until the next one.
    for (let i = 0; i < listed; i++) listedName[i] = '';
    listed = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// The common replies, written straight into a buffer of their length

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
 * from a few zones, so one SOA repeats reply after reply.
 */
let soaShape: SoaShape | undefined;

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
function soaShapeOf(r: AnyRecord): SoaShape | undefined {
  if (r.type !== 'SOA' || (r.class !== undefined && r.class !== 'IN') || r.flush) return undefined;
  const d = r.data as SoaData | undefined;
  if (d === null || typeof d !== 'object') return undefined;
  const s = soaShape;
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
  soaShape = {
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
  return soaShape;
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
    soa = soaShapeOf(authorities[0] as AnyRecord);
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
    pos = 0;
    try {
      if (v6) writeIPv6(r.data as string);
      else writeIPv4(r.data as string);
    } catch {
      return undefined;
    }
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
