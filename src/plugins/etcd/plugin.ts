// The etcd plugin's query path: CoreDNS's plugin/etcd (handler.go, etcd.go) over
// plugin/backend_lookup.go, reading the in-memory mirror instead of etcd. Answers are computed
// synchronously; only a CNAME that leaves the plugin's zones needs the server's own lookup,
// and then the query is computed once more with those answers at hand.
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { Rcode, rr, type Rr } from '../../dns/records.js';
import { isSubdomain, matchZone } from '../../pkg/names.js';
import { fallsThrough } from '../../pkg/fall.js';
import type { Logger } from 'pino';
import { group, hostType, fqdnOf, nameProblem, targetStrip, type KeyedService } from './msg.js';
import { keyDomain, namePath, pathWithWildcard } from './path.js';
import type { EtcdConfig } from './config.js';
import type { EtcdMirror, Entry } from './mirror.js';
import { BudgetExceeded, DEFAULT_OUTSIDE_LOOKUPS, DEFAULT_QUERY_WORK, MAX_SECTION_RECORDS, QueryBudget, RateLimitedWarning } from './budget.js';
import { txtStrings } from './txt.js';

const DEFAULT_PRIORITY = 10;
const DEFAULT_TTL = 300;
const MAX_CNAME_CHAIN = 10;
/** How long startup waits for the first read of etcd. */
const START_WAIT_MS = 2000;
const NX = Symbol('nxdomain');
type Found = KeyedService[] | typeof NX;

class BackendError extends Error {}

interface State {
  /** Name as spelled (answer owners use it), fully qualified. */
  name: string;
  /** Lowercased. */
  qname: string;
  qtype: string;
  zone: string;
}

/**
 * Answers from the rest of the server for names outside the zones, filled between passes; keyed
 * `lowercased name|type`, so each distinct name is asked once per query.
 */
interface External {
  known: Map<string, Rr[] | null>;
  /** Key -> the name as first spelled (what is looked up). */
  missing: Map<string, string>;
  leased: boolean;
  /** Distinct outside lookups this query may make (query_budget's second number). */
  cap: number;
}

/** One pass over a question: its outside answers, its work budget, and what it already built. */
interface Query {
  ext: External;
  budget: QueryBudget;
  /**
   * Records of a name already built in this pass, by builder, type, spelling and CNAME depth:
   * a name reached along many CNAME paths is looked up once (CoreDNS looks it up once per path).
   */
  memo: Map<string, Rr[] | typeof NX>;
}

interface EtcdDeps {
  lookup(name: string, qtype: string): Promise<DnsResponse>;
  log?: Logger;
}

export class EtcdPlugin implements Plugin {
  readonly name = 'etcd';
  private readonly work: number;
  private readonly outside: number;
  private readonly overBudget: RateLimitedWarning;
  private readonly badTarget: RateLimitedWarning;

  constructor(
    readonly cfg: EtcdConfig,
    readonly mirror: EtcdMirror,
    private readonly deps: EtcdDeps,
    private readonly release: () => Promise<void> = async () => undefined,
  ) {
    this.work = cfg.queryBudget?.work ?? DEFAULT_QUERY_WORK;
    this.outside = cfg.queryBudget?.outside ?? DEFAULT_OUTSIDE_LOOKUPS;
    this.overBudget = new RateLimitedWarning(deps.log);
    this.badTarget = new RateLimitedWarning(deps.log);
  }

  /** Ready once the first full read of the path is mirrored (as CoreDNS's kubernetes waits for its first sync). */
  ready(): true | string {
    if (this.mirror.synced) return true;
    // lastError names the endpoints and the cause in words ("connection refused", "no answer in time").
    return `no full read of etcd yet: ${this.mirror.lastError ?? `still reading ${this.cfg.endpoints.join(' ')}`}`;
  }

  /**
   * Starts the mirror and waits (at most `startWait` ms) for its first read, so a server that
   * can reach etcd says ready with data; one that cannot starts anyway and answers SERVFAIL for
   * the etcd zones until the first read succeeds.
   */
  async start(): Promise<void> {
    this.mirror.start();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.mirror.firstSync, new Promise<void>((r) => (timer = setTimeout(r, START_WAIT_MS)))]);
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    await this.release();
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    const zone = matchZone(req.qname, this.cfg.zones);
    if (!zone) return next(req);
    // Nothing read yet: "no such name" would be a lie that resolvers cache.
    if (!this.mirror.synced) return { rcode: Rcode.SERVFAIL, aa: false, answer: [], authority: [], additional: [], cacheable: false };
    const ext: External = { known: new Map(), missing: new Map(), leased: false, cap: this.outside };
    const first = this.answer(req, zone, ext, next);
    if (ext.missing.size === 0) return first;
    return this.withExternal(req, zone, ext, next);
  }

  private async withExternal(req: DnsRequest, zone: string, ext: External, next: Next): Promise<DnsResponse> {
    // Each pass may find more outside names (a chain of CNAMEs); a few passes cover CoreDNS's depth.
    for (let pass = 0; pass < 4 && ext.missing.size > 0; pass++) {
      const todo = Array.from(ext.missing);
      ext.missing.clear();
      // At most `cap` distinct names in all, so this fan-out is bounded too.
      await Promise.all(
        todo.map(async ([k, name]) => {
          const type = k.slice(k.lastIndexOf('|') + 1);
          try {
            const res = await this.deps.lookup(name, type);
            ext.known.set(k, res.answer);
          } catch {
            ext.known.set(k, null);
          }
        }),
      );
      const r = this.answer(req, zone, ext, next);
      if (ext.missing.size === 0) return r;
    }
    return this.answer(req, zone, ext, next);
  }

  private answer(req: DnsRequest, zone: string, ext: External, next: Next): DnsResponse | Promise<DnsResponse> {
    const state: State = { name: req.name, qname: req.qname, qtype: req.qtype, zone };
    const q: Query = { ext, budget: new QueryBudget(this.work), memo: new Map() };
    let records: Rr[] = [];
    let extra: Rr[] = [];
    let nx = false;
    ext.leased = false;
    try {
      switch (req.qtype) {
        case 'A':
        case 'AAAA': {
          const r = this.address(state, [], q);
          if (r === NX) nx = true;
          else records = r;
          break;
        }
        case 'TXT': {
          const r = this.txt(state, [], q);
          if (r === NX) nx = true;
          else records = r;
          break;
        }
        case 'CNAME': {
          const r = this.services(state, true, q);
          if (r === NX) nx = true;
          else if (r.length > 0 && hostType(r[0]!).type !== 'A' && hostType(r[0]!).type !== 'AAAA')
            records = [rr(state.name, 'CNAME', r[0]!.ttl, fqdnOf(r[0]!.host))];
          break;
        }
        case 'PTR': {
          const r = this.services(state, true, q);
          if (r === NX) nx = true;
          else {
            const seen = new Set<string>();
            for (const s of r) {
              const t = hostType(s).type;
              if (t === 'A' || t === 'AAAA' || seen.has(s.host)) continue;
              seen.add(s.host);
              records.push(rr(state.name, 'PTR', s.ttl, fqdnOf(s.host)));
            }
          }
          break;
        }
        case 'MX':
        case 'SRV': {
          const r = this.srvMx(state, q);
          if (r === NX) nx = true;
          else ({ records, extra } = r);
          break;
        }
        case 'SOA':
          records = [this.soa(zone)];
          break;
        default:
          if (req.qtype === 'NS' && state.qname === zone) {
            const r = this.ns(state, q);
            if (r === NX) nx = true;
            else ({ records, extra } = r);
            break;
          }
          // Any other type, and NS below the apex: a fake A lookup tells NXDOMAIN from NODATA.
          if (this.address({ ...state, qtype: 'A' }, [], q) === NX) nx = true;
      }
    } catch (err) {
      if (err instanceof BudgetExceeded) {
        this.overBudget.warn(
          { qname: req.name, qtype: req.qtype, spent: q.budget.spent, outside: ext.known.size + ext.missing.size },
          `etcd: ${req.name} ${req.qtype} ${err.message}; answered SERVFAIL. The records it reaches fan out (many entries, CNAMEs to names with many entries): flatten them, or raise query_budget in the etcd block`,
        );
        // Nothing more is asked for a query that already failed.
        ext.missing.clear();
        // The same data gives the same verdict: keep it until etcd changes, so a client
        // repeating the question costs nothing more.
        return { rcode: Rcode.SERVFAIL, aa: true, answer: [], authority: [this.soa(zone)], additional: [], cacheable: !ext.leased && ext.known.size === 0 };
      }
      if (!(err instanceof BackendError)) throw err;
      return { rcode: Rcode.SERVFAIL, aa: true, answer: [], authority: [this.soa(zone)], additional: [], cacheable: false };
    }
    // Lease-backed TTLs and outside answers may change without an etcd event: do not keep them.
    const cacheable = !ext.leased && ext.known.size === 0;
    if (nx) {
      if (fallsThrough(this.cfg.fallthrough, state.qname)) return next(req);
      return { rcode: Rcode.NXDOMAIN, aa: true, answer: [], authority: [this.soa(zone)], additional: [], cacheable };
    }
    if (records.length === 0) return { rcode: Rcode.NOERROR, aa: true, answer: [], authority: [this.soa(zone)], additional: [], cacheable };
    // More than any message can carry: the encoder sends what fits, with TC.
    if (records.length > MAX_SECTION_RECORDS) records = records.slice(0, MAX_SECTION_RECORDS);
    if (extra.length > MAX_SECTION_RECORDS) extra = extra.slice(0, MAX_SECTION_RECORDS);
    return { rcode: Rcode.NOERROR, aa: true, answer: records, authority: [], additional: extra, cacheable };
  }

  /**
   * SOA of a zone. The serial is the highest etcd revision at which the mirror saw the path change
   * (see EtcdMirror.revision): every replica reading the same data computes the same one, and a
   * replica never lowers its own.
   */
  soa(zone: string): Rr {
    const join = (l: string): string => (zone === '.' ? `${l}.` : `${l}.${zone}`);
    return rr(zone, 'SOA', 30, {
      mname: join('ns.dns'),
      rname: join('hostmaster'),
      serial: this.mirror.revision >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: 30,
    });
  }

  // ---- backend: Records / loopNodes / TTL (etcd.go) --------------------------------------

  private services(state: State, exact: boolean, q: Query): Found {
    const prefix = this.cfg.path;
    const { path, star } = pathWithWildcard(state.qname, prefix);
    let entries: Entry[];
    if (exact) {
      const e = this.mirror.get(path);
      entries = e ? [e] : [];
    } else {
      const r = this.mirror.range(path.endsWith('/') ? path : path + '/', this.cfg.lookupLimit);
      entries = r.entries;
      if (r.truncated) this.mirror.countTruncated();
      if (entries.length === 0) {
        const e = this.mirror.get(path.replace(/\/$/, ''));
        entries = e ? [e] : [];
      }
    }
    q.budget.charge(1 + entries.length);
    if (entries.length === 0) return NX;
    const segments = star ? namePath(state.qname, prefix).split('/') : [];
    const out: KeyedService[] = [];
    nodes: for (const e of entries) {
      if (star) {
        const keyParts = e.key.split('/');
        for (let i = 0; i < segments.length; i++) {
          if (i > keyParts.length - 1) continue nodes;
          const n = segments[i]!;
          if (n === '*' || n === 'any') continue;
          if (keyParts[i] !== n) continue nodes;
        }
      }
      const s: KeyedService = { ...e.svc, key: e.key };
      s.ttl = this.ttl(e, s, q.ext);
      if (s.priority === 0) s.priority = DEFAULT_PRIORITY;
      if ((state.qtype === 'TXT' && s.text !== '') || s.host !== '') out.push(s);
    }
    return group(out);
  }

  /** The smaller of the record's TTL and its lease's (clamped to min/max-lease-ttl); 300 when neither. */
  private ttl(e: Entry, s: KeyedService, ext: External): number {
    let etcdTtl = 0;
    if (e.lease !== '0') {
      const granted = this.mirror.leaseTtl(e.lease);
      if (granted !== undefined && granted > 0) {
        etcdTtl = Math.min(Math.max(granted, this.cfg.minLeaseTtl), this.cfg.maxLeaseTtl);
        ext.leased = true;
      }
    }
    if (etcdTtl === 0 && s.ttl === 0) return DEFAULT_TTL;
    if (etcdTtl === 0) return s.ttl;
    if (s.ttl === 0) return etcdTtl;
    return Math.min(etcdTtl, s.ttl);
  }

  /** checkForApex: the apex's addresses live under apex.dns.ZONE, else the zone's whole tree. */
  private apexServices(state: State, q: Query): Found {
    if (state.qname !== state.zone) return this.services(state, false, q);
    const apex = this.services({ ...state, qname: join('apex.dns', state.zone) }, false, q);
    if (apex !== NX) return apex;
    return this.services(state, false, q);
  }

  // ---- record builders (backend_lookup.go) ------------------------------------------------

  /**
   * A builder's records for a name, computed once per pass for each spelling, type and CNAME
   * depth (the depth decides where a chain stops, so results at different depths may differ).
   */
  private memoised(kind: string, state: State, previous: Rr[], q: Query, build: () => Rr[] | typeof NX): Rr[] | typeof NX {
    const key = `${kind}|${state.qtype}|${previous.length}|${state.name}`;
    const known = q.memo.get(key);
    if (known !== undefined) return known;
    const r = build();
    q.memo.set(key, r);
    return r;
  }

  /** A and AAAA, following CNAMEs inside the zone and asking the server for those outside. */
  private address(state: State, previous: Rr[], q: Query): Rr[] | typeof NX {
    return this.memoised('addr', state, previous, q, () => {
      const services = this.apexServices(state, q);
      if (services === NX) return NX;
      const out = new RecordList(q.budget);
      const dup = new Set<string>();
      for (const s of services) {
        const { type, ip } = hostType(s);
        if (type === 'CNAME' || type === 'TXT') {
          // A second entry to the same target would add the same records again.
          if (type === 'CNAME' && !dup.has(fqdnOf(s.host).toLowerCase())) {
            dup.add(fqdnOf(s.host).toLowerCase());
            out.addAll(this.chase(s, state, previous, q, (st, prev) => this.address(st, prev, q)));
          }
          continue;
        }
        if (type !== state.qtype) continue;
        if (dup.has(s.host)) continue;
        dup.add(s.host);
        out.add(rr(state.name, type, s.ttl, ip));
      }
      return out.records;
    });
  }

  /**
   * A service whose host is a name: the CNAME and what its target answers (`lookup` inside the
   * zone, the server outside it), or nothing for a chain that loops, points below the question
   * or grows past MAX_CNAME_CHAIN (backend_lookup.go, shared by A/AAAA and TXT).
   */
  private chase(s: { host: string; ttl: number }, state: State, previous: Rr[], q: Query, lookup: (state: State, previous: Rr[]) => Rr[] | typeof NX): Rr[] {
    const target = fqdnOf(s.host);
    const targetLower = target.toLowerCase();
    if (isSubdomain(targetLower, state.qname)) return []; // x CNAME x, or a name below it
    const cname = rr(state.name, 'CNAME', s.ttl, target);
    if (previous.length > MAX_CNAME_CHAIN) return [];
    if (previous.some((p) => p.type === 'CNAME' && p.data === target)) return [];
    if (isSubdomain(targetLower, state.zone)) {
      const nextRecords = lookup({ ...state, name: target, qname: targetLower }, [...previous, cname]);
      if (nextRecords === NX || nextRecords.length === 0) return [];
      return withCname(cname, nextRecords);
    }
    const answers = this.external(q.ext, target, state.qtype);
    return answers ? withCname(cname, answers) : [];
  }

  private txt(state: State, previous: Rr[], q: Query): Rr[] | typeof NX {
    return this.memoised('txt', state, previous, q, () => {
      const services = this.services(state, false, q);
      if (services === NX) return NX;
      const out = new RecordList(q.budget);
      const dup = new Set<string>();
      for (const s of services) {
        const { type } = hostType(s);
        if (type === 'CNAME') {
          // A second entry to the same target would add the same records again.
          const target = `\0${fqdnOf(s.host).toLowerCase()}`;
          if (!dup.has(target)) {
            dup.add(target);
            out.addAll(this.chase(s, state, previous, q, (st, prev) => this.txt(st, prev, q)));
          }
          continue;
        }
        if (type === 'TXT' && !dup.has(s.text)) {
          dup.add(s.text);
          out.add(rr(state.name, 'TXT', s.ttl, txtStrings(s.text)));
        }
      }
      return out.records;
    });
  }

  /**
   * A target made from a key (`a//b` segments, a 64-octet segment) that no message can carry:
   * skipped with a warning naming the key, instead of failing the whole answer in the encoder.
   */
  private carriable(target: string, key: string): boolean {
    const problem = nameProblem(target);
    if (problem === undefined) return true;
    this.badTarget.warn(
      { key, target },
      `etcd: skipping ${key}: its key makes the name ${JSON.stringify(target)} (${problem}); rename the key so that every segment is a DNS label of 1 to 63 octets`,
    );
    return false;
  }

  private srvMx(state: State, q: Query): { records: Rr[]; extra: Rr[] } | typeof NX {
    const services = this.services(state, false, q);
    if (services === NX) return NX;
    const mx = state.qtype === 'MX';
    const records = new RecordList(q.budget);
    const extra = new RecordList(q.budget);
    const dup = new Set<string>();
    const lookedUp = new Set<string>();
    const w = new Map<number, number>();
    if (!mx) {
      for (const s of services) w.set(s.priority, (w.get(s.priority) ?? 0) + (s.weight !== 0 ? s.weight : 100));
    }
    for (const s of services) {
      if (mx && !s.mail) continue;
      if (!mx && s.port === -1) continue;
      let weight = 0;
      if (!mx) {
        let w1 = 100 / w.get(s.priority)!;
        w1 *= s.weight === 0 ? 100 : s.weight;
        weight = Math.max(1, Math.floor(w1)) & 0xffff;
      }
      const { type, ip } = hostType(s);
      if (type === 'CNAME' || type === 'TXT') {
        let target = fqdnOf(s.host);
        if (s.targetstrip > 0) target = targetStrip(target, s.targetstrip);
        records.push(
          mx
            ? rr(state.name, 'MX', s.ttl, { preference: s.priority & 0xffff, exchange: target })
            : rr(state.name, 'SRV', s.ttl, { priority: s.priority & 0xffff, weight, port: s.port & 0xffff, target }),
        );
        if (lookedUp.has(target)) continue;
        lookedUp.add(target);
        const lower = target.toLowerCase();
        if (!isSubdomain(lower, state.zone)) {
          const a = this.external(q.ext, target, 'A');
          if (a) extra.pushAll(a);
          const aaaa = this.external(q.ext, target, 'AAAA');
          if (aaaa) extra.pushAll(aaaa.filter((x) => x.type !== 'CNAME'));
          continue;
        }
        const addr = this.address({ ...state, name: target, qname: lower, qtype: 'A' }, [], q);
        if (addr !== NX) extra.pushAll(addr);
        continue;
      }
      // An address as host: the target is the key's own name.
      let target = fqdnOf(keyDomain(s.key));
      if (s.targetstrip > 0) target = targetStrip(target, s.targetstrip);
      if (!this.carriable(target, s.key)) continue;
      const port = mx ? s.priority & 0xffff : s.port & 0xffff;
      const recKey = `${target}|${port}`;
      if (!dup.has(recKey)) {
        dup.add(recKey);
        records.push(
          mx
            ? rr(state.name, 'MX', s.ttl, { preference: s.priority & 0xffff, exchange: target })
            : rr(state.name, 'SRV', s.ttl, { priority: s.priority & 0xffff, weight, port: s.port & 0xffff, target }),
        );
      }
      const addrKey = `${target}|${s.host}`;
      if (!dup.has(addrKey)) {
        dup.add(addrKey);
        extra.push(rr(target, type, s.ttl, ip));
      }
    }
    return { records: records.records, extra: extra.records };
  }

  /** NS at the apex: the addresses under ns.dns.ZONE, named by their keys. */
  private ns(state: State, q: Query): { records: Rr[]; extra: Rr[] } | typeof NX {
    const services = this.services({ ...state, qname: join('ns.dns', state.zone) }, false, q);
    if (services === NX) return NX;
    const records: Rr[] = [];
    const extra: Rr[] = [];
    const seen = new Set<string>();
    for (const s of services) {
      const { type, ip } = hostType(s);
      if (type !== 'A' && type !== 'AAAA') throw new BackendError(`NS record must be an IP address: ${s.host}`);
      let target = fqdnOf(keyDomain(s.key));
      if (s.targetstrip > 0) target = targetStrip(target, s.targetstrip);
      if (!this.carriable(target, s.key)) continue;
      extra.push(rr(target, type, s.ttl, ip));
      if (seen.has(target)) continue;
      seen.add(target);
      records.push(rr(state.name, 'NS', s.ttl, target));
    }
    return { records, extra };
  }

  /** The server's answer for a name outside the zones, or undefined until a later pass has it. */
  private external(ext: External, name: string, qtype: string): Rr[] | undefined {
    const k = `${name.toLowerCase()}|${qtype}`;
    const known = ext.known.get(k);
    if (known !== undefined) return known ?? undefined;
    if (!ext.missing.has(k)) {
      if (ext.known.size + ext.missing.size >= ext.cap)
        throw new BudgetExceeded(`needs more than ${ext.cap} names outside the zones (query_budget's second number)`);
      ext.missing.set(k, name);
    }
    return undefined;
  }
}

/**
 * Records in the order built, each at most once (an RRset holds no duplicates; a name reached
 * along several CNAME paths would otherwise repeat its records once per path), every record
 * charged to the query's budget. `push` keeps duplicates, as SRV/MX answers do in CoreDNS.
 */
class RecordList {
  readonly records: Rr[] = [];
  private readonly seen = new Set<string>();
  constructor(private readonly budget: QueryBudget) {}

  add(r: Rr): void {
    this.budget.charge(1);
    const k = recordKey(r);
    if (this.seen.has(k)) return;
    this.seen.add(k);
    this.records.push(r);
  }

  addAll(rs: readonly Rr[]): void {
    for (const r of rs) this.add(r);
  }

  push(r: Rr): void {
    this.budget.charge(1);
    this.records.push(r);
  }

  pushAll(rs: readonly Rr[]): void {
    for (const r of rs) this.push(r);
  }
}

/** The CNAME, then its target's records (the caller's RecordList dedupes and charges them). */
function withCname(cname: Rr, records: readonly Rr[]): Rr[] {
  const out: Rr[] = [cname];
  for (const r of records) out.push(r);
  return out;
}

function recordKey(r: Rr): string {
  const d = (r as { data: unknown }).data;
  let data: string;
  if (typeof d === 'string') data = d.toLowerCase();
  else if (Array.isArray(d)) data = d.map((x: unknown) => (Buffer.isBuffer(x) ? x.toString('hex') : String(x))).join(' ');
  else data = JSON.stringify(d);
  return `${r.name.toLowerCase()}|${r.type}|${data}`;
}

function join(label: string, zone: string): string {
  return zone === '.' ? `${label}.` : `${label}.${zone}`;
}
