// What the kubernetes plugin's lookups work with: a backend match (CoreDNS's msg.Service), the
// query state one lookup carries, and the record helpers its answers (plugin.ts) and its zone
// transfer (xfr.ts) share.
import type { DnsRequest } from '../../chain/plugin.js';
import type { Rr } from '../../dns/records.js';
import type { RecordRequest } from './names.js';

/** What a backend lookup yields per match (CoreDNS's msg.Service). */
export interface Item {
  /** An IP address, or a host name for ExternalName services. */
  host: string;
  /** -1 for objects without ports. */
  port: number;
  /** Owner name below the zone, e.g. 'web-0.nginx.apps.svc'. */
  relative: string;
  ttl: number;
  text?: string;
}

export const NX = Symbol('nxdomain');

export type Found = Item[] | typeof NX;

/** The query as one lookup sees it; CNAME chasing makes new ones. */
export interface State {
  /** Name as the client spelled it (answer owners use it). */
  name: string;
  /** Lowercased name. */
  qname: string;
  qtype: string;
  /** Matched zone, lowercased. */
  zone: string;
  /** The zone as the client spelled it (SOA, NS, SRV targets use it). */
  zoneSp: string;
  /** The request being answered, when there is one: lookups through the server carry it (their depth and loops). */
  req?: DnsRequest;
}

export type MaybePromise<T> = T | Promise<T>;

/**
 * `f` of `v`, synchronously when `v` is not a promise. (Not named `then`: a module exporting `then`
 * is a thenable, and `await import()` of it would call it.)
 */
export function andThen<T, U>(v: MaybePromise<T>, f: (t: T) => MaybePromise<U>): MaybePromise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

export function eq(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function portMatches(r: RecordRequest, name: string, protocol: string): boolean {
  return (r.port === '' || eq(r.port, name)) && (r.protocol === '' || eq(r.protocol, protocol));
}

export const NO_PORTS = [{ name: '', protocol: '', port: -1 }];

/** The CNAMEs followed before a lookup's first step: none (addresses() only reads the list). */
export const NO_RECORDS: readonly Rr[] = [];

/**
 * True for an IPv4 address in canonical dotted-quad form (no leading zeros), what the store
 * holds for nearly every address: it is its own canonical text, with no parse to prove it.
 */
export function isPlainIPv4(s: string): boolean {
  const n = s.length;
  if (n < 7 || n > 15) return false;
  let parts = 0;
  let val = 0;
  let digits = 0;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? s.charCodeAt(i) : 46;
    if (c === 46) {
      if (digits === 0 || val > 255) return false;
      parts++;
      val = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && val === 0) return false; // a leading zero
      val = val * 10 + (c - 48);
      digits++;
    } else {
      return false;
    }
  }
  return parts === 4;
}

/** dnsutil.Dedup: drop records identical in owner (case-insensitively), type and data. */
export function dedup(records: Rr[]): Rr[] {
  if (records.length < 2) return records;
  const seen = new Set<string>();
  return records.filter((r) => {
    const k = `${r.name.toLowerCase()}|${r.type}|${JSON.stringify((r as { data?: unknown }).data)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
