// The kubernetes plugin's query path, shaped after CoreDNS's handler.go, kubernetes.go and
// plugin/backend_lookup.go so that NXDOMAIN/NODATA decisions and quirks match it name by name.
import { fallsThrough } from '../../pkg/fall.js';
import { clientIp } from '../../chain/request.js';
import { isIP } from 'node:net';
import type { DnsRequest, DnsResponse, ListedQuestion, Next, SearchPathProvider, Transferer } from '../../chain/plugin.js';
import type { ClusterDataProvider } from '../../chain/cluster-data.js';
import { Rcode, rr, type Rr } from '../../dns/records.js';
import { isSubdomain, matchZone, isReverse } from '../../pkg/names.js';
import { parseIp, reverseNameToIp, canonicalIp, formatIp } from '../../pkg/ip.js';
import { INVALID, belowZone, parseRequest, type RecordRequest } from './names.js';
import { listQuestions } from './enumerate.js';
import type { KubernetesConfig } from './config.js';
import type { KubernetesStore, ReadySlice } from './store.js';
import { insertAll, pushAll } from '../../pkg/arrays.js';
import { andThen, dedup, eq, type Found, isPlainIPv4, type Item, type MaybePromise, NO_PORTS, NO_RECORDS, NX, portMatches, type State } from './lookup.js';
import { transferZone } from './xfr.js';

/** Version of the Kubernetes DNS specification served at dns-version.<zone>. */
export const DNS_SCHEMA_VERSION = '1.1.0';

export interface KubernetesDeps {
  /** Resolves a name through the whole server (ExternalName targets outside the zones). */
  lookup(name: string, qtype: string, from?: DnsRequest): Promise<DnsResponse>;
  /**
   * The server's own addresses (ns.ts), CoreDNS's localIPs fallback for NS; never empty.
   * `bindOnly`: from the bind addresses alone, never this machine's interfaces (`records`).
   */
  localAddresses(bindOnly?: boolean): string[];
}

export class KubernetesPlugin implements SearchPathProvider, Transferer, ClusterDataProvider {
  readonly name = 'kubernetes';

  constructor(
    readonly cfg: KubernetesConfig,
    private store: KubernetesStore,
    private readonly deps: KubernetesDeps,
    /** The manifest paths the store is loaded from (the block's own, else the command line's). */
    readonly manifestPaths: readonly string[] = cfg.manifests ?? [],
  ) {}

  /**
   * Name the server's addresses from the Corefile alone (bind lines, else 127.0.0.1), not from
   * this machine's interfaces, so `records` prints the same on every machine.
   */
  machineIndependent = false;

  /** Aborted on close: data that arrives after it is not swapped in. */
  readonly closing = new AbortController();

  close(): void {
    this.closing.abort();
  }

  /** Swaps in the store built from newly loaded manifests. */
  setStore(store: KubernetesStore): void {
    this.store = store;
  }

  get currentStore(): KubernetesStore {
    return this.store;
  }

  // ---- the ClusterDataProvider contract (k8s_external, records, the model for tools) --------

  get zones(): readonly string[] {
    return this.cfg.zones;
  }

  get ttl(): number {
    return this.cfg.ttl;
  }

  get blockManifests(): readonly string[] | undefined {
    return this.cfg.manifests;
  }

  clusterData(): KubernetesStore {
    return this.store;
  }

  clusterQuestions(): ListedQuestion[] {
    return listQuestions(this.cfg, this.store);
  }

  /**
   * The search path of the pod that sent the query, found by its source IP (`pods verified`
   * only, as CoreDNS's kubernetes AutoPath): its namespace's suffixes, then the bare name.
   */
  searchPath(req: DnsRequest): string[] | undefined {
    const zone = matchZone(req.qname, this.cfg.zones);
    if (!zone || this.cfg.pods !== 'verified') return undefined;
    const ip = canonicalIp(clientIp(req));
    const pod = ip ? this.store.podsWithIp(ip).find((p) => p.phase === 'Running') : undefined;
    if (!pod) return undefined;
    const join = (rel: string): string => (zone === '.' ? `${rel}.` : `${rel}.${zone}`);
    return [join(`${pod.namespace}.svc`), join('svc'), zone, ''];
  }

  /** The zone in CoreDNS's AXFR order, for the transfer plugin (xfr.ts). */
  transfer(zone: string): Rr[] | undefined {
    return transferZone(this, zone);
  }

  serve(req: DnsRequest, next: Next): MaybePromise<DnsResponse> {
    const zone = matchZone(req.qname, this.cfg.zones);
    if (!zone) return next(req);
    // Zone transfers are the transfer plugin's job.
    if (req.qtype === 'AXFR' || req.qtype === 'IXFR') return { rcode: Rcode.REFUSED, aa: false, answer: [], authority: [], additional: [], cacheable: true };
    const state: State = {
      name: req.name,
      qname: req.qname,
      qtype: req.qtype,
      zone,
      zoneSp: zone === '.' ? '.' : req.name.slice(req.name.length - zone.length),
      req,
    };
    switch (req.qtype) {
      case 'A':
      case 'AAAA':
        return this.serveAddresses(req, next, state);
      case 'SRV':
        return this.respondWithExtra(req, next, state, this.srv(state));
      case 'NS':
        // The apex test compares the lowercased name with the zone as spelled: a mixed-case
        // apex NS query is decided like A (CoreDNS handler.go quirk).
        if (state.qname === state.zoneSp) {
          const ns = this.ns(state);
          return this.respond(req, next, state, ns.records, ns.extra, true);
        }
        break;
      case 'ANY': {
        const any = this.any(state);
        if (any instanceof Promise) return any.then((r) => this.respondWithExtra(req, next, state, r));
        return this.respondWithExtra(req, next, state, any);
      }
    }
    const answer = this.answerWithoutExtra(state);
    if (answer instanceof Promise) return answer.then((records) => this.respond(req, next, state, records, undefined, true));
    return this.respond(req, next, state, answer, undefined, true);
  }

  /** A and AAAA: the only answers that may chase a CNAME outside the zones, which is not cached. */
  private serveAddresses(req: DnsRequest, next: Next, state: State): MaybePromise<DnsResponse> {
    const external = { used: false };
    const found = this.addresses(state, NO_RECORDS, external);
    // Only a lookup outside the zones uses `external`, and it makes the answer a promise.
    if (found instanceof Promise) return found.then((a) => this.respond(req, next, state, a, undefined, !external.used));
    return this.respond(req, next, state, found, undefined, true);
  }

  /** Every type whose answer has no additional section (A, AAAA, SRV, apex NS and ANY are served above). */
  private answerWithoutExtra(state: State): MaybePromise<Rr[] | typeof NX> {
    switch (state.qtype) {
      case 'TXT':
        return this.mapItems(state, (items) => items.filter((i) => i.text !== undefined).map((i) => rr(state.name, 'TXT', i.ttl, [i.text!])));
      case 'CNAME':
        return this.mapItems(state, (items) => {
          const first = items[0];
          return first && !isIP(first.host) ? [rr(state.name, 'CNAME', first.ttl, first.host)] : [];
        });
      case 'PTR':
        return this.ptr(state);
      case 'MX':
        return this.mapItems(state, () => []);
      case 'SOA':
        return state.qname === state.zone ? [this.soa(state)] : [];
      default:
        // A fake A lookup tells NODATA from NXDOMAIN for every other type (and a non-apex NS).
        return this.fakeA(state);
    }
  }

  private respondWithExtra(req: DnsRequest, next: Next, state: State, found: { records: Rr[]; extra: Rr[] } | typeof NX): MaybePromise<DnsResponse> {
    return found === NX ? this.respond(req, next, state, NX, undefined, true) : this.respond(req, next, state, found.records, found.extra, true);
  }

  private respond(
    req: DnsRequest,
    next: Next,
    state: State,
    records: Rr[] | typeof NX,
    extra: Rr[] | undefined,
    cacheable: boolean,
  ): MaybePromise<DnsResponse> {
    if (records === NX) {
      if (fallsThrough(this.cfg.fallthrough, req.qname)) return next(req);
      return { rcode: Rcode.NXDOMAIN, aa: true, answer: [], authority: [this.soa(state)], additional: [], cacheable: true };
    }
    if (records.length === 0) {
      return { rcode: Rcode.NOERROR, aa: true, answer: [], authority: [this.soa(state)], additional: [], cacheable };
    }
    return { rcode: Rcode.NOERROR, aa: true, answer: dedup(records), authority: [], additional: extra === undefined ? [] : dedup(extra), cacheable };
  }

  /**
   * ANY (RFC 8482 4.1): one RRset of the name instead of an empty answer, which would tell the
   * client the name has no records (CoreDNS decides ANY like any other type with a fake A
   * lookup, so it sends NODATA; the file plugin here answers ANY the same way). The CNAME of an
   * ExternalName service (not chased), else A, AAAA, SRV, the TXT of dns-version, the PTR of a reverse name, the
   * apex SOA; NODATA or NXDOMAIN as for A when the name has none of these.
   */
  private any(state: State): MaybePromise<{ records: Rr[]; extra: Rr[] } | typeof NX> {
    const none: Rr[] = [];
    if (isReverse(state.qname)) {
      const ptr = this.ptr({ ...state, qtype: 'PTR' });
      if (ptr === NX || ptr.length > 0) return ptr === NX ? NX : { records: ptr, extra: none };
    }
    // Only dns-version.<zone> has TXT, and no other record: ask it first.
    const txt = this.mapItems({ ...state, qtype: 'TXT' }, (items) =>
      items.filter((i) => i.text !== undefined).map((i) => rr(state.name, 'TXT', i.ttl, [i.text!])),
    );
    if (txt !== NX && txt.length > 0) return { records: txt, extra: none };
    const cname = this.mapItems({ ...state, qtype: 'CNAME' }, (items) => {
      const first = items[0];
      return first && !isIP(first.host) ? [rr(state.name, 'CNAME', first.ttl, first.host)] : [];
    });
    if (cname === NX) return NX;
    if (cname.length > 0) return { records: cname, extra: none };
    // An ExternalName was answered above, so these lookups stay synchronous in practice; andThen()
    // keeps them right if one ever is not.
    type Found = { records: Rr[]; extra: Rr[] } | typeof NX;
    return andThen<Rr[] | typeof NX, Found>(this.addresses({ ...state, qtype: 'A' }, NO_RECORDS, { used: false }), (a) => {
      if (a === NX) return NX;
      if (a.length > 0) return { records: a, extra: none };
      return andThen<Rr[] | typeof NX, Found>(this.addresses({ ...state, qtype: 'AAAA' }, NO_RECORDS, { used: false }), (aaaa) => {
        if (aaaa !== NX && aaaa.length > 0) return { records: aaaa, extra: none };
        const srv = this.srv({ ...state, qtype: 'SRV' });
        if (srv !== NX && srv.records.length > 0) return srv;
        if (state.qname === state.zone) return { records: [this.soa(state)], extra: none };
        return { records: none, extra: none };
      });
    });
  }

  private fakeA(state: State): MaybePromise<Rr[] | typeof NX> {
    return andThen(this.addresses({ ...state, qtype: 'A' }, NO_RECORDS, { used: false }), (a) => (a === NX ? NX : []));
  }

  /**
   * The SOA of the zone as last spelled, for the store it states the serial of: nearly every
   * query spells the zone the same way, so nearly every NXDOMAIN and NODATA shares one record
   * (records are not changed once made: the file plugin shares its zone's records the same way).
   */
  private soaKept: { zone: string; store: KubernetesStore | undefined; rr: Rr | undefined } = { zone: '', store: undefined, rr: undefined };

  soa(state: State): Rr {
    const z = state.zoneSp;
    const kept = this.soaKept;
    if (kept.rr !== undefined && kept.zone === z && kept.store === this.store) return kept.rr;
    const join = (label: string): string => (z === '.' ? `${label}.` : `${label}.${z}`);
    const record = rr(z, 'SOA', Math.min(this.cfg.ttl, 300), {
      mname: join('ns.dns'),
      rname: join('hostmaster'),
      serial: this.store.serial,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: this.cfg.ttl,
    });
    this.soaKept = { zone: z, store: this.store, rr: record };
    return record;
  }

  abs(state: State, relative: string): string {
    return state.zoneSp === '.' ? `${relative}.` : `${relative}.${state.zoneSp}`;
  }

  private mapItems(state: State, f: (items: Item[]) => Rr[]): Rr[] | typeof NX {
    const items = this.services(state);
    return items === NX ? NX : f(items);
  }

  // ---- backend lookups (CoreDNS's Services / Records) -----------------------------------

  /** kubernetes.go Services(): the special names first, then the object records. */
  private services(state: State): Found {
    const rel = belowZone(state.qname, state.zone);
    if (state.qtype === 'TXT') {
      if (rel === 'dns-version') {
        return [{ host: '', port: 0, relative: 'dns-version', ttl: 28800, text: DNS_SCHEMA_VERSION }];
      }
      // NODATA when the name has records of another type, else NXDOMAIN (also at the apex).
      const other = this.records(state, rel);
      if (other === NX) return NX;
      // A pinned zonal name without endpoints still exists (NODATA, kubernetes.go zonal branch).
      const zonal = this.cfg.zonal && rel.split('.').includes('_zone');
      return other.length > 0 || zonal ? [] : NX;
    }
    if (state.qtype === 'NS') return this.nsAddrs(state);
    if (rel === 'ns.dns') {
      const family = state.qtype === 'A' ? 4 : state.qtype === 'AAAA' ? 6 : 0;
      return this.nsAddrs(state).filter((i) => parseIp(i.host)?.family === family);
    }
    const found = this.records(state, rel);
    if (found === NX || state.qtype !== 'SRV') return found;
    // SRV for ExternalName services is not answered.
    return found.filter((i) => isIP(i.host) !== 0);
  }

  /** `rel`: the lowercased name below the zone (belowZone). */
  private records(state: State, rel: string): Found {
    const multicluster = this.cfg.multicluster.includes(state.zone);
    const r = parseRequest(rel, multicluster, this.cfg.zonal);
    if (r === INVALID) return NX;
    if (r.podOrSvc === '') return [];
    if (isReverse(state.qname)) return NX;
    if (!this.store.namespaceExposed(r.namespace)) return NX;
    if (r.podOrSvc === 'pod') return this.findPods(r);
    if (multicluster) return this.findImports(r);
    return this.findServices(r);
  }

  private findPods(r: RecordRequest): Found {
    if (this.cfg.pods === 'disabled') return NX;
    const podName = r.service;
    if (podName === '') return [];
    const ip = podName.split('-').length - 1 === 3 && !podName.includes('--') ? podName.replaceAll('-', '.') : podName.replaceAll('-', ':');
    const relative = `${podName}.${r.namespace}.pod`;
    if (this.cfg.pods === 'insecure') {
      const parsed = canonicalIp(ip);
      if (!parsed) return NX;
      return [{ host: parsed, port: -1, relative, ttl: this.cfg.ttl }];
    }
    const pods = this.store.podsWithIp(ip).filter((p) => eq(p.namespace, r.namespace));
    if (pods.length === 0) return NX;
    return pods.map(() => ({ host: ip, port: -1, relative, ttl: this.cfg.ttl }));
  }

  private findServices(r: RecordRequest): Found {
    if (r.service === '') return [];
    const svc = this.store.service(r.namespace, r.service);
    if (!svc) return NX;
    const ttl = this.cfg.ttl;
    const base = `${svc.name}.${svc.namespace}.svc`;
    if (r.topologyZone !== undefined) return this.findZonal(r, svc.headless, base);
    // A ClusterIP service is answered from the service alone: its slices only when asked for.
    if (this.cfg.ignoreEmptyService && svc.type !== 'ExternalName' && !svc.headless) {
      if (!this.store.slicesOf(svc.namespace, svc.name).some((s) => s.addresses.length > 0)) return NX;
    }
    if (svc.type === 'ExternalName') {
      if (r.endpoint !== '' || !svc.externalName || isIP(svc.externalName.replace(/\.$/, ''))) return NX;
      const target = svc.externalName.endsWith('.') ? svc.externalName : svc.externalName + '.';
      return [{ host: target, port: -1, relative: base, ttl }];
    }
    if (svc.headless || r.endpoint !== '') {
      const items = this.endpointItems(r, this.store.slicesOf(svc.namespace, svc.name), base, (ep) => r.endpoint === '' || eq(r.endpoint, ep.name));
      return items.length > 0 ? items : NX;
    }
    const items: Item[] = [];
    for (const p of svc.ports.length > 0 ? svc.ports : NO_PORTS) {
      if (!portMatches(r, p.name, p.protocol)) continue;
      for (const ip of svc.clusterIPs) items.push({ host: ip, port: p.port, relative: base, ttl });
    }
    return items.length > 0 ? items : NX;
  }

  private endpointItems(
    r: RecordRequest,
    slices: readonly ReadySlice[],
    base: string,
    want: (ep: { name: string; zone?: string }, slice: ReadySlice) => boolean,
  ): Item[] {
    const items: Item[] = [];
    for (const slice of slices) {
      for (const ep of slice.addresses) {
        if (!want(ep, slice)) continue;
        for (const p of slice.ports.length > 0 ? slice.ports : NO_PORTS) {
          if (!portMatches(r, p.name, p.protocol)) continue;
          const owner = slice.cluster !== undefined ? `${ep.name}.${slice.cluster}.${base}` : `${ep.name}.${base}`;
          items.push({ host: ep.ip, port: p.port, relative: owner, ttl: this.cfg.ttl });
        }
      }
    }
    return items;
  }

  /** `Z.pin._zone.svc...` and `Z.prefer._zone.svc...` (zonal option, headless services only). */
  private findZonal(r: RecordRequest, headless: boolean, base: string): Found {
    if (!headless) return NX;
    const slices = this.store.slicesOf(r.namespace, r.service);
    const z = r.topologyZone!;
    const inZone = this.endpointItems(r, slices, base, (ep) => ep.zone === z);
    if (inZone.length > 0 || r.zonalMode === 'pin') return inZone;
    return this.endpointItems(r, slices, base, () => true);
  }

  private findImports(r: RecordRequest): Found {
    if (r.service === '') return [];
    const si = this.store.serviceImport(r.namespace, r.service);
    if (!si) return NX;
    const base = `${si.name}.${si.namespace}.svc`;
    if (si.type === 'Headless' || r.endpoint !== '') {
      const slices = this.store.importSlicesOf(si.namespace, si.name);
      const items = this.endpointItems(r, slices, base, (ep, slice) => r.endpoint === '' || (eq(r.endpoint, ep.name) && eq(r.cluster, slice.cluster ?? '')));
      return items.length > 0 ? items : NX;
    }
    const items: Item[] = [];
    for (const p of si.ports.length > 0 ? si.ports : NO_PORTS) {
      if (!portMatches(r, p.name, p.protocol)) continue;
      for (const ip of si.ips) items.push({ host: ip, port: p.port, relative: base, ttl: this.cfg.ttl });
    }
    return items.length > 0 ? items : NX;
  }

  /**
   * The name servers of the zone. CoreDNS finds the Service whose endpoints hold its own pod
   * IPs; clusterdns stands in for the CoreDNS pods, so that is kube-system/kube-dns when the
   * manifests declare it, else the server's own addresses as `ns.dns.<zone>` (ns.ts).
   */
  nsAddrs(state: State): Item[] {
    const ttl = this.cfg.ttl;
    const svc = this.store.service('kube-system', 'kube-dns');
    if (svc && svc.type !== 'ExternalName') {
      const base = `${svc.name}.${svc.namespace}.svc`;
      if (!svc.headless) return svc.clusterIPs.map((ip) => ({ host: ip, port: -1, relative: base, ttl }));
      const items = this.store
        .slicesOf(svc.namespace, svc.name)
        .flatMap((s) => s.addresses.map((a) => ({ host: a.ip, port: -1, relative: `${a.name}.${base}`, ttl })));
      if (items.length > 0) return items;
    }
    void state;
    return this.deps.localAddresses(this.machineIndependent).map((ip) => ({ host: ip, port: -1, relative: 'ns.dns', ttl }));
  }

  // ---- record builders (CoreDNS's plugin/backend_lookup.go) -------------------------------

  /** A/AAAA with CNAME chasing for ExternalName services. */
  private addresses(state: State, previous: readonly Rr[], external: { used: boolean }): MaybePromise<Rr[] | typeof NX> {
    const items = this.services(state);
    if (items === NX) return NX;
    const family = state.qtype === 'AAAA' ? 6 : 4;
    const records: Rr[] = [];
    // Made when a second address comes: most names have one.
    let first: string | undefined;
    let seen: Set<string> | undefined;
    let pending: Promise<void>[] | undefined;
    for (const item of items) {
      const host = item.host;
      const plain = isPlainIPv4(host);
      const parsed = plain ? undefined : parseIp(host);
      const ipFamily = plain ? 4 : parsed?.family;
      if (ipFamily !== undefined) {
        if (ipFamily !== family) continue;
        // One address under several ports is the common repeat: no Set for it.
        if (first === undefined) first = host;
        else if (host === first) continue;
        else {
          seen ??= new Set();
          if (seen.has(host)) continue;
          seen.add(host);
        }
        records.push(rr(state.name, family === 4 ? 'A' : 'AAAA', item.ttl, parsed ? formatIp(parsed) : host));
        continue;
      }
      const target = item.host;
      const targetLower = target.toLowerCase();
      if (targetLower === state.qname) continue; // CNAME to itself
      // CoreDNS's maxCnameChainLength (10 since v1.12.1; 7 before): a longer chain inside the
      // zone gets nothing, since each step keeps its CNAME only when the next one found records.
      if (previous.length > 10) continue;
      const cname = rr(state.name, 'CNAME', item.ttl, target.replace(/\.$/, '') === '' ? '.' : target);
      if (previous.some((p) => p.type === 'CNAME' && eq(p.name, cname.name) && eq(String(p.data), target))) continue;
      if (isSubdomain(targetLower, state.zone)) {
        const chased = this.addresses({ ...state, name: target, qname: targetLower }, [...previous, cname], external);
        const add = (next: Rr[] | typeof NX): void => {
          if (next === NX || next.length === 0) return;
          records.push(cname);
          pushAll(records, next);
        };
        if (chased instanceof Promise) (pending ??= []).push(chased.then(add));
        else add(chased);
        continue;
      }
      external.used = true;
      const slot = records.length;
      records.push(cname);
      (pending ??= []).push(
        this.deps.lookup(target, state.qtype, state.req).then(
          (res) => void insertAll(records, slot + 1, res.answer),
          () => undefined,
        ),
      );
    }
    if (pending === undefined) return records;
    return Promise.all(pending).then(() => records);
  }

  private srv(state: State): { records: Rr[]; extra: Rr[] } | typeof NX {
    const items = this.services(state);
    if (items === NX) return NX;
    // Weight: 100 split evenly over every match (before de-duplication), at least 1.
    const weight = Math.max(1, Math.floor((100 / (100 * Math.max(1, items.length))) * 100));
    const records: Rr[] = [];
    const extra: Rr[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      if (item.port === -1) continue;
      const ip = parseIp(item.host);
      if (!ip) continue;
      const target = this.abs(state, item.relative);
      const srvKey = `${target} ${item.port}`;
      if (!seen.has(srvKey)) {
        seen.add(srvKey);
        records.push(rr(state.name, 'SRV', item.ttl, { priority: 0, weight, port: item.port, target }));
      }
      const glueKey = `${target} ${item.host}`;
      if (!seen.has(glueKey)) {
        seen.add(glueKey);
        extra.push(rr(target, ip.family === 4 ? 'A' : 'AAAA', item.ttl, formatIp(ip)));
      }
    }
    return { records, extra };
  }

  private ptr(state: State): Rr[] | typeof NX {
    const ip = reverseNameToIp(state.qname);
    if (!ip) {
      const found = this.records(state, belowZone(state.qname, state.zone));
      return found === NX ? NX : [];
    }
    const targets = [...new Set(this.store.reverse(ip))];
    if (targets.length === 0) return NX;
    const zone = this.cfg.primaryZone;
    return targets.map((t) => rr(state.name, 'PTR', this.cfg.ttl, zone === '.' ? `${t}.` : `${t}.${zone}`));
  }

  private ns(state: State): { records: Rr[]; extra: Rr[] } {
    const records: Rr[] = [];
    const extra: Rr[] = [];
    const seen = new Set<string>();
    for (const item of this.nsAddrs(state)) {
      const ip = parseIp(item.host);
      if (!ip) continue;
      const target = this.abs(state, item.relative);
      extra.push(rr(target, ip.family === 4 ? 'A' : 'AAAA', item.ttl, formatIp(ip)));
      if (seen.has(target)) continue;
      seen.add(target);
      records.push(rr(state.name, 'NS', item.ttl, target));
    }
    return { records, extra };
  }
}

/** Records of the forward zones, counted as a zone transfer lists them (SOA once): clusterdns_records_loaded. */
export function countRecords(plugin: KubernetesPlugin): number {
  return plugin.cfg.zones.reduce((n, z) => {
    const rrs = plugin.transfer(z);
    return rrs ? n + rrs.length - 1 : n;
  }, 0);
}
