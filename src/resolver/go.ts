// Go 1.19 pure resolver: nameList (src/net/dnsconfig_unix.go / dnsclient_unix.go:477-515),
// goLookupIPCNAMEOrder (:596-760), Resolver.lookup and tryOneName (:258-330) with checkHeader
// (:207-236).
import type { ResolvConf } from '../pkg/resolvconf.js';
import type { Exchange, LookupMode, LookupResult, SendResult, Status } from './types.js';
import { answerData, answerType, countDots } from './types.js';
import { pushAll } from '../pkg/arrays.js';

interface GoError {
  text: string;
  status: Status;
}

export class GoResolver {
  /** conf.serverOffset(): advanced per tryOneName when `rotate` is set. */
  private soffset = 0;

  constructor(
    private readonly conf: ResolvConf,
    private readonly ex: Exchange,
  ) {}

  /** conf.nameList: the candidates, absolute. */
  nameList(name: string): string[] {
    if (avoidDNS(name)) return [];
    const l0 = name.length;
    const rooted = l0 > 0 && name.endsWith('.');
    if (l0 > 254 || (l0 === 254 && !rooted)) return [];
    if (rooted) return [name];
    const hasNdots = countDots(name) >= this.conf.ndots;
    const abs = `${name}.`;
    const l = l0 + 1;
    const names: string[] = [];
    if (hasNdots) names.push(abs);
    for (const suffix of this.conf.search) if (l + suffix.length <= 254) names.push(abs + suffix);
    if (!hasNdots) names.push(abs);
    return names;
  }

  /** tryOneName: attempts x servers in order; NXDOMAIN and "no records of the type" are final for the name. */
  private async tryOneName(fqdn: string, qtype: string): Promise<{ answers: string[] } | { err: GoError }> {
    if (!packable(fqdn)) {
      // `name..` (a `.` search entry in 1.19) cannot be packed: every try fails before sending.
      return { err: { text: 'cannot marshal DNS message', status: 'BADNAME' } };
    }
    const servers = this.conf.nameservers;
    const offset = this.conf.rotate ? this.soffset++ : 0;
    let lastErr: GoError = { text: 'no such host', status: 'NXDOMAIN' };
    for (let i = 0; i < this.conf.attempts; i++) {
      for (let j = 0; j < servers.length; j++) {
        const server = servers[(offset + j) % servers.length]!;
        const [r] = await this.ex.round([{ name: fqdn, type: qtype, server }]);
        const e = checkHeader(r!);
        if (e === 'timeout') {
          lastErr = { text: 'i/o timeout', status: 'TIMEOUT' };
          continue;
        }
        if (e === 'nxdomain') return { err: { text: 'no such host', status: 'NXDOMAIN' } };
        if (e === 'servfail') {
          lastErr = { text: 'server misbehaving', status: 'SERVFAIL' };
          continue;
        }
        if (e === 'misbehaving') {
          lastErr = { text: 'server misbehaving', status: 'REFUSED' };
          continue;
        }
        if (e === 'lame') {
          lastErr = { text: 'lame referral', status: 'REFUSED' };
          continue;
        }
        // skipToAnswer: an answer of the type asked, else "no such host", final for this name.
        const answers = r!.answers.filter((a) => answerType(a) === qtype);
        if (answers.length > 0) return { answers: answers.map(answerData) };
        return { err: { text: 'no such host', status: 'NODATA' } };
      }
    }
    return { err: lastErr };
  }

  async lookup(name: string, mode: LookupMode): Promise<LookupResult> {
    if (!isDomainName(name)) return { status: 'BADNAME', answers: [], error: 'no such host', source: 'none' };
    const names = this.nameList(name);
    if (names.length === 0) return { status: 'BADNAME', answers: [], error: 'no such host', source: 'none' };
    if (mode.kind === 'res_search') {
      // Resolver.lookup: each candidate until one succeeds; the last error is kept.
      let lastErr: GoError | undefined;
      for (const fqdn of names) {
        const r = await this.tryOneName(fqdn, mode.type);
        if ('answers' in r) return { status: 'ok', answers: r.answers, source: 'dns' };
        lastErr = r.err;
      }
      return { status: lastErr!.status, answers: [], error: lastErr!.text, source: 'dns' };
    }
    const qtypes = mode.family === 'INET' ? ['A'] : mode.family === 'INET6' ? ['AAAA'] : ['A', 'AAAA'];
    let lastErr: GoError | undefined;
    for (const fqdn of names) {
      // A and AAAA concurrently (one round trip), or one after the other with single-request.
      const results: ({ answers: string[] } | { err: GoError })[] = [];
      if (this.conf.singleRequest || qtypes.length === 1) {
        for (const t of qtypes) results.push(await this.tryOneName(fqdn, t));
      } else {
        pushAll(results, await this.concurrent(fqdn, qtypes));
      }
      const addrs: string[] = [];
      for (const r of results) {
        if ('err' in r) {
          // No error ends the walk (StrictErrors off); the error for the bare name is preferred.
          if (lastErr === undefined || fqdn === `${name}.`) lastErr = r.err;
          continue;
        }
        pushAll(addrs, r.answers);
      }
      if (addrs.length > 0) return { status: 'ok', answers: addrs, source: 'dns' };
    }
    return { status: lastErr?.status ?? 'NXDOMAIN', answers: [], error: lastErr?.text ?? 'no such host', source: 'dns' };
  }

  /**
   * Both tryOneName walks run at once; each step of the two walks goes out together, so a round
   * trip is counted per step, not per query. Queries are recorded A first.
   */
  private async concurrent(fqdn: string, qtypes: string[]): Promise<({ answers: string[] } | { err: GoError })[]> {
    const before = this.ex.roundTrips;
    const out: ({ answers: string[] } | { err: GoError })[] = [];
    let maxSteps = 0;
    for (const t of qtypes) {
      const start = this.ex.roundTrips;
      out.push(await this.tryOneName(fqdn, t));
      maxSteps = Math.max(maxSteps, this.ex.roundTrips - start);
    }
    this.ex.roundTrips = before + maxSteps;
    return out;
  }
}

type HeaderError = 'timeout' | 'nxdomain' | 'servfail' | 'misbehaving' | 'lame' | undefined;

/** checkHeader (:207-236). */
function checkHeader(r: SendResult): HeaderError {
  if (r.timeout) return 'timeout';
  if (r.rcode === 'NXDOMAIN') return 'nxdomain';
  if (r.rcode === 'NOERROR' && r.authoritative === false && r.recursionAvailable === false && r.answers.length === 0) return 'lame';
  if (r.rcode === 'SERVFAIL') return 'servfail';
  if (r.rcode !== 'NOERROR') return 'misbehaving';
  return undefined;
}

/** avoidDNS: `.onion` names never go to DNS (RFC 7686). */
function avoidDNS(name: string): boolean {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  return n.toLowerCase().endsWith('.onion') || n.toLowerCase() === 'onion';
}

/** dnsmessage.NewName + packing: labels of 1..63 octets, 255 octets at most. */
function packable(fqdn: string): boolean {
  if (fqdn === '.') return true;
  const body = fqdn.endsWith('.') ? fqdn.slice(0, -1) : fqdn;
  if (fqdn.length > 255) return false;
  return body.split('.').every((l) => l.length >= 1 && l.length <= 63);
}

/** isDomainName (net/dnsclient.go): letters, digits, '_', '-' and dots; labels 1..63; 254 octets with the root. */
function isDomainName(s: string): boolean {
  if (s === '.') return true;
  const l = s.length;
  if (l === 0 || l > 254 || (l === 254 && !s.endsWith('.'))) return false;
  let last = '.';
  let nonNumeric = false;
  let partlen = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_') {
      nonNumeric = true;
      partlen++;
    } else if (c >= '0' && c <= '9') partlen++;
    else if (c === '-') {
      if (last === '.') return false;
      partlen++;
      nonNumeric = true;
    } else if (c === '.') {
      if (last === '.' || last === '-') return false;
      if (partlen > 63 || partlen === 0) return false;
      partlen = 0;
    } else return false;
    last = c;
  }
  if (last === '-' || partlen > 63) return false;
  return nonNumeric;
}
