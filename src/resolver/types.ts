// Shared types of the stub-resolver emulation (`clusterdns resolve`). The algorithms themselves
// live in glibc.ts, musl.ts and go.ts; each follows that libc's own source (glibc 2.36, musl 1.2.3, Go 1.19).

import type { Libc } from '../pkg/resolvconf.js';
import { fqdn } from '../pkg/names.js';

export const LIBCS: readonly Libc[] = ['glibc', 'musl', 'go'];

/** Response code names as dns-packet spells them, plus TIMEOUT for "no reply". */
export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED' | 'TIMEOUT' | string;

/** What one query got back. */
export interface SendResult {
  /** Response code of the reply; ignored when timeout is set. */
  readonly rcode: Rcode;
  /** Answer section records as `TYPE rdata` (`A 10.96.0.1`, `CNAME www.example.com.`). */
  readonly answers: readonly string[];
  /** No reply at all (the server was silent until the timeout). */
  readonly timeout?: boolean;
  /** AA and RA bits; Go treats NOERROR + no answers + neither bit as a lame referral. Unset = authoritative. */
  readonly authoritative?: boolean;
  readonly recursionAvailable?: boolean;
}

/**
 * Sends one query for an absolute name (trailing dot) to a server label and reports the reply.
 * `raw`, when the transport has it, sends a message exactly as given (musl's malformed `name..`
 * query) and reports the reply the same way.
 */
export type SendFn = ((name: string, type: string, server: string) => Promise<SendResult>) & {
  raw?: (message: Buffer, server: string) => Promise<SendResult>;
};

export interface QueryRecord {
  /** Absolute name as sent on the wire (trailing dot, case as typed). */
  name: string;
  type: string;
  server: string;
  /** The reply's rcode, or TIMEOUT when there was none. */
  rcode: Rcode;
  answers: string[];
  /** musl 1.2.3 only: a `name..` candidate encoded into a packet no server can parse. */
  malformed?: boolean;
  /** The message as sent, in hex, for a malformed one (musl's own encoding). */
  wire?: string;
}

/**
 * The outcome, libc-independent:
 * - ok: addresses / records found (from DNS, the hosts file, or a numeric name)
 * - NXDOMAIN: the name does not exist (glibc HOST_NOT_FOUND/EAI_NONAME, musl EAI_NONAME, Go "no such host")
 * - NODATA: a name exists but has no record of the type (glibc NO_DATA/EAI_NODATA; musl 1.2.3 says EAI_NONAME; Go "no such host")
 * - SERVFAIL: temporary failure after server failures (glibc TRY_AGAIN/EAI_AGAIN, musl EAI_AGAIN, Go "server misbehaving")
 * - TIMEOUT: no reply from any server (glibc TRY_AGAIN/EAI_AGAIN, musl EAI_AGAIN, Go "i/o timeout")
 * - REFUSED: permanent failure: REFUSED or another rcode (glibc NO_RECOVERY/EAI_FAIL, musl EAI_AGAIN after the timeout, Go "server misbehaving")
 * - BADNAME: rejected before any query (too long, not encodable, .onion, invalid)
 * - CRASH: the libc would crash (musl 1.2.3 with attempts:0 divides by zero)
 */
export type Status = 'ok' | 'NXDOMAIN' | 'NODATA' | 'SERVFAIL' | 'TIMEOUT' | 'REFUSED' | 'BADNAME' | 'CRASH';

export interface LookupResult {
  status: Status;
  /** Addresses (getaddrinfo) or rdata of the asked type (res_search), in the order received. */
  answers: string[];
  /** The libc's own error: glibc h_errno (res_search) or EAI_* (getaddrinfo); musl EAI_*; Go's error text. */
  error?: string;
  /** Where the answer came from. */
  source: 'dns' | 'hosts' | 'numeric' | 'none';
}

export interface Trace {
  /** The name as given. */
  name: string;
  /** The type asked: `A+AAAA` for getaddrinfo AF_UNSPEC, else the type. */
  type: string;
  libc: Libc;
  /** getaddrinfo (no --type, A, AAAA) or res_search (other types). */
  mode: 'getaddrinfo' | 'res_search';
  queries: QueryRecord[];
  result: LookupResult;
  /** Sequential send-and-wait steps: queries sent together (an A+AAAA pair, musl's all-servers fan-out) count once. */
  roundTrips: number;
  /** When the chain has autopath: what the same lookup costs from a client autopath does not know. */
  withoutAutopath?: { queries: number; roundTrips: number };
}

/** What is asked. family applies to getaddrinfo; type to res_search. */
export type LookupMode =
  | { readonly kind: 'getaddrinfo'; readonly family: 'UNSPEC' | 'INET' | 'INET6' }
  | { readonly kind: 'res_search'; readonly type: string };

/** Records every query sent and counts round trips; the algorithms send only through this. */
export class Exchange {
  readonly queries: QueryRecord[] = [];
  roundTrips = 0;
  constructor(private readonly send: SendFn) {}

  /** One send-and-wait step with one or more queries in flight; replies are returned in the order given. */
  async round(items: readonly { name: string; type: string; server: string; wire?: Buffer }[]): Promise<SendResult[]> {
    if (items.length === 0) return [];
    this.roundTrips++;
    const out: SendResult[] = [];
    for (const it of items) out.push(it.wire ? await this.malformed(it.name, it.type, it.server, it.wire) : await this.sendOne(it.name, it.type, it.server));
    return out;
  }

  /** A query sent within the current round trip (musl's immediate SERVFAIL re-send). */
  async extra(name: string, type: string, server: string, wire?: Buffer): Promise<SendResult> {
    return wire ? this.malformed(name, type, server, wire) : this.sendOne(name, type, server);
  }

  /**
   * A query no server can parse (musl's `name..`), sent as the libc encoded it: through the
   * transport's `raw` when it has one (the server's real reaction comes back), else recorded as
   * sent and unanswered.
   */
  async malformed(name: string, type: string, server: string, message: Buffer): Promise<SendResult> {
    const wire = message.toString('hex');
    const r: SendResult = this.send.raw ? await this.send.raw(message, server) : { rcode: 'TIMEOUT', answers: [], timeout: true };
    this.queries.push({ name, type, server, rcode: r.timeout ? 'TIMEOUT' : r.rcode, answers: r.timeout ? [] : [...r.answers], malformed: true, wire });
    return r;
  }

  private async sendOne(name: string, type: string, server: string): Promise<SendResult> {
    const r = await this.send(name, type, server);
    this.queries.push({ name, type, server, rcode: r.timeout ? 'TIMEOUT' : r.rcode, answers: r.timeout ? [] : [...r.answers] });
    return r;
  }
}

/** Type of an answer string `TYPE rdata`. */
export function answerType(a: string): string {
  const i = a.indexOf(' ');
  return (i < 0 ? a : a.slice(0, i)).toUpperCase();
}

/** rdata of an answer string `TYPE rdata`. */
export function answerData(a: string): string {
  const i = a.indexOf(' ');
  return i < 0 ? '' : a.slice(i + 1);
}

/** The name made absolute for the wire: one trailing dot added when missing. */
export const wireName = fqdn;

/**
 * Whether a name can be encoded in a DNS message: labels of 1..63 octets, at most 255 octets
 * on the wire (253 characters without the trailing dot). The root `.` is fine.
 */
export function encodable(name: string): boolean {
  if (name === '.' || name === '') return true;
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  if (Buffer.byteLength(n) > 253) return false;
  return n.split('.').every((l) => l.length >= 1 && Buffer.byteLength(l) <= 63);
}

export function countDots(name: string): number {
  let n = 0;
  for (const c of name) if (c === '.') n++;
  return n;
}
