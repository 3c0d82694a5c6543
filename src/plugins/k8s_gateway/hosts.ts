// The k8s_gateway host index: per resource kind, lowercased host name -> what it resolves to,
// built from the cluster model (the plugin's indexers and lookup functions in kubernetes.go and
// dnsendpoint.go of github.com/k8s-gateway/k8s_gateway).
import type { ClusterModel } from '../../cluster/model.js';
import type { LbAddress } from '../../cluster/edge.js';
import { parseIp } from '../../pkg/ip.js';
import type { K8sGatewayConfig, Resource } from './setup.js';
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
  addrs: LbAddress[];
  raws: string[];
}

const ignored = (labels: Readonly<Record<string, string>>): boolean => labels[IGNORE_LABEL] === 'true';

/** checkDomainValid: a DNS name whose labels (after a leading `*.`) are RFC 1123. */
function validAnnotationHost(h: string): boolean {
  const name = h.startsWith('*.') ? h.slice(2) : h;
  return name.length > 0 && name.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name);
}

export class HostIndex {
  private readonly maps = new Map<Resource, Map<string, Entry[]>>();

  constructor(model: ClusterModel, cfg: K8sGatewayConfig) {
    const edge = model.edge;
    const add = (r: Resource, host: string, e: Entry): void => {
      let m = this.maps.get(r);
      if (!m) this.maps.set(r, (m = new Map()));
      const k = host.toLowerCase().replace(/\.$/, '');
      const list = m.get(k);
      if (list) list.push(e);
      else m.set(k, [e]);
    };
    if (!edge) return;
    // Routes: only the hostnames where the Gateway API says traffic flows (edge.routeHosts).
    for (const rh of edge.routeHosts) {
      if (ignored(rh.route.labels)) continue;
      if (cfg.gatewayClasses.length > 0 && !cfg.gatewayClasses.includes(rh.gateway.className)) continue;
      add(rh.route.kind, rh.host, { addrs: [...rh.gateway.status.addresses], raws: [] });
    }
    for (const ing of edge.ingresses) {
      if (ignored(ing.labels)) continue;
      if (cfg.ingressClasses.length > 0 && (ing.className === undefined || !cfg.ingressClasses.includes(ing.className))) continue;
      for (const h of ing.hosts) add('Ingress', h, { addrs: [...ing.status.addresses], raws: [] });
    }
    // serviceLabelSelectors: the Services the plugin's informers list (kubernetes.go, one per
    // selector, merged), so a Service matching none is not exposed at all.
    const selectors = cfg.serviceLabelSelectors?.map((t) => parseLabelSelector(t));
    for (const svc of model.services) {
      if (ignored(svc.labels)) continue;
      if (selectors && !selectors.some((s) => s.matches(svc.labels))) continue;
      const endpoints = svc.annotations[RESOLVE_ENDPOINTS] === 'true';
      if (svc.type !== 'LoadBalancer' && !endpoints) continue;
      const ann = HOSTNAME_ANNOTATIONS.map((a) => svc.annotations[a]).find((v) => v !== undefined);
      const hosts = ann !== undefined ? ann.toLowerCase().replaceAll(' ', '').split(',').filter(validAnnotationHost) : [`${svc.name}.${svc.namespace}`];
      let entry: Entry;
      if (endpoints) {
        const ips = new Set<string>();
        for (const s of model.endpointSlices) {
          if (s.namespace !== svc.namespace || s.serviceName !== svc.name || s.addressType === 'FQDN') continue;
          for (const ep of s.endpoints) if (ep.ready !== false) for (const a of ep.addresses) ips.add(a);
        }
        entry = { addrs: [...ips].map((ip) => ({ ip })), raws: [] };
      } else if (svc.externalIPs.length > 0) {
        entry = { addrs: svc.externalIPs.map((ip) => ({ ip })), raws: [], stop: true };
      } else {
        entry = { addrs: [...(edge.serviceStatus.get(`${svc.namespace}/${svc.name}`)?.addresses ?? [])], raws: [] };
      }
      for (const h of hosts) add('Service', h, entry);
    }
    for (const de of edge.dnsEndpoints) {
      if (ignored(de.labels)) continue;
      for (const ep of de.endpoints) {
        const addrs: LbAddress[] = [];
        const raws: string[] = [];
        for (const t of ep.targets) {
          if (ep.recordType === 'A' || ep.recordType === 'AAAA') {
            if (parseIp(t)) addrs.push({ ip: t });
          } else if (ep.recordType === 'TXT') raws.push(t);
        }
        add('DNSEndpoint', ep.dnsName, { addrs, raws });
      }
    }
  }

  /** The resource's entries for the keys, merged (first match per key order). */
  lookup(resource: Resource, keys: readonly string[]): Found {
    const m = this.maps.get(resource);
    const out: Found = { addrs: [], raws: [] };
    if (!m) return out;
    const seen = new Set<Entry>();
    for (const k of keys) {
      for (const e of m.get(k.toLowerCase()) ?? []) {
        if (seen.has(e)) continue;
        seen.add(e);
        out.addrs.push(...e.addrs);
        out.raws.push(...e.raws);
        if (e.stop) return out;
      }
    }
    return out;
  }

  /** Every host name of a resource (for `records` and tests). */
  hosts(resource: Resource): string[] {
    return [...(this.maps.get(resource)?.keys() ?? [])].sort();
  }
}
