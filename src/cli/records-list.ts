// One zone's records as `clusterdns records` prints them: each record once (key owner|type|rdata,
// the last one added kept, in the place of the first), sorted SOA first, then by canonical owner
// name, type and data; records that compare equal keep that place. A 100k-endpoint cluster has
// hundreds of thousands of records: each is kept as one small object of references to its columns,
// not as a decoded record under a key in a map (plain names are deduplicated after the sort), and
// the lines are only made when written.
import type { Answer } from 'dns-packet';
import { canonicalKeys } from '../dns/canonical.js';
import { fqdn } from '../pkg/names.js';

const TYPE_ORDER = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'DNAME', 'MX', 'SRV', 'PTR', 'TXT', 'CAA'];
// Unlisted types sort first (rank 0, as indexOf's -1 did); SOA, rank 1, is also sorted before all else.
const TYPE_RANK = new Map(TYPE_ORDER.map((t, i) => [t, i + 1]));
const SOA_RANK = 1;

// As canonicalKeys' plain keys: ASCII without escapes or NUL, where a name's key depends only on
// its lowercase form, so records deduplicated together always sort side by side.
const PLAIN_NAME = /^[\x01-\x5b\x5d-\x7f]+$/;

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

/** One record of a listing: its line's columns and what it sorts and is deduplicated by. */
export class ListedRecord {
  /** The owner fully qualified, as the line shows it. */
  readonly name: string;
  readonly type: string;
  readonly ttl: unknown;
  readonly klass: unknown;
  /** The data in presentation form. */
  readonly rdata: string;
  readonly rank: number;
  /**
   * The owner the record is deduplicated by where it is not its name lowercased without the
   * trailing dot (a decoded name's form): zone-file records (fully qualified), odd names.
   */
  owner: string | undefined;
  /** Given as '': its line shows '.', but it sorts as ''. */
  readonly empty: boolean;
  /** While ordering: the canonical key of its name. */
  key = '';

  constructor(name: string, type: string, ttl: unknown, klass: unknown, rdata: string, empty: boolean) {
    this.name = fqdn(name);
    this.type = type;
    // recordText's columns: an absent TTL or class prints as 0 and IN.
    this.ttl = ttl ?? 0;
    this.klass = klass ?? 'IN';
    this.rdata = rdata;
    this.rank = TYPE_RANK.get(type) ?? 0;
    this.owner = undefined;
    this.empty = empty;
  }

  /** The zone-file line (recordText's). */
  line(): string {
    return `${this.name}\t${this.ttl}\t${this.klass}\t${this.type}\t${this.rdata}`;
  }

  /** The owner it is deduplicated by. */
  dedupOwner(): string {
    if (this.owner !== undefined) return this.owner;
    const name = lower(this.name);
    return name === '.' ? name : name.slice(0, -1);
  }
}

export class ZoneListing {
  private readonly records: ListedRecord[] = [];
  private empties = 0;

  get added(): number {
    return this.records.length;
  }

  /** A decoded record, deduplicated by `owner`, with its data presented as `rdata`. */
  add(owner: string, rr: Answer, rdata: string): void {
    const r = new ListedRecord(rr.name, rr.type, (rr as { ttl?: number }).ttl, (rr as { class?: string }).class, rdata, rr.name === '');
    if (r.empty) this.empties++;
    if (owner !== r.dedupOwner()) r.owner = owner;
    this.records.push(r);
  }

  /**
   * A record whose decoded owner is `name` without its trailing dot (a plain, fully qualified
   * name from a chain's response), with its data presented as `rdata`.
   */
  addDirect(name: string, type: string, ttl: number | undefined, rdata: string): void {
    this.records.push(new ListedRecord(name, type, ttl, 'IN', rdata, false));
  }

  /** The records to print, in order. */
  order(): ListedRecord[] {
    const { records } = this;
    let plain = this.empties === 0;
    for (let i = 0; i < records.length && plain; i++) plain = PLAIN_NAME.test(records[i]!.name);
    if (!plain) {
      // Deduplicated by a map first, as always; its order is the first addition of each key.
      const kept = new Map<string, ListedRecord>();
      for (const r of records) kept.set(`${r.dedupOwner()}|${r.type}|${r.rdata}`, r);
      const list = [...kept.values()];
      const keys = canonicalKeys(list.map((r) => (r.empty ? '' : r.name)));
      for (let i = 0; i < list.length; i++) list[i]!.key = keys[i]!;
      return sorted(list);
    }
    for (const r of records) r.key = plainSortKey(r.name);
    return dedupSorted(sorted(records.slice()));
  }
}

/** `list` (in order of addition) sorted by key; ties keep that order. */
function sorted(list: ListedRecord[]): ListedRecord[] {
  return list.sort((a, b) => {
    const ra = a.rank;
    const rb = b.rank;
    if (ra !== rb && (ra === SOA_RANK || rb === SOA_RANK)) return ra === SOA_RANK ? -1 : 1;
    const ka = a.key;
    const kb = b.key;
    if (ka !== kb) return ka < kb ? -1 : 1;
    if (ra !== rb) return ra - rb;
    const da = a.rdata;
    const db = b.rdata;
    return da < db ? -1 : da > db ? 1 : 0;
  });
}

/** What the sort compares: equal keys, type ranks and data. */
function same(a: ListedRecord, b: ListedRecord): boolean {
  return a.key === b.key && a.rank === b.rank && a.rdata === b.rdata;
}

/**
 * Sorted records of plain names, each key once: records with one key compare equal, so they
 * are side by side in order of addition; the first one's place, the last one's fields.
 */
function dedupSorted(list: ListedRecord[]): ListedRecord[] {
  const out: ListedRecord[] = [];
  for (let i = 0; i < list.length; ) {
    let end = i + 1;
    while (end < list.length && same(list[i]!, list[end]!)) end++;
    if (end === i + 1) {
      out.push(list[i]!);
      i = end;
      continue;
    }
    // A run of equal records: one per key, in order of first addition.
    const place = new Map<string, number>();
    for (let j = i; j < end; j++) {
      const r = list[j]!;
      const key = `${r.dedupOwner()}|${r.type}|${r.rdata}`;
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
