// The mirror's key index: keys in etcd's order (byte order; the same as string order for the
// ASCII keys etcd paths use), in chunks of at most CHUNK keys. One sorted array made every watch
// insert a splice of the whole array: with 100k keys mirrored and thousands of new keys a second
// that was most of the server's time. Here an insert or delete moves at most CHUNK keys.

const CHUNK = 512;

export class SortedKeys {
  private chunks: string[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Replaces the content with `keys`, which must be sorted and distinct. */
  reset(keys: readonly string[]): void {
    this.chunks = [];
    for (let i = 0; i < keys.length; i += CHUNK) this.chunks.push(keys.slice(i, i + CHUNK));
    this.count = keys.length;
  }

  insert(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return;
    }
    const c = Math.min(this.chunkFor(key), this.chunks.length - 1);
    const chunk = this.chunks[c]!;
    const i = lowerBound(chunk, key);
    if (chunk[i] === key) return;
    chunk.splice(i, 0, key);
    this.count++;
    if (chunk.length > 2 * CHUNK) this.chunks.splice(c, 1, chunk.slice(0, CHUNK), chunk.slice(CHUNK));
  }

  delete(key: string): void {
    const c = this.chunkFor(key);
    const chunk = this.chunks[c];
    if (!chunk) return;
    const i = lowerBound(chunk, key);
    if (chunk[i] !== key) return;
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(c, 1);
  }

  /** Keys from the first one >= `from`, in order. */
  *from(from: string): Generator<string> {
    const first = this.chunkFor(from);
    for (let c = first; c < this.chunks.length; c++) {
      const chunk = this.chunks[c]!;
      for (let i = c === first ? lowerBound(chunk, from) : 0; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /** Index of the first chunk whose last key is >= key (chunks.length when none). */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (chunk[chunk.length - 1]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function lowerBound(arr: readonly string[], x: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
