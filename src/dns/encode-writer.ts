// The encoder's output state: one growing scratch buffer, the write position, and the names
// written so far as compression targets, with the primitives that write octets, names (RFC 1035
// 4.1.4 compression, as miekg/dns does it: see encode.ts) and addresses. One WireWriter is one
// message at a time: the Encoder that holds it is synchronous, and each App's listener has its own.
import { NameSyntaxError, presentationLabels, type NameProblem } from '../pkg/names.js';

const MAX_POINTER = 0x3fff;

function badName(name: string, why: string): Error {
  return new Error(`cannot encode name ${JSON.stringify(name)}: ${why}`);
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

export class WireWriter {
  buf: Buffer = Buffer.allocUnsafe(4096);
  pos = 0;
  private readonly comp = new Map<string, number>();
  private readonly listedName: string[] = new Array<string>(LISTED_MAX).fill('');
  /** Index in the name just past its last label (its trailing dot excluded). */
  private readonly listedEnd = new Int32Array(LISTED_MAX);
  /** Wire offset of the name's first octet. */
  private readonly listedPos = new Int32Array(LISTED_MAX);
  /** Index in the name of the first label not written as labels (a pointer, or a target found earlier). */
  private readonly listedLit = new Int32Array(LISTED_MAX);
  private listed = 0;
  private eager = false;
  /** A name other than the first has been written (then the first's suffixes stay out of `comp`). */
  private second = false;
  /** In `eager` mode, the first name as a target looked up after `comp` (pendingSuffix). */
  private pendingAlive = false;
  private pendingWhole = '';
  private pendingPos = 0;

  /** Starts a message: nothing written, no compression targets. */
  reset(): void {
    this.pos = 0;
    this.eager = false;
    this.second = false;
    this.pendingAlive = false;
    this.listed = 0;
  }

  /** Forgets the message's names, so they are not kept alive until the next one. */
  forget(): void {
    // Map.clear allocates a new table even when empty; most replies enter nothing.
    if (this.comp.size > 0) this.comp.clear();
    for (let i = 0; i < this.listed; i++) this.listedName[i] = '';
    this.listed = 0;
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u16(v: number): void {
    this.buf[this.pos] = v >>> 8;
    this.buf[this.pos + 1] = v;
    this.pos += 2;
  }

  u16checked(v: number, what: string): void {
    if (!(v >= 0 && v <= 0xffff) || v !== Math.floor(v)) throw new Error(`${what} out of range: ${v}`);
    this.u16(v);
  }

  u32(v: number, what: string): void {
    if (!(v >= 0 && v <= 0xffffffff) || v !== Math.floor(v)) throw new Error(`${what} out of range: ${v}`);
    this.buf[this.pos] = v >>> 24;
    this.buf[this.pos + 1] = v >>> 16;
    this.buf[this.pos + 2] = v >>> 8;
    this.buf[this.pos + 3] = v;
    this.pos += 4;
  }

  /** Where the suffix `key` of the first name was written, or undefined. */
  private pendingSuffix(key: string): number | undefined {
    const off = this.pendingWhole.length - key.length;
    if (off < 0 || !this.pendingWhole.endsWith(key)) return undefined;
    if (off > 0 && this.pendingWhole.charCodeAt(off - 1) !== 46) return undefined;
    const ptr = this.pendingPos + off;
    return ptr <= MAX_POINTER ? ptr : undefined;
  }

  /** Where the suffix name[start, end) of a listed name was written as labels, or -1. */
  private findListed(name: string, start: number, end: number): number {
    const len = end - start;
    for (let i = 0; i < this.listed; i++) {
      const s = this.listedEnd[i]! - len;
      if (s < 0 || s >= this.listedLit[i]!) continue;
      const other = this.listedName[i]!;
      if (s > 0 && other.charCodeAt(s - 1) !== 46) continue;
      const ptr = this.listedPos[i]! + s;
      if (ptr > MAX_POINTER) continue;
      let j = 0;
      while (j < len && other.charCodeAt(s + j) === name.charCodeAt(start + j)) j++;
      if (j === len) return ptr;
    }
    return -1;
  }

  /** Moves the listed names' suffixes into `comp`, earliest first; `comp` alone serves from now. */
  private flushListed(): void {
    this.eager = true;
    for (let i = 0; i < this.listed; i++) {
      const name = this.listedName[i]!;
      const end = this.listedEnd[i]!;
      const lit = this.listedLit[i]!;
      const at = this.listedPos[i]!;
      if (i === 0 && this.second) {
        this.pendingWhole = name.length === end + 1 ? name : name.slice(0, end) + '.';
        this.pendingPos = at;
        this.pendingAlive = true;
        this.comp.set(this.pendingWhole, at);
        this.listedName[i] = '';
        continue;
      }
      for (let start = 0; start < lit && at + start <= MAX_POINTER; ) {
        const key = start === 0 && name.length === end + 1 ? name : name.slice(start, end) + '.';
        if (!this.comp.has(key)) this.comp.set(key, at + start);
        const dot = name.indexOf('.', start);
        if (dot === -1 || dot >= end) break;
        start = dot + 1;
      }
      this.listedName[i] = '';
    }
    this.listed = 0;
  }

  /** Writes the plain label of name that starts at `start` (ending at a dot or `end`); returns where the next one starts. */
  private writeLabel(name: string, start: number, end: number): number {
    let dot = name.indexOf('.', start);
    if (dot === -1 || dot > end) dot = end;
    const labelLen = dot - start;
    if (labelLen === 0) throw badName(name, 'empty label');
    if (labelLen > 63) throw badName(name, 'label longer than 63 octets');
    // Locals in the loop: `buf` and `pos` are fields, a load and a store per use.
    const b = this.buf;
    let p = this.pos;
    b[p++] = labelLen;
    for (let i = start; i < dot; i++) b[p++] = name.charCodeAt(i);
    this.pos = p;
    return dot + 1;
  }

  /** Writes the labels of plain name[0, end) and the root octet, without compression. */
  private writeLabels(name: string, end: number): void {
    for (let start = 0; start < end; ) start = this.writeLabel(name, start, end);
    this.buf[this.pos++] = 0;
  }

  private writePointer(ptr: number): void {
    this.buf[this.pos] = 0xc0 | (ptr >>> 8);
    this.buf[this.pos + 1] = ptr;
    this.pos += 2;
  }

  /**
   * Writes `name`, replacing its longest already-written suffix with a pointer when `compress`,
   * and remembering its own suffixes as pointer targets either way.
   */
  writeName(name: string, compress: boolean): void {
    const len = name.length;
    if (len === 0 || (len === 1 && name.charCodeAt(0) === 46)) {
      this.ensure(1);
      this.buf[this.pos++] = 0;
      return;
    }
    // Fast path: plain ASCII without escapes, where each character is one octet and every dot
    // separates labels. The suffix itself (always with trailing dot) is its compression key.
    for (let i = 0; i < len; i++) {
      const c = name.charCodeAt(i);
      if (c === 92 || c > 126) {
        this.writeNameSlow(name, compress);
        return;
      }
    }
    const fq = name.charCodeAt(len - 1) === 46;
    const end = fq ? len - 1 : len; // end of the last label
    if (end + 2 > 255) throw badName(name, 'longer than 255 octets');
    this.ensure(end + 2);
    if (!this.eager) {
      if (this.listed === LISTED_MAX) {
        this.flushListed();
      } else {
        // The longest suffix already written, looked up from the left (the whole name first).
        // With nothing written yet (the question) there is nothing to find.
        let start = this.listed === 0 ? end : 0;
        let ptr = -1;
        while (start < end) {
          ptr = this.findListed(name, start, end);
          if (ptr >= 0) break;
          const dot = name.indexOf('.', start);
          start = dot === -1 || dot > end ? end : dot + 1;
        }
        if (this.listed > 0 && !(start === 0 && ptr === this.listedPos[0])) this.second = true;
        const at = this.pos;
        if (ptr >= 0 && compress) {
          for (let l = 0; l < start; ) l = this.writeLabel(name, l, end);
          this.writePointer(ptr);
        } else {
          this.writeLabels(name, end);
        }
        // Only what was written as labels before the first earlier target is a new target.
        if (start > 0) {
          this.listedName[this.listed] = name;
          this.listedEnd[this.listed] = end;
          this.listedPos[this.listed] = at;
          this.listedLit[this.listed] = start;
          this.listed++;
        }
        return;
      }
    }
    let start = 0;
    while (start < end) {
      const key = fq ? (start === 0 ? name : name.slice(start)) : name.slice(start) + '.';
      let ptr = this.comp.get(key);
      if (ptr === undefined && this.pendingAlive) ptr = this.pendingSuffix(key);
      if (ptr !== undefined) {
        if (compress) {
          this.writePointer(ptr);
          return;
        }
      } else if (this.pos <= MAX_POINTER) {
        this.comp.set(key, this.pos);
      }
      start = this.writeLabel(name, start, end);
    }
    this.buf[this.pos++] = 0;
  }

  private writeNameSlow(name: string, compress: boolean): void {
    const labels = parseName(name);
    if (!this.eager) this.flushListed();
    let wire = 1;
    for (const l of labels) wire += l.length + 1;
    this.ensure(wire);
    // keys[i] spells the suffix starting at label i, in the same form the fast path uses.
    const keys: string[] = new Array<string>(labels.length);
    let acc = '.';
    for (let i = labels.length - 1; i >= 0; i--) {
      acc = labelKey(labels[i]!) + (acc === '.' ? '.' : '.' + acc);
      keys[i] = acc;
    }
    for (let i = 0; i < labels.length; i++) {
      const key = keys[i]!;
      const ptr = this.comp.get(key);
      if (ptr !== undefined) {
        if (compress) {
          this.buf[this.pos] = 0xc0 | (ptr >>> 8);
          this.buf[this.pos + 1] = ptr;
          this.pos += 2;
          return;
        }
      } else if (this.pos <= MAX_POINTER) {
        this.comp.set(key, this.pos);
      }
      const label = labels[i]!;
      this.buf[this.pos++] = label.length;
      this.buf.set(label, this.pos);
      this.pos += label.length;
    }
    this.buf[this.pos++] = 0;
  }

  writeIPv4(s: string): void {
    this.ensure(4);
    let part = 0;
    let val = 0;
    let digits = 0;
    for (let i = 0; i <= s.length; i++) {
      const c = i < s.length ? s.charCodeAt(i) : 46;
      if (c === 46) {
        if (digits === 0 || val > 255 || part > 3) throw new Error(`invalid IPv4 address: ${s}`);
        this.buf[this.pos + part++] = val;
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
    this.pos += 4;
  }

  /** The 16-bit groups of one side of `::`, an embedded IPv4 tail counting as two. */
  private v6Groups(side: string, s: string, allowV4: boolean): number[] {
    if (side === '') return [];
    const parts = side.split(':');
    const out: number[] = [];
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (allowV4 && i === parts.length - 1 && p.includes('.')) {
        const save = this.pos;
        this.ensure(4);
        this.writeIPv4(p);
        out.push((this.buf[save]! << 8) | this.buf[save + 1]!, (this.buf[save + 2]! << 8) | this.buf[save + 3]!);
        this.pos = save;
      } else {
        out.push(hexGroup(p, s));
      }
    }
    return out;
  }

  writeIPv6(s: string): void {
    const dbl = s.indexOf('::');
    let groups: number[];
    if (dbl === -1) {
      groups = this.v6Groups(s, s, true);
      if (groups.length !== 8) throw new Error(`invalid IPv6 address: ${s}`);
    } else {
      if (s.indexOf('::', dbl + 1) !== -1) throw new Error(`invalid IPv6 address: ${s}`);
      const head = this.v6Groups(s.slice(0, dbl), s, false);
      const tail = this.v6Groups(s.slice(dbl + 2), s, true);
      const fill = 8 - head.length - tail.length;
      if (fill < 1) throw new Error(`invalid IPv6 address: ${s}`);
      groups = head;
      for (let i = 0; i < fill; i++) groups.push(0);
      for (const g of tail) groups.push(g);
    }
    this.ensure(16);
    for (const g of groups) this.u16(g);
  }
}
