// `clusterdns records`: every record the server would serve, as a sorted zone file. Each record
// comes from asking the real query path, so the listing is what the server answers.
import type { Answer } from 'dns-packet';
import { buildApp, type App } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, type ClusterFlags } from './options.js';
import { isRecordLister } from '../chain/plugin.js';
import { isClusterDataProvider } from '../chain/cluster-data.js';
import { rdataText, recordText } from '../dns/present.js';
import { canonicalCompare, canonicalKey } from '../dns/canonical.js';
import { fqdn, isReverse, isSubdomain } from '../pkg/names.js';

export interface RecordsFlags extends ClusterFlags {
  zone?: string;
  /** text: a zone file (default); json: the same records as an array of objects. */
  output?: 'text' | 'json';
  logLevel: string;
}

/** One record of `records --output json`: the zone file's columns, the data in presentation form. */
export interface RecordJson {
  name: string;
  ttl: number;
  class: string;
  type: string;
  data: string;
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
    oneShot: true,
    // Every question is asked once: caching the answers would only cost memory and evictions.
    answerCacheBytes: 0,
    // records reads no pods: the serving indexes are enough.
    retainModel: false,
  });
  const only = flags.zone ? fqdn(flags.zone.toLowerCase()) : undefined;
  const byZone = await servedRecords(app, only);
  await app.close();
  if (only && !byZone.has(only)) throw new Error(`no zone ${only} is served by a kubernetes or file plugin in this configuration; zones: ${[...byZone.keys()].join(' ') || 'none'}`);
  // Cluster zones first, reverse zones after them; each in canonical order.
  const zones = [...byZone.keys()].sort((a, b) => Number(isReverse(a)) - Number(isReverse(b)) || canonicalCompare(a, b));
  // Sort keys are computed once per record (not per comparison), and the output is written in
  // chunks: a 100k-endpoint cluster has hundreds of thousands of records.
  let chunk: string[] = [];
  const emit = async (line: string): Promise<void> => {
    chunk.push(line);
    if (chunk.length >= 4096) await flush();
  };
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const text = chunk.join('\n') + '\n';
    chunk = [];
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  };
  const json = flags.output === 'json';
  // JSON: one array of every zone's records, in the zone file's order, one record a line so a
  // large listing still streams and diffs line by line.
  let first = true;
  let pending: string | undefined; // the last JSON record, written with its comma once another follows
  if (json) await emit('[');
  for (const zone of zones) {
    const keyed = [...byZone.get(zone)!.values()].map((rr) => ({ rr, soa: rr.type === 'SOA' ? 0 : 1, name: canonicalKey(rr.name), type: TYPE_ORDER.indexOf(rr.type), rdata: rdataText(rr) }));
    keyed.sort((a, b) => {
      if (a.soa !== b.soa) return a.soa - b.soa;
      if (a.name !== b.name) return a.name < b.name ? -1 : 1;
      if (a.type !== b.type) return a.type - b.type;
      return a.rdata < b.rdata ? -1 : a.rdata > b.rdata ? 1 : 0;
    });
    if (json) {
      for (const k of keyed) {
        if (pending !== undefined) await emit(`${pending},`);
        pending = `  ${JSON.stringify(recordJson(k.rr, k.rdata))}`;
      }
      continue;
    }
    if (!first) await emit('');
    first = false;
    await emit(`; zone ${zone} (${keyed.length} records)`);
    await emit(`$ORIGIN ${zone}`);
    for (const k of keyed) await emit(recordText(k.rr));
  }
  if (json) {
    if (pending !== undefined) await emit(pending);
    await emit(']');
  }
  await flush();
}

/** A record as `records --output json` lists it: the columns of its zone-file line. */
function recordJson(rr: Answer, data: string): RecordJson {
  const fields = recordText(rr).split('\t');
  return { name: fields[0]!, ttl: Number(fields[1]), class: fields[2]!, type: fields[3]!, data };
}

/**
 * Every record the kubernetes, edge (k8s_external, k8s_gateway) and file plugins of `app` serve,
 * by zone (key: owner|type|rdata), each asked of the real query path. `clusterdns sync`
 * publishes the same set.
 */
export async function servedRecords(app: App, only?: string): Promise<Map<string, Map<string, Answer>>> {
  const byZone = new Map<string, Map<string, Answer>>();
  for (const [listener, chainZones] of app.listenerZones().entries()) {
    for (const chain of app.chains) {
      for (const plugin of chain.plugins) {
        if (!isClusterDataProvider(plugin)) continue;
        // ns.dns.<zone> from the Corefile's bind lines, not this machine's interfaces.
        plugin.machineIndependent = true;
        if (!plugin.zones.some((z) => chainZones.includes(z) || chainZones.some((c) => isSubdomain(z, c)))) continue;
        for (const { name, type, zone } of plugin.clusterQuestions()) {
          if (only && zone !== only) continue;
          const reply = await app.query(name, type, { listener });
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
  // Edge zones (k8s_external, k8s_gateway): the names those plugins list, asked through the server.
  for (const [listener] of app.listenerZones().entries()) {
    for (const plugin of app.chains.flatMap((c) => c.plugins)) {
      if (!isRecordLister(plugin) || !plugin.listQuestions) continue;
      for (const q of plugin.listQuestions()) {
        if (only && q.zone !== only) continue;
        const reply = await app.query(q.name, q.type, { listener });
        const set = byZone.get(q.zone) ?? new Map<string, Answer>();
        for (const rr of [...(reply.answers ?? []), ...(reply.additionals ?? [])]) {
          if (rr.type === 'OPT' || !isSubdomain(fqdn(rr.name.toLowerCase()), q.zone)) continue;
          set.set(`${rr.name.toLowerCase()}|${rr.type}|${rdataText(rr)}`, rr);
        }
        byZone.set(q.zone, set);
      }
    }
  }
  // Zone-file zones hold their records directly.
  for (const plugin of app.chains.flatMap((c) => c.plugins)) {
    if (!isRecordLister(plugin) || !plugin.listRecords) continue;
    for (const { zone, rr } of plugin.listRecords()) {
      if (only && zone !== only) continue;
      const set = byZone.get(zone) ?? new Map<string, Answer>();
      set.set(`${fqdn(rr.name.toLowerCase())}|${rr.type}|${rdataText(rr)}`, rr);
      byZone.set(zone, set);
    }
  }
  return byZone;
}
