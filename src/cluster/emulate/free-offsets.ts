// Free offsets of an address range, for the deterministic allocators (cluster IPs, pod IPs).
// They hand out "the first free offset at or after a hashed start, wrapping", which is linear
// probing: fine while a range is sparse, quadratic as it fills (100k pods probing a /16 took
// 73 s before this). Here each taken offset points at a later candidate, and every lookup
// compresses the path it walked (a disjoint-set "next free" structure), so a lookup costs
// amortised near-constant time however full the range is, and the answers are exactly those of
// linear probing. Only taken offsets are stored, so a huge (IPv6) range costs nothing.

export class FreeOffsets {
  /** For a taken offset, a later offset (cyclically) to look at next. */
  private readonly next = new OffsetMap();

  /** Offsets [0, size) are allocatable; size at most 2^32 - 1. */
  constructor(readonly size: number) {
    if (!(size >= 0 && size <= 0xffffffff)) throw new RangeError(`FreeOffsets: size ${size} is not within 0..2^32-1`);
  }

  get taken(): number {
    return this.next.size;
  }

  get free(): number {
    return this.size - this.next.size;
  }

  /** Room for `n` taken offsets without growing (a caller that knows how many it will take). */
  reserve(n: number): void {
    this.next.reserve(n);
  }

  has(offset: number): boolean {
    return this.next.get(offset) !== NONE;
  }

  /** Marks an offset taken (a declared address); out-of-range offsets are ignored. */
  take(offset: number): void {
    if (offset < 0 || offset >= this.size) return;
    this.next.setIfAbsent(offset, offset + 1 === this.size ? 0 : offset + 1);
  }

  /** The first free offset at or after start (wrapping), or undefined when none is free. */
  firstFreeFrom(start: number): number | undefined {
    if (this.next.size >= this.size) return undefined;
    const next = this.next;
    let at = start;
    for (let hop = next.get(at); hop !== NONE; hop = next.get(at)) at = hop;
    // Compression: every offset walked now points at the answer. A second walk instead of a list
    // of the walked offsets, so a lookup allocates nothing (one per pod at 100k pods).
    for (let w = start; w !== at; ) {
      const hop = next.get(w);
      next.set(w, at);
      w = hop;
    }
    return at;
  }

  /** firstFreeFrom(start), taken. */
  takeFirstFreeFrom(start: number): number | undefined {
    // A free start (most of them in a sparse range): one probe of the table.
    if (start >= 0 && start < this.size && this.next.size < this.size && this.next.setIfAbsent(start, start + 1 === this.size ? 0 : start + 1)) return start;
    const at = this.firstFreeFrom(start);
    if (at !== undefined) this.take(at);
    return at;
  }
}

/** No offset: ranges hold at most 2^32 - 1 offsets, so 2^32 - 1 is never one. */
const NONE = 0xffffffff;
/** An empty slot: keys are stored as the 32 bits of offset + 1, never 0 (offsets stay below 2^32 - 1). */
const EMPTY = 0;

/**
 * Offset -> offset, open addressing over two typed arrays: a Map of 100k number keys (a pod
 * CIDR's, twice on a dual-stack load) costs some 20 ms of inserts and lookups per load and
 * as much again in the collector, these arrays a fraction of it. Keys are stored as the 32 bits
 * of offset + 1 and values as an offset's 32 bits, in Int32Arrays (integers for the optimiser,
 * where a Uint32Array's upper half would be doubles), so a new table is all empty as allocated.
 */
class OffsetMap {
  size = 0;
  private bits = 6;
  private keys = new Int32Array(1 << 6);
  private values = new Int32Array(1 << 6);

  private slot(key32: number): number {
    const mask = (1 << this.bits) - 1;
    const keys = this.keys;
    let i = Math.imul(key32, 0x9e3779b1) >>> (32 - this.bits);
    for (;;) {
      const k = keys[i]!;
      if (k === key32 || k === EMPTY) return i;
      i = (i + 1) & mask;
    }
  }

  /** The value, or NONE. */
  get(key: number): number {
    const i = this.slot((key + 1) | 0);
    return this.keys[i] === EMPTY ? NONE : this.values[i]! >>> 0;
  }

  /** Sets a key that is present. */
  set(key: number, value: number): void {
    this.values[this.slot((key + 1) | 0)] = value | 0;
  }

  /** Whether the key was absent (and is now set). */
  setIfAbsent(key: number, value: number): boolean {
    const key32 = (key + 1) | 0;
    const i = this.slot(key32);
    if (this.keys[i] !== EMPTY) return false;
    this.keys[i] = key32;
    this.values[i] = value | 0;
    if (++this.size * 2 > this.keys.length) this.resize(this.bits + 1);
    return true;
  }

  reserve(n: number): void {
    let bits = this.bits;
    while ((this.size + n) * 2 > 1 << bits && bits < 31) bits++;
    if (bits > this.bits) this.resize(bits);
  }

  private resize(bits: number): void {
    const { keys, values } = this;
    this.bits = bits;
    this.keys = new Int32Array(1 << bits);
    this.values = new Int32Array(1 << bits);
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      if (k === EMPTY) continue;
      const i = this.slot(k);
      this.keys[i] = k;
      this.values[i] = values[j]!;
    }
  }
}
