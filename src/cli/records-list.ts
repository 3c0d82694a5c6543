// One zone's records as `clusterdns records` prints them: each record once (key owner|type|rdata,
// the last one added kept, in the place of the first), sorted SOA first, then by canonical owner
// name, type and data; records that compare equal keep that place. A 100k-endpoint cluster has
// hundreds of thousands of records: they are kept as a few references each, in columns, not as
// the decoded records and a map of keys, and the lines are only made when written.
import type { Answer } from 'dns-packet';
import { canonicalKeys } from '../dns/canonical.js';

const TYPE_ORDER = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'DNAME', 'MX', 'SRV', 'PTR', 'TXT', 'CAA'];
// Unlisted types sort first (rank 0, as indexOf's -1 did); SOA, rank 1, is also sorted before all else.
const TYPE_RANK = new Map(TYPE_ORDER.map((t, i) => [t, i + 1]));
const SOA_RANK = 1;

// As canonicalKeys' plain keys: ASCII without escapes or NUL, where a name's key depends only on
// its lowercase form, so records deduplicated together always sort side by side.
const PLAIN_NAME = /^[\x01-\x5b\x5d-\x7f]+$/;

const abs = (name: string): string => (name === '.' || name === '' ? '.' : name.endsWith('.') ? name : `${name}.`);

export class ZoneListing {
  /** The record's owner as given (its line and sort key). */
  private readonly names: string[] = [];
  /** The owner as deduplicated (lowercased; fully qualified for zone-file records). */
  private readonly owners: string[] = [];
  private readonly types: string[] = [];
  private readonly ttls: unknown[] = [];
  private readonly classes: unknown[] = [];
  private readonly rdatas: string[] = [];
  private readonly ranks: number[] = [];
  /** While ordering: each record's canonical name key. */
  private keyOf: string[] = [];

  get added(): number {
    return this.names.length;
  }

  add(owner: string, rr: Answer, rdata: string): void {
    this.names.push(rr.name);
    this.owners.push(owner);
    this.types.push(rr.type);
    // recordText's columns: an absent TTL or class prints as 0 and IN.
    this.ttls.push((rr as { ttl?: number }).ttl ?? 0);
    this.classes.push((rr as { class?: string }).class ?? 'IN');
    this.rdatas.push(rdata);
    this.ranks.push(TYPE_RANK.get(rr.type) ?? 0);
  }

  /** The zone-file line of record `i` (recordText's). */
  line(i: number): string {
    return `${abs(this.names[i]!)}\t${this.ttls[i]}\t${this.classes[i]}\t${this.types[i]}\t${this.rdatas[i]}`;
  }

  rdata(i: number): string {
    return this.rdatas[i]!;
  }

  /** The records to print, in order (indexes for line and rdata). */
  order(): number[] {
    const { names } = this;
    let plain = true;
    for (let i = 0; i < names.length && plain; i++) plain = PLAIN_NAME.test(names[i]!);
    if (!plain) {
      // Deduplicated by a map first, as always; its order is the first addition of each key.
      const kept = new Map<string, number>();
      for (let i = 0; i < names.length; i++) kept.set(`${this.owners[i]}|${this.types[i]}|${this.rdatas[i]}`, i);
      const out = this.sorted([...kept.values()]);
      this.keyOf = [];
      return out;
    }
    const all = new Array<number>(names.length);
    for (let i = 0; i < all.length; i++) all[i] = i;
    const out = this.dedupSorted(this.sorted(all));
    this.keyOf = [];
    return out;
  }

  /** `idx` (in order of addition) sorted; ties keep that order. */
  private sorted(idx: number[]): number[] {
    const keys = canonicalKeys(idx.map((i) => this.names[i]!));
    const keyOf = new Array<string>(this.names.length);
    for (let j = 0; j < idx.length; j++) keyOf[idx[j]!] = keys[j]!;
    this.keyOf = keyOf;
    const { ranks, rdatas } = this;
    return idx.sort((a, b) => {
      const ra = ranks[a]!;
      const rb = ranks[b]!;
      if (ra !== rb && (ra === SOA_RANK || rb === SOA_RANK)) return ra === SOA_RANK ? -1 : 1;
      const ka = keyOf[a]!;
      const kb = keyOf[b]!;
      if (ka !== kb) return ka < kb ? -1 : 1;
      if (ra !== rb) return ra - rb;
      const da = rdatas[a]!;
      const db = rdatas[b]!;
      return da < db ? -1 : da > db ? 1 : 0;
    });
  }

  /**
   * Sorted records of plain names, each key once: records with one key compare equal, so they
   * are side by side in order of addition; the first one's place, the last one's fields.
   */
  private dedupSorted(sorted: number[]): number[] {
    const out: number[] = [];
    const { owners, types, rdatas, ranks, keyOf } = this;
    // What the sort compares: equal keys, type ranks and data.
    const same = (a: number, b: number): boolean => keyOf[a] === keyOf[b] && ranks[a] === ranks[b] && rdatas[a] === rdatas[b];
    for (let i = 0; i < sorted.length; ) {
      let end = i + 1;
      while (end < sorted.length && same(sorted[i]!, sorted[end]!)) end++;
      if (end === i + 1) {
        out.push(sorted[i]!);
        i = end;
        continue;
      }
      // A run of equal records: one per key, in order of first addition.
      const place = new Map<string, number>();
      for (let j = i; j < end; j++) {
        const r = sorted[j]!;
        const key = `${owners[r]}|${types[r]}|${rdatas[r]}`;
        const at = place.get(key);
        if (at === undefined) {
          place.set(key, out.length);
          out.push(r);
        } else out[at] = r;
      }
      i = end;
    }
    return out;
  }
}
