// glibc 2.36: __res_context_search (resolv/res_query.c:349-545), the A+AAAA pair of
// _nss_dns_gethostbyname4_r (resolv/nss_dns/dns-host.c:416-430, res_query.c:256-290) and the
// transport of __res_context_send (res_send.c:346-425, 1206-1262).
import type { ResolvConf } from '../pkg/resolvconf.js';
import type { Exchange, LookupMode, LookupResult, SendResult } from './types.js';
import { answerData, answerType, countDots, encodable, wireName } from './types.js';
import { pushAll } from '../pkg/arrays.js';

type HErrno = 'HOST_NOT_FOUND' | 'NO_DATA' | 'TRY_AGAIN' | 'NO_RECOVERY';

interface QueryOutcome {
  ok: boolean;
  /** Records of every reply accepted (A then AAAA). */
  answers: string[];
  herrno?: HErrno;
  /** rcode left in the first (A) answer buffer: the search loop continues on TRY_AGAIN only if it is SERVFAIL. */
  bufferRcode?: string;
  /** No server was reachable at all (ECONNREFUSED): the search stops at once. */
  connRefused?: boolean;
  timedOut?: boolean;
}

const BAD = new Set(['SERVFAIL', 'NOTIMP', 'REFUSED']);
const isBad = (r: SendResult | undefined): boolean => !r || !!r.timeout || BAD.has(r.rcode);

export class GlibcResolver {
  /** RES_ROTATE's global offset (res_send.c), advanced once per res_send call. */
  private rotateOffset = 0;

  constructor(
    private readonly conf: ResolvConf,
    private readonly ex: Exchange,
    /**
     * Whether the host has an IPv6 address other than ::1 (a link-local one counts:
     * sysdeps/unix/sysv/linux/check_pf.c). getaddrinfo's default AI_ADDRCONFIG (and getent's)
     * asks AAAA only then; a pod with IPv6 disabled sends A alone.
     */
    private readonly hostHasIpv6 = true,
  ) {}

  /** Types sent per candidate. */
  private types(mode: LookupMode): string[] {
    if (mode.kind === 'res_search') return [mode.type];
    if (mode.family === 'INET') return ['A'];
    if (mode.family === 'INET6') return ['AAAA'];
    return this.conf.noAaaa || !this.hostHasIpv6 ? ['A'] : ['A', 'AAAA'];
  }

  /** __res_context_query + __res_context_send for one candidate (absolute, as sent). */
  private async query(candidate: string, types: string[]): Promise<QueryOutcome> {
    // res_mkquery: a name that does not fit 255 octets cannot be encoded -> NO_RECOVERY, nothing sent.
    if (!encodable(candidate)) return { ok: false, answers: [], herrno: 'NO_RECOVERY' };
    const name = wireName(candidate);
    const servers = this.conf.nameservers.slice(0, 3);
    const offset = this.conf.rotate && servers.length > 0 ? this.rotateOffset++ % servers.length : 0;
    const order = servers.map((_, i) => servers[(i + offset) % servers.length]!);
    const sequential = this.conf.singleRequest || this.conf.singleRequestReopen;
    let bufferRcode: string | undefined;
    let gotSomewhere = false;
    // for each attempt, for each nameserver in order (res_send.c:346-425).
    for (let attempt = 0; attempt < this.conf.attempts; attempt++) {
      for (const server of order) {
        gotSomewhere = true;
        let replies: SendResult[];
        if (sequential) {
          replies = [];
          for (const t of types) pushAll(replies, await this.ex.round([{ name, type: t, server }]));
        } else replies = await this.ex.round(types.map((t) => ({ name, type: t, server })));
        const first = replies[0];
        if (first && !first.timeout) bufferRcode = first.rcode;
        // A timeout, SERVFAIL, NOTIMP or REFUSED moves on to the next server; for the pair, only
        // when neither reply is usable (send_dg's recvresp1/recvresp2 handling).
        if (replies.every(isBad)) continue;
        return this.decide(replies);
      }
    }
    if (!gotSomewhere) return { ok: false, answers: [], herrno: 'TRY_AGAIN', connRefused: true };
    return { ok: false, answers: [], herrno: 'TRY_AGAIN', bufferRcode, timedOut: bufferRcode === undefined };
  }

  /** res_query.c:256-290: the pair succeeds if either reply has answers; else the A rcode decides (the AAAA one if A was NOERROR). */
  private decide(replies: SendResult[]): QueryOutcome {
    const a = replies[0]!;
    const b = replies[1] && !replies[1].timeout ? replies[1] : a;
    const answers = replies.flatMap((r) => (r.timeout || r.rcode !== 'NOERROR' ? [] : [...r.answers]));
    const has = (r: SendResult): boolean => !r.timeout && r.rcode === 'NOERROR' && r.answers.length > 0;
    if (has(a) || has(b)) return { ok: true, answers, bufferRcode: a.timeout ? undefined : a.rcode };
    const aRcode = a.timeout ? 'SERVFAIL' : a.rcode;
    const code = aRcode === 'NOERROR' ? (b.timeout ? 'NOERROR' : b.rcode) : aRcode;
    const herrno: HErrno = code === 'NXDOMAIN' ? 'HOST_NOT_FOUND' : code === 'SERVFAIL' ? 'TRY_AGAIN' : code === 'NOERROR' ? 'NO_DATA' : 'NO_RECOVERY';
    return { ok: false, answers: [], herrno, bufferRcode: a.timeout ? undefined : a.rcode };
  }

  /** __res_context_search (res_query.c:349-545). */
  async lookup(nameIn: string, mode: LookupMode): Promise<LookupResult> {
    const types = this.types(mode);
    const name = nameIn;
    const dots = countDots(name); // :367-373
    const trailingDot = name.endsWith('.');
    let savedHerrno: HErrno | undefined;
    let triedAsIs = false;
    let last: QueryOutcome | undefined;
    const done = (q: QueryOutcome): LookupResult => this.success(q, mode);
    // 2. enough dots, or a trailing dot: the name as is first (:388-392).
    if (dots >= this.conf.ndots || trailingDot) {
      const q = await this.query(name, types);
      if (q.ok) return done(q);
      if (trailingDot) return this.failure(q.herrno!, mode, q);
      savedHerrno = q.herrno;
      triedAsIs = true;
      last = q;
    }
    // 3. search phase (:418-505).
    let searched = false;
    let rootOnList = false;
    let gotNodata = false;
    let gotServfail = false;
    if (!trailingDot) {
      for (const entry of this.conf.search) {
        searched = true;
        const dname = entry.startsWith('.') ? entry.slice(1) : entry; // `.` means the bare name (:436-441)
        if (dname === '') rootOnList = true;
        const candidate = dname === '' ? `${name}.` : `${name}.${dname}`;
        const q = await this.query(candidate, types);
        if (q.ok) return done(q);
        last = q;
        if (q.connRefused) return this.failure('TRY_AGAIN', mode, q);
        if (q.herrno === 'NO_DATA') gotNodata = true;
        else if (q.herrno === 'HOST_NOT_FOUND') {
          /* keep trying */
        } else if (q.herrno === 'TRY_AGAIN' && q.bufferRcode === 'SERVFAIL') gotServfail = true;
        else break; // REFUSED everywhere, timeout, unencodable candidate: the search phase ends
      }
    }
    // 4. the name as is, unless tried or a `.` entry was listed; no-tld-query skips it for dot-less names (:512-520).
    if ((dots > 0 || !searched || !this.conf.noTldQuery) && !(triedAsIs || rootOnList)) {
      const q = await this.query(name, types);
      if (q.ok) return done(q);
      last = q;
    }
    // 5. error returned (:537-541).
    let herrno: HErrno;
    if (savedHerrno !== undefined) herrno = savedHerrno;
    else if (gotNodata) herrno = 'NO_DATA';
    else if (gotServfail) herrno = 'TRY_AGAIN';
    else herrno = last?.herrno ?? 'HOST_NOT_FOUND';
    return this.failure(herrno, mode, last);
  }

  private success(q: QueryOutcome, mode: LookupMode): LookupResult {
    const want = mode.kind === 'res_search' ? [mode.type] : ['A', 'AAAA'];
    const answers = q.answers.filter((a) => want.includes(answerType(a))).map(answerData);
    if (answers.length === 0) {
      // ancount > 0 ends the search, but nothing of the type (a CNAME without its target).
      return { status: 'NODATA', answers: [], error: mode.kind === 'res_search' ? 'NO_DATA' : 'EAI_NODATA', source: 'dns' };
    }
    return { status: 'ok', answers, source: 'dns' };
  }

  private failure(herrno: HErrno, mode: LookupMode, q: QueryOutcome | undefined): LookupResult {
    const gai = mode.kind === 'getaddrinfo';
    switch (herrno) {
      case 'HOST_NOT_FOUND':
        return { status: 'NXDOMAIN', answers: [], error: gai ? 'EAI_NONAME' : herrno, source: 'dns' };
      case 'NO_DATA':
        return { status: 'NODATA', answers: [], error: gai ? 'EAI_NODATA' : herrno, source: 'dns' };
      case 'TRY_AGAIN': {
        // TRY_AGAIN covers every server failing: by timeout, SERVFAIL, or REFUSED (then getaddrinfo says EAI_AGAIN too).
        const status = q?.timedOut || q?.connRefused ? 'TIMEOUT' : q?.bufferRcode === 'SERVFAIL' || q?.bufferRcode === undefined ? 'SERVFAIL' : 'REFUSED';
        return { status, answers: [], error: gai ? 'EAI_AGAIN' : herrno, source: 'dns' };
      }
      case 'NO_RECOVERY':
        return {
          status: q && q.bufferRcode === undefined && !q.timedOut ? 'BADNAME' : 'REFUSED',
          answers: [],
          error: gai ? 'EAI_FAIL' : herrno,
          source: 'dns',
        };
    }
  }
}
