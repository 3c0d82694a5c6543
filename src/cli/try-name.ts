// The `dig` line the startup log suggests: a name this server holds data for on its first
// listener, not a fixed one the user's manifests may lack.
import { isIP } from 'node:net';
import type { App, ListenerInfo } from '../app.js';
import { isClusterDataProvider, type ClusterData } from '../chain/cluster-data.js';
import { isTransferer } from '../chain/plugin.js';
import type { Rr } from '../dns/records.js';
import { isReverse } from '../pkg/names.js';
import { pushAll } from '../pkg/arrays.js';

function digLine(host: string, port: number, name: string, type: string): string {
  const bare = name === '.' ? '.' : name.replace(/\.$/, '');
  return `dig @${host} -p ${port} ${bare}${type === 'A' ? '' : ` ${type}`}`;
}

/** Every record the backends (kubernetes, file) of `zone` hold, in their zone transfer order. */
function zoneRecords(app: App, zone: string): Rr[] {
  const out: Rr[] = [];
  for (const chain of app.chains) {
    if (!chain.zones.includes(zone)) continue;
    for (const p of chain.plugins) if (isTransferer(p)) pushAll(out, p.transfer(zone) ?? []);
  }
  return out;
}

/**
 * A Service with a cluster IP from cluster data, without listing the zone: the API server's
 * Service when there is one, else the first one found. A zone transfer of a 100k-endpoint
 * cluster held the serving thread for 0.1 s at start and made every Service and slice an object.
 */
function clusterServiceName(data: ClusterData, zone: string): { name: string; type: string } | undefined {
  const named = (svc: { name: string; namespace: string; headless: boolean; clusterIPs: readonly string[] }): { name: string; type: string } | undefined => {
    if (svc.headless || !data.namespaceExposed(svc.namespace)) return undefined;
    const family = svc.clusterIPs.map((ip) => isIP(ip)).find((f) => f !== 0);
    if (family === undefined) return undefined;
    return { name: zone === '.' ? `${svc.name}.${svc.namespace}.svc.` : `${svc.name}.${svc.namespace}.svc.${zone}`, type: family === 4 ? 'A' : 'AAAA' };
  };
  const api = data.service('default', 'kubernetes');
  const found = api && named(api);
  if (found) return found;
  for (const svc of data.services.values()) {
    const n = named(svc);
    if (n) return n;
  }
  return undefined;
}

/**
 * `dig` for a name the first listener has data for, read from the backends' data rather than
 * asked (a probe could leave the machine through forward, or show up in logs and metrics): a
 * Service with a cluster IP (the API server's when the cluster has it), else the zone's first
 * address record that is not a name server's, else the zone's SOA. Undefined when no backend
 * there holds a zone.
 */
export function suggestDig(app: App, listeners: readonly ListenerInfo[]): string | undefined {
  // dig asks over UDP: a plain DNS listener.
  const first = listeners.find((l) => l.transport === 'dns');
  if (!first) return undefined;
  const host = first.address === '::' || first.address === '0.0.0.0' ? '127.0.0.1' : first.address;
  let soa: Rr | undefined;
  for (const zone of first.zones) {
    if (!isReverse(zone)) {
      for (const chain of app.chains) {
        if (!chain.zones.includes(zone)) continue;
        for (const p of chain.plugins) {
          if (!isClusterDataProvider(p) || !p.zones.includes(zone)) continue;
          const found = clusterServiceName(p.clusterData(), zone);
          if (found) return digLine(host, first.port, found.name, found.type);
        }
      }
    }
    const rrs = zoneRecords(app, zone);
    soa ??= rrs.find((r) => r.type === 'SOA');
    const servers = new Set(rrs.filter((r) => r.type === 'NS').map((r) => String((r as { data: unknown }).data).toLowerCase()));
    const addresses = rrs.filter((r) => (r.type === 'A' || r.type === 'AAAA') && !servers.has(r.name.toLowerCase()));
    const api = addresses.find((r) => r.type === 'A' && r.name.toLowerCase() === (zone === '.' ? 'kubernetes.default.svc.' : `kubernetes.default.svc.${zone}`));
    const pick = api ?? addresses[0];
    if (pick) return digLine(host, first.port, pick.name, pick.type);
  }
  return soa ? digLine(host, first.port, soa.name, 'SOA') : undefined;
}
