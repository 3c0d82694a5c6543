// musl 1.2.3: __lookup_name / name_from_dns_search / name_from_dns (src/network/lookup_name.c)
// and __res_msend_rc (src/network/res_msend.c:107-176).
import type { ResolvConf } from '../pkg/resolvconf.js';
import type { Exchange, LookupMode, LookupResult, SendResult } from './types.js';
import { answerData, answerType, countDots } from './types.js';

/** Type codes musl's getaddrinfo and res_query send here. */
const TYPE_CODES: Record<string, number> = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33 };

let nextId = 0x5a5a;

/**
 * The query musl 1.2.3 puts on the wire for `name` (__res_mkquery in src/network/res_mkquery.c,
 * then name_from_dns clearing the AD bit), byte for byte, or undefined where musl refuses to
 * build one. 1.2.3 strips one trailing dot and does not check for a second, so `web..` (a `.`
 * search entry) becomes the label `web` followed by a 0x2e byte where the terminating zero
 * belongs: `03 'web' 2e 00 01 00 01 00`, which no server can parse.
 */
export function muslQuery(name: string, type: string): Buffer | undefined {
  const code = TYPE_CODES[type];
  if (code === undefined) return undefined;
  const dname = Buffer.from(name, 'latin1');
  let l = Math.min(dname.length, 255);
  if (l > 0 && dname[l - 1] === 0x2e) l--;
  const n = 17 + l + (l > 0 ? 1 : 0);
  if (l > 253) return undefined;
  const q = Buffer.alloc(Math.max(n, 280));
  q[2] = 1; // op 0, RD
  q[3] = 0; // name_from_dns clears the AD bit __res_mkquery sets
  q[5] = 1;
  dname.copy(q, 13, 0, l);
  let i = 13;
  while (q[i] !== 0) {
    let j = i;
    while (q[j] !== 0 && q[j] !== 0x2e) j++;
    if (j - i - 1 > 62 || j === i) return undefined; // (j-i-1u > 62u) also rejects empty labels
    q[i - 1] = j - i;
    i = j + 1;
  }
  q[i + 1] = code;
  q[i + 3] = 1; // class IN
  nextId = (nextId * 1103515245 + 12345) & 0xffff;
  q.writeUInt16BE(nextId, 0);
  return q.subarray(0, n);
}

type Outcome =
  | { kind: 'addrs'; answers: string[] }
  | { kind: 'next' } // NXDOMAIN: try the next candidate
  | { kind: 'stop'; status: LookupResult['status']; error: string };

export class MuslResolver {
  constructor(
    private readonly conf: ResolvConf,
    private readonly ex: Exchange,
  ) {}

  /**
   * __res_msend_rc: every unanswered query to every nameserver at once, once per retry interval
   * (timeout/attempts) until `timeout`; the first NOERROR/NXDOMAIN reply is kept; a SERVFAIL
   * triggers an immediate re-send to that server (at most 2 x queries per round) but is never
   * kept; REFUSED and other rcodes are ignored. Rounds are modelled as `attempts` (the number of
   * retry intervals within the timeout). Returns the kept reply per query, undefined = none.
   */
  private async msend(name: string, types: string[], wires?: Buffer[]): Promise<(SendResult | undefined)[]> {
    const kept: (SendResult | undefined)[] = types.map(() => undefined);
    const rounds = this.conf.timeout > 0 ? this.conf.attempts : 0;
    const servers = this.conf.nameservers;
    for (let round = 0; round < rounds; round++) {
      if (kept.every((k) => k !== undefined)) break;
      const items: { i: number; server: string }[] = [];
      types.forEach((_, i) => {
        if (kept[i] === undefined) for (const server of servers) items.push({ i, server });
      });
      const replies = await this.ex.round(items.map((it) => ({ name, type: types[it.i]!, server: it.server, ...(wires ? { wire: wires[it.i]! } : {}) })));
      let servfailRetry = 2 * types.length;
      const queue = items.map((it, k) => ({ ...it, reply: replies[k]! }));
      while (queue.length > 0) {
        if (kept.every((k) => k !== undefined)) break; // all answered: msend returns
        const { i, server, reply } = queue.shift()!;
        if (reply.timeout || kept[i] !== undefined) continue;
        if (reply.rcode === 'NOERROR' || reply.rcode === 'NXDOMAIN') kept[i] = reply;
        else if (reply.rcode === 'SERVFAIL' && servfailRetry > 0) {
          servfailRetry--;
          queue.push({ i, server, reply: await this.ex.extra(name, types[i]!, server, wires?.[i]) });
        }
      }
    }
    return kept;
  }

  /** name_from_dns (:138-176) for one candidate. */
  private async fromDns(candidate: string, types: string[]): Promise<Outcome> {
    // __res_mkquery fails for names over 253 characters: EAI_NONAME, the lookup ends (1.2.4+ skips instead).
    const stripped = candidate.endsWith('.') && !candidate.endsWith('..') ? candidate.slice(0, -1) : candidate;
    if (Buffer.byteLength(stripped) > 253) return { kind: 'stop', status: 'BADNAME', error: 'EAI_NONAME' };
    const name = candidate.endsWith('.') ? candidate : `${candidate}.`;
    let kept: (SendResult | undefined)[];
    if (/\.\.$/.test(name) || name.includes('..')) {
      // A `.` search token gives `name..`: 1.2.3 encodes a packet no server can parse
      // and sends it as it is; a server answers FORMERR at best, which musl ignores, so the
      // lookup waits out the timeout.
      const wires = types.map((t) => muslQuery(candidate, t));
      if (wires.some((w) => w === undefined)) return { kind: 'stop', status: 'BADNAME', error: 'EAI_NONAME' };
      kept = await this.msend(name, types, wires as Buffer[]);
    } else kept = await this.msend(name, types);
    // Checked in query order: missing or SERVFAIL -> EAI_AGAIN; NXDOMAIN -> next candidate;
    // any other rcode -> EAI_FAIL (:165-175).
    for (const r of kept) {
      if (!r || r.rcode === 'SERVFAIL') return { kind: 'stop', status: this.silentStatus(), error: 'EAI_AGAIN' };
      if (r.rcode === 'NXDOMAIN') return { kind: 'next' };
      if (r.rcode !== 'NOERROR') return { kind: 'stop', status: 'REFUSED', error: 'EAI_FAIL' };
    }
    const answers = kept.flatMap((r) => r!.answers.filter((a) => types.includes(answerType(a))).map(answerData));
    if (answers.length > 0) return { kind: 'addrs', answers };
    // NOERROR without addresses: EAI_NONAME in 1.2.3 (EAI_NODATA from 1.2.4), and the lookup stops.
    return { kind: 'stop', status: 'NODATA', error: 'EAI_NONAME' };
  }

  /** Why msend kept nothing: the last reply it saw. */
  private silentStatus(): LookupResult['status'] {
    const recent = this.ex.queries[this.ex.queries.length - 1];
    if (!recent || recent.rcode === 'TIMEOUT') return 'TIMEOUT';
    if (recent.rcode === 'SERVFAIL') return 'SERVFAIL';
    return 'REFUSED';
  }

  private types(mode: LookupMode): string[] {
    if (mode.kind === 'res_search') return [mode.type];
    // name_from_dns: A unless AF_INET6, AAAA unless AF_INET; A first.
    if (mode.family === 'INET') return ['A'];
    if (mode.family === 'INET6') return ['AAAA'];
    return ['A', 'AAAA'];
  }

  async lookup(name: string, mode: LookupMode): Promise<LookupResult> {
    if (this.conf.attempts === 0 && this.conf.timeout > 0) {
      // res_msend computes timeout/attempts: attempts:0 is a division by zero (SIGFPE).
      return { status: 'CRASH', answers: [], error: 'SIGFPE (musl 1.2.3 divides the timeout by attempts:0)', source: 'none' };
    }
    const types = this.types(mode);
    if (mode.kind === 'res_search') {
      // musl's res_search is an alias of res_query: the name as given, no search list, no ndots.
      return this.fromDnsQuery(name, types);
    }
    // __lookup_name: names of 0 or 255+ characters are rejected (:300-330).
    if (name.length === 0 || name.length >= 255) return { status: 'BADNAME', answers: [], error: 'EAI_NONAME', source: 'none' };
    // name_from_dns_search (:178-220).
    const dots = countDots(name);
    let l = name.length;
    const search = dots >= this.conf.ndots || name.endsWith('.') ? [] : this.conf.search;
    if (name.endsWith('.')) l--;
    if (l === 0 || name[l - 1] === '.') return { status: 'BADNAME', answers: [], error: 'EAI_NONAME', source: 'none' };
    const bare = name.slice(0, l);
    for (const tok of search) {
      // Skipped when name + "." + token would not fit the 256-byte canon buffer (:210).
      if (!(Buffer.byteLength(tok) < 256 - l - 1)) continue;
      const o = await this.fromDns(`${bare}.${tok}`, types);
      if (o.kind === 'addrs') return { status: 'ok', answers: o.answers, source: 'dns' };
      if (o.kind === 'stop') return { status: o.status, answers: [], error: o.error, source: 'dns' };
    }
    const o = await this.fromDns(bare, types);
    if (o.kind === 'addrs') return { status: 'ok', answers: o.answers, source: 'dns' };
    if (o.kind === 'stop') return { status: o.status, answers: [], error: o.error, source: 'dns' };
    return { status: 'NXDOMAIN', answers: [], error: 'EAI_NONAME', source: 'dns' };
  }

  /** res_query (src/network/res_query.c): one query, h_errno from the reply. */
  private async fromDnsQuery(name: string, types: string[]): Promise<LookupResult> {
    const stripped = name.endsWith('.') ? name.slice(0, -1) : name;
    if (Buffer.byteLength(stripped) > 253 || stripped.endsWith('.')) return { status: 'BADNAME', answers: [], error: 'NO_RECOVERY', source: 'none' };
    const [r] = await this.msend(`${stripped}.`, types);
    if (!r) return { status: this.silentStatus(), answers: [], error: 'TRY_AGAIN', source: 'dns' };
    if (r.rcode === 'NXDOMAIN') return { status: 'NXDOMAIN', answers: [], error: 'HOST_NOT_FOUND', source: 'dns' };
    const answers = r.answers.filter((a) => types.includes(answerType(a))).map(answerData);
    if (r.answers.length === 0) return { status: 'NODATA', answers: [], error: 'NO_DATA', source: 'dns' };
    if (answers.length === 0) return { status: 'NODATA', answers: [], error: 'NO_DATA', source: 'dns' };
    return { status: 'ok', answers, source: 'dns' };
  }
}
