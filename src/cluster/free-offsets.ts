// Free offsets of an address range, for the deterministic allocators (cluster IPs, pod IPs).
// They hand out "the first free offset at or after a hashed start, wrapping", which is linear
// probing: fine while a range is sparse, quadratic as it fills (100k pods probing a /16 took
// 73 s before this). Here each taken offset points at a later candidate, and every lookup
// compresses the path it walked (a disjoint-set "next free" structure), so a lookup costs
// amortised near-constant time however full the range is, and the answers are exactly those of
// linear probing. Only taken offsets are stored, so a huge (IPv6) range costs nothing.

export class FreeOffsets {
  /** For a taken offset, a later offset (cyclically) to look at next. */
  private readonly next = new Map<number, number>();

  /** Offsets [0, size) are allocatable. */
  constructor(readonly size: number) {}

  get taken(): number {
    return this.next.size;
  }

  get free(): number {
    return this.size - this.next.size;
  }

  has(offset: number): boolean {
    return this.next.has(offset);
  }

  /** Marks an offset taken (a declared address); out-of-range offsets are ignored. */
  take(offset: number): void {
    if (offset < 0 || offset >= this.size || this.next.has(offset)) return;
    this.next.set(offset, offset + 1 === this.size ? 0 : offset + 1);
  }

  /** The first free offset at or after start (wrapping), or undefined when none is free. */
  firstFreeFrom(start: number): number | undefined {
    if (this.next.size >= this.size) return undefined;
    let at = start;
    for (let hop = this.next.get(at); hop !== undefined; hop = this.next.get(at)) at = hop;
    // Compression: every offset walked now points at the answer. A second walk instead of a list
    // of the walked offsets, so a lookup allocates nothing (one per pod at 100k pods).
    for (let w = start; w !== at; ) {
      const hop = this.next.get(w)!;
      this.next.set(w, at);
      w = hop;
    }
    return at;
  }
}
