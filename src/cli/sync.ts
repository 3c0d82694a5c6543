// `clusterdns sync`: publish every record the loaded cluster serves into etcd in CoreDNS's
// SkyDNS schema, so a fleet of replicas (clusterdns `etcd`, CoreDNS `etcd`) serves one record
// set. Idempotent (a second run writes nothing), deletes what disappeared, touches only the keys
// it owns (value field `owner`, as external-dns marks its own), and never shows readers half a
// change: a change set that fits one transaction is one transaction; a larger one is bracketed
// by a marker key that clusterdns mirrors honour (see src/plugins/etcd/mirror.ts).
import { createHash } from 'node:crypto';
import type { Answer } from 'dns-packet';
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, type ClusterFlags } from './options.js';
import { servedRecords } from './records.js';
import { isReverse } from '../pkg/names.js';
import { namePath } from '../plugins/etcd/path.js';
import { keyPrefix } from '../plugins/etcd/setup.js';
import { listPrefix, newClient } from '../plugins/etcd/kv.js';
import { MARKER_DIR, TXN_MARKER, type MarkerValue } from '../plugins/etcd/mirror.js';
import { ManifestWatcher } from '../cluster/watch.js';

export interface SyncFlags extends ClusterFlags {
  etcd: string[];
  prefix: string;
  owner: string;
  watch?: boolean;
  interval: string;
  maxTxnOps: string;
  maxTxnBytes: string;
  allowEmpty?: boolean;
  logLevel: string;
}

export interface SyncLimits {
  /** Operations per transaction: etcd's --max-txn-ops (default 128). */
  maxTxnOps: number;
  /** Bytes of keys and values per transaction, under etcd's --max-request-bytes (1.5 MiB). */
  maxTxnBytes: number;
  /** Allow a run that serves no records to delete every owned key. */
  allowEmpty?: boolean;
}

export interface SyncResult {
  puts: number;
  deletes: number;
  /** Keys another writer owns that this sync would have written. */
  conflicts: number;
  transactions: number;
  /** 'single': one transaction; 'marked': several, bracketed by the marker. */
  mode: 'none' | 'single' | 'marked';
  revision: number;
  records: number;
}

type Value = Record<string, string | number | boolean>;

/** Priority of address entries: any value but SRV's (0, read as 10) would do. */
const ADDRESS_PRIORITY = 65535;

/**
 * SkyDNS values for a record set. Each record is one key under its owner's path, labelled by a
 * hash of its data (stable across runs), and grouped by its owner name: CoreDNS answers a name
 * with its whole subtree, and the group keeps a service's answer to its own records instead of
 * its endpoints' too. Addresses carry port -1 so they never turn into SRV answers of port 0.
 */
function skydnsValues(byZone: Map<string, Map<string, Answer>>, prefix: string, owner: string, log?: Logger): Map<string, string> {
  const out = new Map<string, string>();
  let dropped = 0;
  let skipped = 0;
  for (const rrs of byZone.values()) {
    for (const rr of rrs.values()) {
      const name = rr.name.toLowerCase().replace(/\.?$/, '.');
      const ttl = (rr as { ttl?: number }).ttl ?? 0;
      let value: Value | undefined;
      let exact = false;
      switch (rr.type) {
        case 'A':
        case 'AAAA':
          // Port -1 keeps an address out of SRV answers; a priority of its own keeps it out of
          // the SRV weight sums (CoreDNS adds weights per priority before it skips port -1).
          value = { host: String(rr.data), port: -1, priority: ADDRESS_PRIORITY };
          break;
        case 'CNAME':
          // A CNAME query reads the exact key (backend_lookup.go CNAME), as a PTR does.
          value = { host: String(rr.data) };
          exact = true;
          break;
        case 'SRV': {
          const d = rr.data as { priority: number; weight: number; port: number; target: string };
          value = { host: d.target, port: d.port };
          if (d.priority) value.priority = d.priority;
          break;
        }
        case 'TXT': {
          const d = rr.data as (string | Buffer)[] | string | Buffer;
          value = { text: (Array.isArray(d) ? d : [d]).map((x) => x.toString()).join('') };
          break;
        }
        case 'PTR':
          // CoreDNS reads a PTR from the exact key of the reverse name (external-dns writes it there).
          value = { host: String(rr.data) };
          exact = true;
          break;
        default:
          // SOA and NS are synthesized by the etcd plugin from the zone and ns.dns.ZONE.
          skipped++;
          continue;
      }
      if (ttl) value.ttl = ttl;
      if (!isReverse(name)) value.group = name;
      if (rr.type === 'A' || rr.type === 'AAAA') value.targetstrip = 1;
      value.owner = owner;
      const json = JSON.stringify(value);
      const base = namePath(name, prefix);
      if (exact) {
        if (out.has(base)) dropped++;
        else out.set(base, json);
        continue;
      }
      const label = 'x' + createHash('sha1').update(`${rr.type}|${json}`).digest('hex').slice(0, 12);
      out.set(`${base}/${label}`, json);
    }
  }
  if (dropped > 0) log?.warn({ dropped }, 'sync: SkyDNS holds one PTR or CNAME per name (at its exact key); further targets of the same name were left out');
  log?.debug({ skipped }, 'sync: SOA and NS records are synthesized by the etcd plugin, not written');
  return out;
}

function ownerOf(value: string): string | undefined {
  try {
    const v = JSON.parse(value) as { owner?: unknown };
    return typeof v.owner === 'string' ? v.owner : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes the owned keys under `prefix` equal `desired`. Reads everything once, writes only the
 * difference. Every write compares the marker's revision with what this run last saw, so two
 * syncs at once cannot interleave: the second fails and says so.
 */
async function syncValues(
  client: Etcd3,
  prefixPath: string,
  owner: string,
  desired: Map<string, string>,
  limits: SyncLimits,
  log: Logger,
): Promise<SyncResult> {
  const prefix = keyPrefix(prefixPath);
  const markerKey = prefix + TXN_MARKER;
  const { kvs } = await listPrefix(client, prefix);
  const current = new Map<string, { value: string; owned: boolean }>();
  let markerRev = 0;
  for (const kv of kvs) {
    if (kv.key === markerKey) markerRev = kv.modRevision;
    if (kv.key.startsWith(prefix + MARKER_DIR)) continue;
    current.set(kv.key, { value: kv.value, owned: ownerOf(kv.value) === owner });
  }
  type Op = { kind: 'put'; key: string; value: string } | { kind: 'delete'; key: string };
  const ops: Op[] = [];
  let conflicts = 0;
  for (const [key, value] of desired) {
    const cur = current.get(key);
    if (cur && !cur.owned) {
      conflicts++;
      if (conflicts <= 10) log.warn({ key }, `sync: ${key} belongs to another writer (owner "${ownerOf(cur.value) ?? 'none'}"); left as it is`);
      continue;
    }
    if (cur?.value === value) continue;
    ops.push({ kind: 'put', key, value });
  }
  for (const [key, cur] of current) if (cur.owned && !desired.has(key)) ops.push({ kind: 'delete', key });
  const puts = ops.filter((o) => o.kind === 'put').length;
  if (desired.size === 0 && ops.length > 0 && !limits.allowEmpty) {
    throw new Error(`sync: the configuration serves no records, so this would delete all ${ops.length} keys owned by "${owner}" under ${prefix}; check --conf and --manifests, or pass --allow-empty to really empty it`);
  }
  const result: SyncResult = { puts, deletes: ops.length - puts, conflicts, transactions: 0, mode: 'none', revision: 0, records: desired.size };
  if (ops.length === 0) return result;

  const began = Date.now();
  const marker = (state: MarkerValue['state']): { key: string; value: string } => ({ key: markerKey, value: JSON.stringify({ state, owner, at: began }) });
  const size = (o: Op): number => o.key.length + (o.kind === 'put' ? o.value.length : 0) + 16;
  const markerBytes = marker('writing').key.length + marker('writing').value.length + 16;
  // Each transaction carries the marker (one op), so the batch budget leaves room for it.
  const batches: Op[][] = [];
  let batch: Op[] = [];
  let bytes = markerBytes;
  for (const o of ops) {
    if (batch.length > 0 && (batch.length + 1 >= limits.maxTxnOps || bytes + size(o) > limits.maxTxnBytes)) {
      batches.push(batch);
      batch = [];
      bytes = markerBytes;
    }
    batch.push(o);
    bytes += size(o);
  }
  batches.push(batch);
  result.mode = batches.length === 1 ? 'single' : 'marked';
  // The marker is written by the first transaction ("writing": its revision is where the change
  // set begins, which a reader starting in the middle reads from) and by the last ("done").
  // Every transaction requires the marker to be as this run left it: a concurrent sync fails.
  let expect = markerRev;
  let revision = 0;
  for (let i = 0; i < batches.length; i++) {
    const last = i === batches.length - 1;
    const clauses = batches[i]!.map((o) => (o.kind === 'put' ? client.put(o.key).value(o.value) : client.delete().key(o.key)));
    if (i === 0 || last) {
      const m = marker(last ? 'done' : 'writing');
      clauses.push(client.put(m.key).value(m.value));
    }
    const res = await client.if(markerKey, 'Mod', '==', expect).then(...clauses).commit();
    if (!res.succeeded) {
      throw new Error(`sync: another writer changed ${markerKey} while this sync ran (expected revision ${expect}); run sync again`);
    }
    revision = Number(res.header.revision);
    if (i === 0) expect = revision;
    result.transactions++;
  }
  result.revision = revision;
  return result;
}

function parseLimit(flag: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag} ${text}: must be a whole number of at least ${min}`);
  return n;
}

export async function sync(flags: SyncFlags): Promise<void> {
  const log = createLogger(flags.logLevel, 2);
  if (!flags.etcd || flags.etcd.length === 0) throw new Error('sync needs --etcd URL (repeat it, or separate URLs with commas), e.g. --etcd http://127.0.0.1:2379');
  const endpoints = flags.etcd.flatMap((e) => e.split(',')).filter(Boolean);
  const limits: SyncLimits = { maxTxnOps: parseLimit('--max-txn-ops', flags.maxTxnOps, 2), maxTxnBytes: parseLimit('--max-txn-bytes', flags.maxTxnBytes, 1024), allowEmpty: flags.allowEmpty };
  const interval = parseLimit('--interval', flags.interval, 100);
  const client = await newClient({ endpoints });
  const once = async (): Promise<SyncResult> => {
    const started = Date.now();
    const app = await buildApp({ conf: flags.conf, manifests: flags.manifests, port: 53, logger: log, cluster: clusterOptions(flags) });
    let byZone;
    try {
      byZone = await servedRecords(app);
    } finally {
      await app.close();
    }
    const desired = skydnsValues(byZone, flags.prefix, flags.owner, log);
    const built = Date.now();
    const r = await syncValues(client, flags.prefix, flags.owner, desired, limits, log);
    const done = Date.now();
    // buildMs: loading the cluster and asking it every record; etcdMs: reading etcd and writing the difference.
    log.info({ ...r, zones: [...byZone.keys()], ms: done - started, buildMs: built - started, etcdMs: done - built }, r.mode === 'none' ? 'sync: etcd already up to date' : 'sync: etcd updated');
    return r;
  };
  try {
    await once();
    if (!flags.watch) return;
    const paths = flags.manifests ?? [];
    if (paths.length === 0) throw new Error('sync --watch needs --manifests PATH to watch');
    let running = false;
    let again = false;
    const run = async (): Promise<void> => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          await once().catch((err: unknown) => log.error({ err: (err as Error).message }, 'sync failed; etcd keeps the last good set, retrying on the next change'));
        } while (again);
      } finally {
        running = false;
      }
    };
    const watcher = new ManifestWatcher(paths, interval, () => void run());
    watcher.start();
    log.info({ paths, intervalMs: interval }, 'sync: watching manifests');
    await new Promise<void>((resolve) => {
      // The watcher's timer is unref'd: keep the process alive until a signal.
      const keep = setInterval(() => undefined, 1 << 30);
      const stop = (): void => {
        watcher.stop();
        clearInterval(keep);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  } finally {
    client.close();
  }
}
