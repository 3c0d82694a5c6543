// The k8s_external plugin: Services' external addresses (spec.externalIPs and
// status.loadBalancer.ingress) under an outside zone, answered as CoreDNS's plugin/k8s_external
// (external.go, apex.go, msg_to_dns.go, transfer.go) with the kubernetes plugin's External*
// functions (plugin/kubernetes/external.go) reading the same cluster data.
import { answering } from '../../chain/answering.js';
import type { DnsRequest, DnsResponse, ListedQuestion, Next, RecordLister, Transferer } from '../../chain/plugin.js';
import { Rcode, rr, type Rr } from '../../dns/records.js';
import { isSubdomain, labelsBelow, matchZone } from '../../pkg/names.js';
import { canonicalIp, formatIp, parseIp, reverseNameToIp } from '../../pkg/ip.js';
import type { ClusterData, ClusterPort, ClusterService } from '../../chain/cluster-data.js';
import { DEFAULT_MAX_LOOKUPS, type K8sExternalConfig } from './config.js';

/** What the kubernetes plugin of the same block lends this plugin (through ClusterDataProvider). */
export interface ExternalSource {
  data(): ClusterData;
  /** The kubernetes plugin's ttl: SRV and CNAME records carry it (msg.Service.TTL). */
  ttl(): number;
  /** Non-loopback addresses the server is bound to, when no kube-dns Service exists. */
  localAddresses(): string[];
  lookup(name: string, qtype: string): Promise<DnsResponse>;
}

/** CoreDNS's msg.Service as External returns it. */
interface Item {
  /** IP address, or a host name (a load balancer `hostname`: answered as CNAME). */
  host: string;
  port: number;
  /** Owner of the item below the zone: 'svc.ns' or 'ep.svc.ns' (msg.Domain(Key)). */
  key: string;
  ttl: number;
}

/**
 * Ports, or CoreDNS's sentinel for none: object.ToService (service.go) and
 * EndpointSliceToEndpoints (endpoint.go) give a Service or slice without ports one port -1, so
 * its name answers A/AAAA and its SRV is NODATA (srv() skips port -1) instead of NXDOMAIN.
 */
const NO_PORT: ClusterPort = { name: '', protocol: '', port: -1 };
const portsOrSentinel = (ports: readonly ClusterPort[]): readonly ClusterPort[] => (ports.length > 0 ? ports : [NO_PORT]);

const eqFold = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const stripUnderscore = (s: string): string => (s.startsWith('_') ? s.slice(1) : s);
const matchPortAndProtocol = (port: string, pName: string, proto: string, pProto: string): boolean =>
  (port === '' || eqFold(port, pName)) && (proto === '' || eqFold(proto, pProto));

/** True when no record of `xs` waits on a lookup, so they answer without a promise. */
function noLookups(xs: readonly (Rr | Promise<Rr[]>)[]): xs is Rr[] {
  return !xs.some((x) => x instanceof Promise);
}

function join(...parts: string[]): string {
  return (
    parts
      .map((p) => p.replace(/\.$/, ''))
      .filter((p) => p !== '')
      .join('.') + '.'
  );
}

/** An endpoint of a headless Service in a zone transfer, with the port's name and protocol. */
interface HeadlessItem extends Item {
  portName: string;
  proto: string;
}

/** External address -> Services holding it (CoreDNS's SvcExtIndexReverse), once per data set. */
const reverseIndexes = new WeakMap<ClusterData, Map<string, ClusterService[]>>();

function reverseIndex(data: ClusterData): Map<string, ClusterService[]> {
  let index = reverseIndexes.get(data);
  if (index) return index;
  index = new Map();
  const services = [...data.services.values()].sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
  for (const svc of services) {
    for (const a of K8sExternalPlugin.externalAddresses(data, svc.namespace, svc.name)) {
      const ip = canonicalIp(a);
      if (!ip) continue;
      const list = index.get(ip);
      if (list) list.push(svc);
      else index.set(ip, [svc]);
    }
  }
  reverseIndexes.set(data, index);
  return index;
}

export class K8sExternalPlugin implements Transferer, RecordLister {
  readonly name = 'k8s_external';

  constructor(
    readonly cfg: K8sExternalConfig,
    private readonly source: () => ExternalSource,
  ) {}

  /** spec.externalIPs then every status.loadBalancer.ingress (ip, else hostname), as object.ToService builds ExternalIPs. */
  static externalAddresses(data: ClusterData, namespace: string, name: string): string[] {
    const svc = data.service(namespace, name);
    if (!svc) return [];
    const lb = svc.loadBalancer ?? [];
    return [...svc.externalIPs, ...lb.map((a) => a.ip ?? a.hostname ?? '')].filter((x) => x !== '');
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    return answering(req, () => this.serveIn(req, next));
  }

  private serveIn(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    const zone = matchZone(req.qname, this.cfg.zones);
    if (!zone) return next(req);
    for (const z of this.cfg.zones) {
      // As CoreDNS: the apex test compares the name as spelled, the sub-apex test ignores case.
      if (req.name === z) return this.serveApex(req, zone);
      if (isSubdomain(req.qname, join(this.cfg.apex, z))) return this.serveSubApex(req, zone);
    }
    const src = this.source();
    const { items, rcode } = this.external(src, req, zone);
    const soa = (): Rr[] => [this.soa(src, zone)];
    if (items.length === 0) {
      if (rcode === Rcode.NXDOMAIN && this.fallsThrough(req.qname)) return next(req);
      return { rcode, aa: true, answer: [], authority: soa(), additional: [], cacheable: true };
    }
    const finish = (answer: Rr[], additional: Rr[], cacheable: boolean): DnsResponse =>
      answer.length === 0
        ? { rcode: Rcode.NOERROR, aa: true, answer: [], authority: soa(), additional: [], cacheable }
        : { rcode: Rcode.NOERROR, aa: true, answer, authority: [], additional, cacheable };
    switch (req.qtype) {
      case 'A':
      case 'AAAA': {
        const r = this.address(src, items, req.qname, req.qtype === 'A' ? 4 : 6);
        return r instanceof Promise ? r.then((a) => finish(a, [], false)) : finish(r, [], true);
      }
      case 'SRV': {
        const r = this.srv(src, items, req.qname);
        return r instanceof Promise ? r.then((s) => finish(s.records, s.extra, false)) : finish(r.records, r.extra, true);
      }
      case 'PTR':
        return finish(this.ptr(items, req.qname), [], true);
      default:
        return finish([], [], true);
    }
  }

  private fallsThrough(qname: string): boolean {
    const ft = this.cfg.fallthrough;
    if (!ft) return false;
    return ft.length === 0 || ft.some((z) => isSubdomain(qname, z));
  }

  private soa(src: ExternalSource, zone: string): Rr {
    return rr(zone, 'SOA', this.cfg.ttl, {
      mname: join('ns1', this.cfg.apex, zone),
      rname: join('hostmaster', this.cfg.apex, zone),
      serial: src.data().serial,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: this.cfg.ttl,
    });
  }

  /** Kubernetes.ExternalAddress: the CoreDNS Service's external addresses (kube-system/kube-dns), else the server's own. */
  private nsAddresses(src: ExternalSource): string[] {
    const data = src.data();
    const svc = data.service('kube-system', 'kube-dns');
    if (!svc || svc.type === 'ExternalName') return src.localAddresses();
    if (this.cfg.headless && svc.headless) return data.slicesOf('kube-system', 'kube-dns').flatMap((s) => s.addresses.map((a) => a.ip));
    return K8sExternalPlugin.externalAddresses(data, 'kube-system', 'kube-dns').filter((a) => parseIp(a) !== undefined);
  }

  private addressRecords(src: ExternalSource, owner: string): Rr[] {
    return this.nsAddresses(src).flatMap((ip) => {
      const p = parseIp(ip);
      return p ? [rr(owner, p.family === 4 ? 'A' : 'AAAA', this.cfg.ttl, formatIp(p))] : [];
    });
  }

  private serveApex(req: DnsRequest, zone: string): DnsResponse {
    const src = this.source();
    const base: DnsResponse = { rcode: Rcode.NOERROR, aa: true, answer: [], authority: [], additional: [], cacheable: true };
    switch (req.qtype) {
      case 'SOA':
        return { ...base, answer: [this.soa(src, zone)] };
      case 'NS':
        return {
          ...base,
          answer: [rr(zone, 'NS', this.cfg.ttl, join('ns1', this.cfg.apex, zone))],
          additional: this.addressRecords(src, join('ns1', this.cfg.apex, req.qname)),
        };
      default:
        return { ...base, authority: [this.soa(src, zone)] };
    }
  }

  private serveSubApex(req: DnsRequest, zone: string): DnsResponse {
    const src = this.source();
    const labels = labelsBelow(req.qname, zone);
    const nx = { rcode: Rcode.NXDOMAIN, aa: true, answer: [], authority: [this.soa(src, zone)], additional: [], cacheable: true };
    if (labels.length === 1) return { ...nx, rcode: Rcode.NOERROR };
    if (labels.length !== 2 || labels[0] !== 'ns1') return nx;
    const want = req.qtype === 'A' ? 'A' : req.qtype === 'AAAA' ? 'AAAA' : '';
    const answer = this.addressRecords(src, req.qname).filter((r) => r.type === want);
    return answer.length > 0 ? { rcode: Rcode.NOERROR, aa: true, answer, authority: [], additional: [], cacheable: true } : { ...nx, rcode: Rcode.NOERROR };
  }

  /** Kubernetes.External: the items a name stands for, and the rcode to use when there are none. */
  private external(src: ExternalSource, req: DnsRequest, zone: string): { items: Item[]; rcode: number } {
    const data = src.data();
    const ttl = src.ttl();
    if (req.qtype === 'PTR') {
      const ip = reverseNameToIp(req.qname);
      if (ip) {
        const items: Item[] = [];
        for (const svc of reverseIndex(data).get(ip) ?? []) {
          if (!data.namespaceExposed(svc.namespace)) continue;
          items.push({ host: `${svc.name}.${svc.namespace}`, port: -1, key: '', ttl });
        }
        return { items, rcode: items.length > 0 ? Rcode.NOERROR : Rcode.NXDOMAIN };
      }
    }
    // Labels as the client spelled them (CoreDNS trims the zone from state.Name()).
    const segs = labelsBelow(req.name, zone);
    let last = segs.length - 1;
    if (last < 0) return { items: [], rcode: Rcode.SERVFAIL };
    const namespace = segs[last]!;
    if (!data.namespaceExposed(namespace)) return { items: [], rcode: Rcode.NXDOMAIN };
    last--;
    if (last < 0) return { items: [], rcode: Rcode.NOERROR };
    const service = segs[last]!;
    last--;
    let port = '';
    let protocol = '';
    let endpoint = '';
    if (last === 0) {
      endpoint = stripUnderscore(segs[0]!);
      last--;
    } else if (last === 1) {
      protocol = stripUnderscore(segs[1]!);
      port = stripUnderscore(segs[0]!);
      last -= 2;
    }
    if (last !== -1) return { items: [], rcode: Rcode.NXDOMAIN };

    const items: Item[] = [];
    let rcode: number = Rcode.NXDOMAIN;
    const svc = data.service(namespace, service);
    if (svc) {
      const external = K8sExternalPlugin.externalAddresses(data, namespace, service);
      if (this.cfg.headless && external.length === 0 && (svc.headless || endpoint !== '')) {
        for (const slice of data.slicesOf(namespace, service)) {
          for (const a of slice.addresses) {
            if (endpoint !== '' && !eqFold(endpoint, a.name)) continue;
            for (const p of portsOrSentinel(slice.ports)) {
              if (!matchPortAndProtocol(port, p.name, protocol, p.protocol)) continue;
              rcode = Rcode.NOERROR;
              items.push({ host: a.ip, port: p.port, key: `${a.name}.${service}.${namespace}`, ttl });
            }
          }
        }
      } else {
        // An endpoint label is ignored here, as in CoreDNS: x.svc.ns.ZONE answers like svc.ns.ZONE.
        for (const host of external) {
          for (const p of portsOrSentinel(svc.ports)) {
            if (!matchPortAndProtocol(port, p.name, protocol, p.protocol)) continue;
            rcode = Rcode.NOERROR;
            items.push({ host, port: p.port, key: `${service}.${namespace}`, ttl });
          }
        }
      }
    }
    if (req.qtype === 'PTR') return { items: [], rcode };
    return { items, rcode };
  }

  /** Distinct host names one answer resolves through the server at most. */
  private get maxLookups(): number {
    return this.cfg.maxLookups ?? DEFAULT_MAX_LOOKUPS;
  }

  /**
   * msg_to_dns.go a()/aaaa(): addresses of one family; a host name becomes a CNAME plus its
   * upstream answer. CoreDNS repeats both for every port of the Service (one item per host name
   * and port) and asks upstream each time; here each distinct host name gives one CNAME and one
   * lookup, and at most `maxLookups` names are chased (the rest keep their CNAME for the client
   * to follow).
   */
  private address(src: ExternalSource, items: Item[], qname: string, family: 4 | 6): Rr[] | Promise<Rr[]> {
    const out: (Rr | Promise<Rr[]>)[] = [];
    const seen = new Set<string>();
    const named = new Set<string>();
    for (const s of items) {
      const ip = parseIp(s.host);
      if (!ip) {
        if (named.has(s.host)) continue;
        named.add(s.host);
        out.push(rr(qname, 'CNAME', s.ttl, join(s.host)));
        if (named.size <= this.maxLookups)
          out.push(
            src.lookup(join(s.host), family === 4 ? 'A' : 'AAAA').then(
              (r) => r.answer,
              () => [],
            ),
          );
        continue;
      }
      if (ip.family !== family || seen.has(s.host)) continue;
      seen.add(s.host);
      out.push(rr(qname, family === 4 ? 'A' : 'AAAA', this.cfg.ttl, formatIp(ip)));
    }
    if (noLookups(out)) return out;
    return Promise.all(out.map((x) => (x instanceof Promise ? x : [x]))).then((parts) => parts.flat());
  }

  /** msg_to_dns.go srv(): weight 100 split over the items, targets the item's name (or host name), glue in extra. */
  private srv(src: ExternalSource, items: Item[], qname: string, zone?: string): { records: Rr[]; extra: Rr[] } | Promise<{ records: Rr[]; extra: Rr[] }> {
    const weight = Math.max(1, Math.floor((100 / (100 * items.length)) * 100));
    const records: Rr[] = [];
    const extra: (Rr | Promise<Rr[]>)[] = [];
    const seen = new Set<string>();
    const once = (k: string): boolean => {
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    };
    const z = zone ?? matchZone(qname, this.cfg.zones) ?? '.';
    let chased = 0;
    for (const s of items) {
      if (s.port === -1) continue;
      const ip = parseIp(s.host);
      if (!ip) {
        const target = join(s.host);
        if (once(`${target}|${s.port}|`)) records.push(rr(qname, 'SRV', s.ttl, { priority: 0, weight, port: s.port, target }));
        // Each distinct target is looked up once (A and AAAA), at most `maxLookups` of them.
        if (chased < this.maxLookups && once(`${target}|0|${target}`)) {
          chased++;
          extra.push(
            src.lookup(target, 'A').then(
              (r) => r.answer,
              () => [],
            ),
          );
          extra.push(
            src.lookup(target, 'AAAA').then(
              (r) => r.answer,
              () => [],
            ),
          );
        }
        continue;
      }
      const target = join(s.key, z);
      if (once(`${target}|${s.port}|`)) records.push(rr(qname, 'SRV', s.ttl, { priority: 0, weight, port: s.port, target }));
      if (once(`${target}|0|${s.host}`)) extra.push(rr(target, ip.family === 4 ? 'A' : 'AAAA', this.cfg.ttl, formatIp(ip)));
    }
    if (noLookups(extra)) return { records, extra };
    return Promise.all(extra.map((x) => (x instanceof Promise ? x : [x]))).then((parts) => ({ records, extra: parts.flat() }));
  }

  private ptr(items: Item[], qname: string): Rr[] {
    const seen = new Set<string>();
    const out: Rr[] = [];
    for (const s of items) {
      if (seen.has(s.host)) continue;
      seen.add(s.host);
      out.push(rr(qname, 'PTR', this.cfg.ttl, join(s.host, this.cfg.zones[0]!)));
    }
    return out;
  }

  /**
   * transfer.go: SOA, NS, the name server's addresses, then per Service with external addresses
   * (by name, then namespace) its A/AAAA, its first plain SRV and `_port._proto` SRVs (one per
   * owner name, as CoreDNS's nameSeen), then headless Services' addresses and SRV records
   * (headlessTransfer), then the SOA again. Host-name addresses are listed as CNAMEs without
   * chasing them.
   */
  transfer(zone: string): Rr[] | undefined {
    if (matchZone(zone, this.cfg.zones) !== zone) return undefined;
    const src = this.source();
    const data = src.data();
    const ttl = src.ttl();
    const soa = this.soa(src, zone);
    const nsName = join('ns1', this.cfg.apex, zone);
    const out: Rr[] = [soa, rr(zone, 'NS', this.cfg.ttl, nsName), ...this.addressRecords(src, nsName)];
    const srvSeen = new Set<string>();
    const services = [...data.services.values()].sort((a, b) => (a.name === b.name ? (a.namespace < b.namespace ? -1 : 1) : a.name < b.name ? -1 : 1));
    const headless: { svcKey: string; eps: HeadlessItem[] }[] = [];
    for (const svc of services) {
      if (!data.namespaceExposed(svc.namespace)) continue;
      const external = K8sExternalPlugin.externalAddresses(data, svc.namespace, svc.name);
      const key = `${svc.name}.${svc.namespace}`;
      if (this.cfg.headless && external.length === 0 && svc.headless) {
        const eps: HeadlessItem[] = [];
        for (const slice of data.slicesOf(svc.namespace, svc.name)) {
          for (const a of slice.addresses) {
            for (const p of portsOrSentinel(slice.ports)) {
              eps.push({ host: a.ip, port: p.port, key: `${a.name}.${key}`, ttl, portName: p.name, proto: p.protocol });
            }
          }
        }
        if (eps.length > 0) headless.push({ svcKey: key, eps });
        continue;
      }
      const name = join(key, zone);
      for (const host of external) {
        for (const p of portsOrSentinel(svc.ports)) {
          const item: Item = { host, port: p.port, key, ttl };
          const ip = parseIp(host);
          if (ip) out.push(rr(name, ip.family === 4 ? 'A' : 'AAAA', this.cfg.ttl, formatIp(ip)));
          else out.push(rr(name, 'CNAME', ttl, join(host)));
          const plain = this.srvSync(item, name, zone);
          for (const r of plain) addOnce(srvSeen, r.name, () => out.push(r));
          // CoreDNS keys the named SRV as _proto/_name under the service (an unnamed port gives `_`).
          const named = join(`_${p.name.toLowerCase()}._${p.protocol.toLowerCase()}`, key, zone);
          for (const r of this.srvSync(item, named, zone)) addOnce(srvSeen, r.name, () => out.push(r));
        }
      }
    }
    for (const { svcKey, eps } of headless) pushAll(out, this.headlessTransfer(svcKey, eps, zone));
    out.push(soa);
    return out;
  }

  /** The names a zone transfer lists, with their types, for `clusterdns records` (forward zones only). */
  listQuestions(): ListedQuestion[] {
    const out: ListedQuestion[] = [];
    for (const zone of this.cfg.zones) {
      if (zone.endsWith('.arpa.')) continue;
      const seen = new Set<string>();
      for (const r of this.transfer(zone) ?? []) {
        const name = r.name.toLowerCase();
        const types = r.type === 'CNAME' ? ['A', 'AAAA'] : [r.type];
        for (const type of types) {
          if (seen.has(`${name}|${type}`)) continue;
          seen.add(`${name}|${type}`);
          out.push({ name, type, zone });
        }
      }
    }
    return out;
  }

  /**
   * A headless Service's records in a zone transfer, as transfer.go (Transfer) sends the
   * headless groups of the kubernetes plugin's ExternalServices (plugin/kubernetes/external.go):
   * under the Service's name every endpoint address (A, then AAAA) and the bare SRV records to
   * the endpoints (weight 100 split over them, msg_to_dns.go srv()); under each endpoint's name
   * its addresses and its own SRV; then per named port `_port._proto.svc.ns.ZONE` SRV to the
   * endpoints (unnamed ports have none, as the DNS specification says). CoreDNS sends the bare
   * SRV records twice; each is listed once here. A port -1 (no ports) gives addresses, no SRV.
   */
  private headlessTransfer(svcKey: string, eps: readonly HeadlessItem[], zone: string): Rr[] {
    const out: Rr[] = [];
    const svcName = join(svcKey, zone);
    const addresses = (owner: string, items: readonly HeadlessItem[]): Rr[] => {
      const seen = new Set<string>();
      const recs: Rr[] = [];
      for (const family of [4, 6] as const) {
        for (const e of items) {
          const ip = canonicalIp(e.host);
          if (!ip || parseIp(ip)?.family !== family) continue;
          addOnce(seen, ip, () => recs.push(rr(owner, family === 4 ? 'A' : 'AAAA', this.cfg.ttl, ip)));
        }
      }
      return recs;
    };
    const srv = (owner: string, items: readonly HeadlessItem[]): Rr[] => {
      const seen = new Set<string>();
      const recs: Rr[] = [];
      const weight = Math.max(1, Math.floor(100 / items.length));
      for (const e of items) {
        if (e.port === -1) continue;
        const target = join(e.key, zone);
        addOnce(seen, `${target}|${e.port}`, () => recs.push(rr(owner, 'SRV', e.ttl, { priority: 0, weight, port: e.port, target })));
      }
      return recs;
    };
    pushAll(out, addresses(svcName, eps));
    pushAll(out, srv(svcName, eps));
    const byEndpoint = new Map<string, HeadlessItem[]>();
    for (const e of eps) group(byEndpoint, e.key, e);
    for (const [key, items] of byEndpoint) {
      const epName = join(key, zone);
      // Each item is one query's answer (weight 100); one SRV per port.
      for (const r of addresses(epName, items)) out.push(r);
      for (const e of items) pushAll(out, srv(epName, [e]));
    }
    const byPort = new Map<string, HeadlessItem[]>();
    for (const e of eps) {
      if (e.portName === '' || e.port === -1) continue;
      const owner = join(`_${e.portName.toLowerCase()}._${e.proto.toLowerCase()}`, svcKey, zone);
      group(byPort, owner, e);
    }
    for (const [owner, items] of byPort) pushAll(out, srv(owner, items));
    return out;
  }

  private srvSync(item: Item, owner: string, zone: string): Rr[] {
    if (item.port === -1) return [];
    const ip = parseIp(item.host);
    const target = ip ? join(item.key, zone) : join(item.host);
    return [rr(owner, 'SRV', item.ttl, { priority: 0, weight: 100, port: item.port, target })];
  }
}

/**
 * Appends `items` one by one: a headless Service's endpoints are unbounded, and spreading them
 * into push() throws past ~120k arguments.
 */
function pushAll<T>(out: T[], items: readonly T[]): void {
  for (const x of items) out.push(x);
}

/** Adds `item` to its key's list (in place: copying the list per item was quadratic). */
function group<T>(m: Map<string, T[]>, key: string, item: T): void {
  const list = m.get(key);
  if (list) list.push(item);
  else m.set(key, [item]);
}

/** Runs `add` the first time `key` is seen. */
function addOnce(seen: Set<string>, key: string, add: () => void): void {
  if (seen.has(key)) return;
  seen.add(key);
  add();
}
