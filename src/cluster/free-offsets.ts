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
    if (!(size >= 0 && size <= NONE)) throw new RangeError(`FreeOffsets: size ${size} is not within 0..2^32-1`);
  }

  get taken(): number {
    return this.next.size;
  }

  get free(): number {
    return this.size - this.next.size;
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
}

/** No offset: ranges hold at most 2^32 - 1 offsets (podips.ts caps them), so this is never one. */
const NONE = 0xffffffff;

/**
 * Offset -> offset, open addressing over two typed arrays: a Map of 100k number keys (a pod
 * CIDR's, twice on a dual-stack load) costs some 20 ms of inserts and lookups per load and
 * as much again in the collector, these arrays a fraction of it.
 */
class OffsetMap {
  size = 0;
  private bits = 10;
  private keys = new Uint32Array(1 << 10).fill(NONE);
  private values = new Uint32Array(1 << 10);

  private slot(key: number): number {
    const mask = (1 << this.bits) - 1;
    let i = Math.imul(key, 0x9e3779b1) >>> (32 - this.bits);
    for (;;) {
      const k = this.keys[i]!;
      if (k === key || k === NONE) return i;
      i = (i + 1) & mask;
    }
  }

  /** The value, or NONE. */
  get(key: number): number {
    const i = this.slot(key);
    return this.keys[i] === NONE ? NONE : this.values[i]!;
  }

  /** Sets a key that is present. */
  set(key: number, value: number): void {
    this.values[this.slot(key)] = value;
  }

  setIfAbsent(key: number, value: number): void {
    const i = this.slot(key);
    if (this.keys[i] !== NONE) return;
    this.keys[i] = key;
    this.values[i] = value;
    if (++this.size * 2 > this.keys.length) this.grow();
  }

  private grow(): void {
    const { keys, values } = this;
    this.bits++;
    this.keys = new Uint32Array(1 << this.bits).fill(NONE);
    this.values = new Uint32Array(1 << this.bits);
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      if (k === NONE) continue;
      const i = this.slot(k);
      this.keys[i] = k;
      this.values[i] = values[j]!;
    }
  }
}
