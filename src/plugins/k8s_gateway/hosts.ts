// The k8s_gateway host index: per resource kind, lowercased host name -> what it resolves to,
// built from the cluster model (the plugin's indexers and lookup functions in kubernetes.go and
// dnsendpoint.go of github.com/k8s-gateway/k8s_gateway).
//
// It is built in the loader thread (load-worker.ts) and crosses to the serving thread as plain
// data (`HostIndexData`): per resource the sorted host names and, per name, the number of its
// answer in one table of distinct answers (64k route hosts behind one Gateway share one). Each
// answer is what every object claiming the name contributes, merged once here: addresses
// canonical and deduplicated, TXT strings deduplicated, at most `maxRecords` of each, so a query
// copies at most that many whatever a DNSEndpoint lists.
import type { ClusterModel, LbAddress } from '../../cluster/model/model.js';
import { canonicalIp } from '../../pkg/ip.js';
import type { K8sGatewayConfig, Resource } from './config.js';
import { matchesSelector } from '../../cluster/model/selector.js';
import { parseLabelSelector } from './selector.js';

const IGNORE_LABEL = 'k8s-gateway.dns/ignore';
const HOSTNAME_ANNOTATIONS = ['coredns.io/hostname', 'external-dns.alpha.kubernetes.io/hostname'];
const RESOLVE_ENDPOINTS = 'k8s-gateway.dns/resolve-endpoints';

/** What one object contributes for a host. */
interface Entry {
  addrs: LbAddress[];
  raws: string[];
  /** Service with spec.externalIPs: the plugin returns right after it (lookupServiceIndex). */
  stop?: boolean;
}

export interface Found {
  /** IP addresses (canonical) and load balancer host names, in the objects' order. */
  addrs: LbAddress[];
  raws: string[];
  /** More addresses or TXT strings claim the name than `maxRecords`: the rest were left out. */
  capped: boolean;
}

/** Records per answer when the Corefile sets no `maxRecords`; see README "Limits". */
export const DEFAULT_MAX_RECORDS = 1000;

/** One host name's merged answer. */
export interface HostAnswer {
  readonly addrs: readonly LbAddress[];
  readonly raws: readonly string[];
  /** A Service with spec.externalIPs answered: names after this one in a lookup are not read. */
  readonly stop: boolean;
  readonly capped: boolean;
}

/** One resource's hosts: `hosts` sorted (code unit order), `answerOf[i]` indexes `HostIndexData.answers`. */
export interface ResourceHosts {
  readonly resource: Resource;
  readonly hosts: readonly string[];
  readonly answerOf: Int32Array;
}

/** What the loader thread hands over: plain data, the typed arrays transferable. */
export interface HostIndexData {
  readonly maxRecords: number;
  readonly resources: readonly ResourceHosts[];
  readonly answers: readonly HostAnswer[];
  /** Host names that claim more records than `maxRecords` (for one warning per load). */
  readonly capped: readonly { readonly resource: Resource; readonly host: string; readonly records: number }[];
}

/** The buffers to transfer with a HostIndexData. */
export function hostIndexBuffers(data: HostIndexData): ArrayBuffer[] {
  return data.resources.map((r) => r.answerOf.buffer as ArrayBuffer);
}

const ignored = (labels: Readonly<Record<string, string>>): boolean => labels[IGNORE_LABEL] === 'true';

/** checkDomainValid: a DNS name whose labels (after a leading `*.`) are RFC 1123. */
function validAnnotationHost(h: string): boolean {
  const name = h.startsWith('*.') ? h.slice(2) : h;
  return name.length > 0 && name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
}

/** Builds the index's data from a model: the loader thread's work. */
export function indexHosts(model: ClusterModel, cfg: K8sGatewayConfig): HostIndexData {
  const maxRecords = cfg.maxRecords ?? DEFAULT_MAX_RECORDS;
  const maps = new Map<Resource, Map<string, Entry[]>>();
  const edge = model.edge;
  const add = (r: Resource, host: string, e: Entry): void => {
    let m = maps.get(r);
    if (!m) maps.set(r, (m = new Map()));
    const k = host.toLowerCase().replace(/\.$/, '');
    const list = m.get(k);
    if (list) list.push(e);
    else m.set(k, [e]);
  };
  if (edge) {
    // Routes: only the hostnames where the Gateway API says traffic flows (edge.routeHosts). One
    // entry per Gateway: every route host behind it shares it.
    const byGateway = new Map<object, Entry>();
    for (const rh of edge.routeHosts) {
      if (ignored(rh.route.labels)) continue;
      if (cfg.gatewayClasses.length > 0 && !cfg.gatewayClasses.includes(rh.gateway.className)) continue;
      let e = byGateway.get(rh.gateway);
      if (!e) byGateway.set(rh.gateway, (e = { addrs: rh.gateway.status.addresses.slice(), raws: [] }));
      add(rh.route.kind, rh.host, e);
    }
    for (const ing of edge.ingresses) {
      if (ignored(ing.labels)) continue;
      if (cfg.ingressClasses.length > 0 && (ing.className === undefined || !cfg.ingressClasses.includes(ing.className))) continue;
      const e: Entry = { addrs: ing.status.addresses.slice(), raws: [] };
      for (const h of ing.hosts) add('Ingress', h, e);
    }
    indexServices(model, cfg, add);
    for (const de of edge.dnsEndpoints) {
      if (ignored(de.labels)) continue;
      for (const ep of de.endpoints) {
        const addrs: LbAddress[] = [];
        const raws: string[] = [];
        for (const t of ep.targets) {
          if (ep.recordType === 'A' || ep.recordType === 'AAAA') addrs.push({ ip: t });
          else if (ep.recordType === 'TXT') raws.push(t);
        }
        add('DNSEndpoint', ep.dnsName, { addrs, raws });
      }
    }
  }
  const answers: HostAnswer[] = [];
  const answerNumber = new Map<string, number>();
  const capped: { resource: Resource; host: string; records: number }[] = [];
  const resources: ResourceHosts[] = [];
  // A name claimed by one object (most are) takes that object's answer, merged once.
  const single = new Map<Entry, { n: number; records: number }>();
  const number = (answer: HostAnswer): number => {
    const key = JSON.stringify(answer);
    let n = answerNumber.get(key);
    if (n === undefined) {
      n = answers.length;
      answers.push(answer);
      answerNumber.set(key, n);
    }
    return n;
  };
  for (const [resource, m] of maps) {
    const hosts = Array.from(m.keys()).sort();
    const answerOf = new Int32Array(hosts.length);
    for (let i = 0; i < hosts.length; i++) {
      const host = hosts[i]!;
      const entries = m.get(host)!;
      let known = entries.length === 1 ? single.get(entries[0]!) : undefined;
      if (!known) {
        const { answer, records } = mergeEntries(entries, maxRecords);
        known = { n: number(answer), records };
        if (entries.length === 1) single.set(entries[0]!, known);
      }
      if (answers[known.n]!.capped) capped.push({ resource, host, records: known.records });
      answerOf[i] = known.n;
    }
    resources.push({ resource, hosts, answerOf });
  }
  return { maxRecords, resources, answers, capped };
}

type AddHost = (r: Resource, host: string, e: Entry) => void;

function indexServices(model: ClusterModel, cfg: K8sGatewayConfig, add: AddHost): void {
  const edge = model.edge!;
  // serviceLabelSelectors: the Services the plugin's informers list (kubernetes.go, one per
  // selector, merged), so a Service matching none is not exposed at all.
  const selectors = cfg.serviceLabelSelectors?.map((t) => parseLabelSelector(t));
  // Ready endpoint addresses per Service, for the resolve-endpoints annotation: one pass over
  // the slices, not one per annotated Service.
  let slicesByService: Map<string, Set<string>> | undefined;
  const endpointIps = (namespace: string, name: string): Set<string> => {
    if (!slicesByService) {
      slicesByService = new Map();
      for (const s of model.endpointSlices) {
        if (s.addressType === 'FQDN') continue;
        const k = `${s.namespace}/${s.serviceName}`;
        let ips = slicesByService.get(k);
        if (!ips) slicesByService.set(k, (ips = new Set()));
        for (const ep of s.endpoints) if (ep.ready !== false) for (const a of ep.addresses) ips.add(a);
      }
    }
    return slicesByService.get(`${namespace}/${name}`) ?? new Set();
  };
  for (const svc of model.services) {
    if (ignored(svc.labels)) continue;
    if (selectors && !selectors.some((s) => matchesSelector(s.selector, svc.labels))) continue;
    const endpoints = svc.annotations[RESOLVE_ENDPOINTS] === 'true';
    if (svc.type !== 'LoadBalancer' && !endpoints) continue;
    const ann = HOSTNAME_ANNOTATIONS.map((a) => svc.annotations[a]).find((v) => v !== undefined);
    const hosts = ann !== undefined ? ann.toLowerCase().replaceAll(' ', '').split(',').filter(validAnnotationHost) : [`${svc.name}.${svc.namespace}`];
    let entry: Entry;
    if (endpoints) {
      entry = { addrs: Array.from(endpointIps(svc.namespace, svc.name), (ip) => ({ ip })), raws: [] };
    } else if (svc.externalIPs.length > 0) {
      entry = { addrs: svc.externalIPs.map((ip) => ({ ip })), raws: [], stop: true };
    } else {
      entry = { addrs: (edge.serviceStatus.get(`${svc.namespace}/${svc.name}`)?.addresses ?? []).slice(), raws: [] };
    }
    for (const h of hosts) add('Service', h, entry);
  }
}

/**
 * The entries of one host merged as a lookup of that name alone reads them (in order, each
 * object once, stopping after a Service with external IPs): addresses that do not parse are
 * dropped (the answer would skip them), the rest canonical and each once, host names each once.
 * `records` counts what there was before the cap.
 */
function mergeEntries(entries: readonly Entry[], maxRecords: number): { answer: HostAnswer; records: number } {
  const addrs: LbAddress[] = [];
  const raws: string[] = [];
  const seenAddr = new Set<string>();
  const seenRaw = new Set<string>();
  const seenEntry = new Set<Entry>();
  let stop = false;
  let addrCount = 0;
  let rawCount = 0;
  for (const e of entries) {
    if (seenEntry.has(e)) continue;
    seenEntry.add(e);
    for (const a of e.addrs) {
      let key: string;
      let value: LbAddress;
      if (a.ip !== undefined) {
        const ip = canonicalIp(a.ip);
        if (ip === undefined) continue;
        key = ip;
        value = { ip };
      } else if (a.hostname !== undefined) {
        key = `host:${a.hostname}`;
        value = { hostname: a.hostname };
      } else continue;
      if (seenAddr.has(key)) continue;
      seenAddr.add(key);
      addrCount++;
      if (addrs.length < maxRecords) addrs.push(value);
    }
    for (const r of e.raws) {
      if (seenRaw.has(r)) continue;
      seenRaw.add(r);
      rawCount++;
      if (raws.length < maxRecords) raws.push(r);
    }
    if (e.stop) {
      stop = true;
      break;
    }
  }
  const records = Math.max(addrCount, rawCount);
  return { answer: { addrs, raws, stop, capped: records > maxRecords }, records };
}

/** The serving thread's view of a HostIndexData: lookups by bisection over the sorted names. */
export class HostIndex {
  private readonly byResource = new Map<Resource, ResourceHosts>();

  constructor(private readonly data: HostIndexData) {
    for (const r of data.resources) this.byResource.set(r.resource, r);
  }

  get maxRecords(): number {
    return this.data.maxRecords;
  }

  get capped(): HostIndexData['capped'] {
    return this.data.capped;
  }

  private answer(rh: ResourceHosts, host: string): HostAnswer | undefined {
    const hosts = rh.hosts;
    let lo = 0;
    let hi = hosts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hosts[mid]! < host) lo = mid + 1;
      else hi = mid;
    }
    return lo < hosts.length && hosts[lo] === host ? this.data.answers[rh.answerOf[lo]!] : undefined;
  }

  /**
   * The resource's answers for the keys, merged in key order, each address and TXT string once,
   * at most `maxRecords` of each; a Service with external IPs ends the merge.
   */
  lookup(resource: Resource, keys: readonly string[]): Found {
    const out: Found = { addrs: [], raws: [], capped: false };
    const rh = this.byResource.get(resource);
    if (!rh) return out;
    const max = this.data.maxRecords;
    const seen = new Set<HostAnswer>();
    let seenAddr: Set<string> | undefined;
    let seenRaw: Set<string> | undefined;
    for (const k of keys) {
      const a = this.answer(rh, k.toLowerCase());
      if (!a || seen.has(a)) continue;
      if (seen.size === 0) {
        // The common case, one name: its answer is merged already.
        out.addrs = a.addrs.slice();
        out.raws = a.raws.slice();
        out.capped = a.capped;
      } else {
        seenAddr ??= new Set(out.addrs.map((x) => x.ip ?? `host:${x.hostname}`));
        seenRaw ??= new Set(out.raws);
        for (const x of a.addrs) {
          const key = x.ip ?? `host:${x.hostname}`;
          if (seenAddr.has(key)) continue;
          if (out.addrs.length >= max) {
            out.capped = true;
            break;
          }
          seenAddr.add(key);
          out.addrs.push(x);
        }
        for (const r of a.raws) {
          if (seenRaw.has(r)) continue;
          if (out.raws.length >= max) {
            out.capped = true;
            break;
          }
          seenRaw.add(r);
          out.raws.push(r);
        }
        out.capped ||= a.capped;
      }
      seen.add(a);
      if (a.stop) return out;
    }
    return out;
  }

  /** Every host name of a resource, sorted (for `records` and tests). */
  hosts(resource: Resource): readonly string[] {
    return this.byResource.get(resource)?.hosts ?? [];
  }
}
