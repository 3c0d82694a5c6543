// `clusterdns records`: every record the server would serve, as a sorted zone file. Each record
// comes from asking the real query path, so the listing is what the server answers.
import type { Answer } from 'dns-packet';
import { buildApp, type App } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, type ClusterFlags } from './options.js';
import { KubernetesPlugin } from '../plugins/kubernetes/plugin.js';
import { FilePlugin } from '../plugins/file/plugin.js';
import { FileSet } from '../plugins/file/set.js';
import { enumerateQuestions } from '../plugins/kubernetes/enumerate.js';
import { rdataText, recordText } from '../dns/present.js';
import { canonicalCompare } from '../dns/canonical.js';
import { fqdn, isReverse, isSubdomain } from '../dns/names.js';

export interface RecordsFlags extends ClusterFlags {
  zone?: string;
  logLevel: string;
}

const TYPE_ORDER = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'DNAME', 'MX', 'SRV', 'PTR', 'TXT', 'CAA'];

export async function records(flags: RecordsFlags, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  const log = createLogger(flags.logLevel, 2);
  const app = await buildApp({
    conf: flags.conf,
    manifests: flags.manifests,
    port: 53,
    logger: log,
    cluster: clusterOptions(flags),
  });
  const only = flags.zone ? fqdn(flags.zone.toLowerCase()) : undefined;
  const byZone = await servedRecords(app, only);
  await app.close();
  if (only && !byZone.has(only)) throw new Error(`no zone ${only} is served by a kubernetes or file plugin in this configuration; zones: ${[...byZone.keys()].join(' ') || 'none'}`);
  // Cluster zones first, reverse zones after them; each in canonical order.
  const zones = [...byZone.keys()].sort((a, b) => Number(isReverse(a)) - Number(isReverse(b)) || canonicalCompare(a, b));
  const lines: string[] = [];
  for (const zone of zones) {
    const rrs = [...byZone.get(zone)!.values()].sort((a, b) => {
      if (a.type === 'SOA' && b.type !== 'SOA') return -1;
      if (b.type === 'SOA' && a.type !== 'SOA') return 1;
      const byName = canonicalCompare(a.name, b.name);
      if (byName !== 0) return byName;
      const ta = TYPE_ORDER.indexOf(a.type);
      const tb = TYPE_ORDER.indexOf(b.type);
      if (ta !== tb) return ta - tb;
      const ra = rdataText(a);
      const rb = rdataText(b);
      return ra < rb ? -1 : ra > rb ? 1 : 0;
    });
    lines.push(`; zone ${zone} (${rrs.length} records)`, `$ORIGIN ${zone}`, ...rrs.map(recordText), '');
  }
  out.write(lines.join('\n'));
}

/**
 * Every record the kubernetes and file plugins of `app` serve, by zone (key: owner|type|rdata),
 * each asked of the real query path. `clusterdns sync` publishes the same set.
 */
export async function servedRecords(app: App, only?: string): Promise<Map<string, Map<string, Answer>>> {
  const byZone = new Map<string, Map<string, Answer>>();
  for (const [listener, chainZones] of app.listenerZones().entries()) {
    for (const chain of app.chains) {
      for (const plugin of chain.plugins) {
        if (!(plugin instanceof KubernetesPlugin)) continue;
        if (!plugin.cfg.zones.some((z) => chainZones.includes(z) || chainZones.some((c) => isSubdomain(z, c)))) continue;
        for (const q of enumerateQuestions(plugin.cfg, plugin.currentStore)) {
          const zone = plugin.cfg.zones.filter((z) => isSubdomain(q.name, z)).sort((a, b) => b.length - a.length)[0]!;
          if (only && zone !== only) continue;
          const reply = await app.query(q.name, q.type, { listener });
          const set = byZone.get(zone) ?? new Map<string, Answer>();
          for (const rr of [...(reply.answers ?? []), ...(reply.additionals ?? [])]) {
            if (rr.type === 'OPT') continue;
            const owner = rr.name.toLowerCase();
            if (!isSubdomain(fqdn(owner), zone)) continue;
            set.set(`${owner}|${rr.type}|${rdataText(rr)}`, rr);
          }
          byZone.set(zone, set);
        }
      }
    }
  }
  // Zone-file zones hold their records directly.
  for (const chain of app.chains) {
    const files = chain.plugins.flatMap((p) => (p instanceof FileSet ? [...p.members] : p instanceof FilePlugin ? [p] : []));
    for (const plugin of files) {
      for (const rr of plugin.records()) {
        const owner = fqdn(rr.name.toLowerCase());
        const zone = plugin.cfg.zones.filter((z) => isSubdomain(owner, z)).sort((a, b) => b.length - a.length)[0];
        if (!zone || (only && zone !== only)) continue;
        const set = byZone.get(zone) ?? new Map<string, Answer>();
        set.set(`${owner}|${rr.type}|${rdataText(rr)}`, rr);
        byZone.set(zone, set);
      }
    }
  }
  return byZone;
}
