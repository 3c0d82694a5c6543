// The kubernetes plugin's zone transfer, as CoreDNS's plugin/kubernetes/xfr.go lists a zone.
import { isIP } from 'node:net';
import { rr, type Rr } from '../../dns/records.js';
import { formatIp, parseIp } from '../../pkg/ip.js';
import { isReverse } from '../../pkg/names.js';
import type { KubernetesConfig } from './config.js';
import type { Item, State } from './lookup.js';
import type { KubernetesStore } from './store.js';

/** What a transfer reads of the plugin: its options, its data, and how it names the zone's servers. */
export interface ZoneSource {
  readonly cfg: KubernetesConfig;
  clusterData(): KubernetesStore;
  soa(state: State): Rr;
  nsAddrs(state: State): Item[];
  abs(state: State, relative: string): string;
}

/**
 * The zone in CoreDNS's AXFR order (plugin/kubernetes/xfr.go), for the transfer plugin: SOA,
 * each NS followed by its glue, then every exposed service sorted by name (ClusterIP: A/AAAA,
 * SRV per port and `_port._proto` SRV per named port, weight 100; headless: per ready address
 * the service and endpoint A/AAAA and a `_port._proto` SRV per named port, weight 100 split over
 * the slice's addresses; ExternalName: CNAME), then the SOA again. Reverse zones and names that
 * are not one of the plugin's zones are not transferred (undefined).
 */
export function transferZone(src: ZoneSource, zone: string): Rr[] | undefined {
  const cfg = src.cfg;
  const store = src.clusterData();
  if (!cfg.zones.includes(zone) || isReverse(zone)) return undefined;
  const state: State = { name: zone, qname: zone, qtype: 'AXFR', zone, zoneSp: zone };
  const ttl = cfg.ttl;
  const soa = src.soa(state);
  const out: Rr[] = [soa];
  const nsSeen = new Set<string>();
  for (const item of src.nsAddrs(state)) {
    const ip = parseIp(item.host);
    if (!ip) continue;
    const target = src.abs(state, item.relative);
    if (!nsSeen.has(target)) out.push(rr(zone, 'NS', ttl, target));
    nsSeen.add(target);
    out.push(rr(target, ip.family === 4 ? 'A' : 'AAAA', item.ttl, formatIp(ip)));
  }
  const addr = (owner: string, ip: string): Rr | undefined => {
    const p = parseIp(ip);
    return p ? rr(owner, p.family === 4 ? 'A' : 'AAAA', ttl, formatIp(p)) : undefined;
  };
  const srv = (owner: string, weight: number, port: number, target: string): Rr => rr(owner, 'SRV', ttl, { priority: 0, weight, port, target });
  const services = [...store.services.values()].sort((a, b) => (a.name === b.name ? (a.namespace < b.namespace ? -1 : 1) : a.name < b.name ? -1 : 1));
  for (const svc of services) {
    if (!store.namespaceExposed(svc.namespace)) continue;
    const base = src.abs(state, `${svc.name}.${svc.namespace}.svc`);
    const named = (name: string, protocol: string): string => `_${name.toLowerCase()}._${protocol.toLowerCase()}.${base}`;
    if (svc.type === 'ExternalName') {
      const target = svc.externalName;
      if (target && !isIP(target.replace(/\.$/, ''))) out.push(rr(base, 'CNAME', ttl, target.endsWith('.') ? target : `${target}.`));
      continue;
    }
    if (!svc.headless && svc.clusterIPs.length > 0) {
      for (const ip of svc.clusterIPs) {
        const r = addr(base, ip);
        if (r) out.push(r);
      }
      for (const p of svc.ports) {
        out.push(srv(base, 100, p.port, base));
        if (p.name !== '') out.push(srv(named(p.name, p.protocol), 100, p.port, base));
      }
      continue;
    }
    for (const slice of store.slicesOf(svc.namespace, svc.name)) {
      const weight = Math.max(1, Math.floor(100 / Math.max(1, slice.addresses.length)));
      for (const a of slice.addresses) {
        const target = `${a.name}.${base}`;
        for (const owner of [base, target]) {
          const r = addr(owner, a.ip);
          if (r) out.push(r);
        }
        for (const p of slice.ports) if (p.name !== '') out.push(srv(named(p.name, p.protocol), weight, p.port, target));
      }
    }
  }
  out.push(soa);
  return out;
}
