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

/** `s` lowercased: itself when it has no capital letter and no character outside ASCII. */
export function lower(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return s.toLowerCase();
  }
  return s;
}

/** Room for the longest key: a name of up to 255 octets. */
const keyScratch = Buffer.alloc(512);

/**
 * canonicalKeys' key of a fully qualified name that is plain (PLAIN_NAME): its labels lowercased,
 * right to left, each closed by NUL, written in one buffer and read out as one string.
 */
export function plainSortKey(name: string): string {
  const end = name.length - 1; // the trailing dot
  if (end + 1 > keyScratch.length) return canonicalKeys([name])[0]!;
  let w = 0;
  let labelEnd = end;
  for (let i = end - 1; i >= -1; i--) {
    if (i >= 0 && name.charCodeAt(i) !== 46) continue;
    for (let j = i + 1; j < labelEnd; j++) {
      const c = name.charCodeAt(j);
      keyScratch[w++] = c >= 65 && c <= 90 ? c + 32 : c;
    }
    keyScratch[w++] = 0;
    labelEnd = i;
  }
  return keyScratch.toString('latin1', 0, w);
}

export class ZoneListing {
  /** The record's owner fully qualified, as its line shows it. */
  private readonly names: string[] = [];
  private readonly types: string[] = [];
  private readonly ttls: unknown[] = [];
  private readonly classes: unknown[] = [];
  private readonly rdatas: string[] = [];
  private readonly ranks: number[] = [];
  /**
   * The owner a record is deduplicated by, where it is not its name lowercased without the
   * trailing dot (a decoded name's form): zone-file records (fully qualified), odd names.
   */
  private readonly owners = new Map<number, string>();
  /** Records whose owner was given as '' (its line shows '.', its sort key differs). */
  private readonly emptyNames = new Set<number>();
  /** While ordering: each record's canonical name key. */
  private keyOf: string[] = [];

  get added(): number {
    return this.names.length;
  }

  /** A decoded record, deduplicated by `owner`, with its data presented as `rdata`. */
  add(owner: string, rr: Answer, rdata: string): void {
    const i = this.names.length;
    this.push(rr.name, rr.type, (rr as { ttl?: number }).ttl, (rr as { class?: string }).class, rdata);
    if (rr.name === '') this.emptyNames.add(i);
    if (owner !== this.owner(i)) this.owners.set(i, owner);
  }

  /**
   * A record whose decoded owner is `name` without its trailing dot (a plain, fully qualified
   * name from a chain's response), with its data presented as `rdata`.
   */
  addDirect(name: string, type: string, ttl: number | undefined, rdata: string): void {
    this.push(name, type, ttl, 'IN', rdata);
  }

  private push(name: string, type: string, ttl: number | undefined, klass: string | undefined, rdata: string): void {
    this.names.push(abs(name));
    this.types.push(type);
    // recordText's columns: an absent TTL or class prints as 0 and IN.
    this.ttls.push(ttl ?? 0);
    this.classes.push(klass ?? 'IN');
    this.rdatas.push(rdata);
    this.ranks.push(TYPE_RANK.get(type) ?? 0);
  }

  /** The owner record `i` is deduplicated by. */
  private owner(i: number): string {
    const odd = this.owners.get(i);
    if (odd !== undefined) return odd;
    const name = lower(this.names[i]!);
    return name === '.' ? name : name.slice(0, -1);
  }

  /** The name record `i` sorts by: as given (its fully qualified form sorts the same, but for ''). */
  private sortName(i: number): string {
    return this.emptyNames.has(i) ? '' : this.names[i]!;
  }

  /** The zone-file line of record `i` (recordText's). */
  line(i: number): string {
    return `${this.names[i]}\t${this.ttls[i]}\t${this.classes[i]}\t${this.types[i]}\t${this.rdatas[i]}`;
  }

  rdata(i: number): string {
    return this.rdatas[i]!;
  }

  /** The records to print, in order (indexes for line and rdata). */
  order(): number[] {
    const { names } = this;
    let plain = this.emptyNames.size === 0;
    for (let i = 0; i < names.length && plain; i++) plain = PLAIN_NAME.test(names[i]!);
    if (!plain) {
      // Deduplicated by a map first, as always; its order is the first addition of each key.
      const kept = new Map<string, number>();
      for (let i = 0; i < names.length; i++) kept.set(`${this.owner(i)}|${this.types[i]}|${this.rdatas[i]}`, i);
      const idx = [...kept.values()];
      const keys = canonicalKeys(idx.map((i) => this.sortName(i)));
      const keyOf = new Array<string>(names.length);
      for (let j = 0; j < idx.length; j++) keyOf[idx[j]!] = keys[j]!;
      const out = this.sorted(idx, keyOf);
      this.keyOf = [];
      return out;
    }
    const all: number[] = [];
    const keyOf: string[] = [];
    for (let i = 0; i < names.length; i++) {
      all.push(i);
      keyOf.push(plainSortKey(names[i]!));
    }
    const out = this.dedupSorted(this.sorted(all, keyOf));
    this.keyOf = [];
    return out;
  }

  /** `idx` (in order of addition) sorted by the canonical name keys `keyOf`; ties keep that order. */
  private sorted(idx: number[], keyOf: string[]): number[] {
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
    const { types, rdatas, ranks, keyOf } = this;
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
        const key = `${this.owner(r)}|${types[r]}|${rdatas[r]}`;
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
