// `clusterdns sync`: publish every record the loaded cluster serves into etcd in CoreDNS's
// SkyDNS schema, so a fleet of replicas (clusterdns `etcd`, CoreDNS `etcd`) serves one record
// set. Idempotent (a second run writes nothing), deletes what disappeared, touches only the keys
// it owns (value field `owner`, as external-dns marks its own), and never shows readers half a
// change: a change set that fits one transaction is one transaction; a larger one is bracketed
// by a marker key that clusterdns mirrors honour (see src/plugins/etcd/mirror.ts), and guarded
// against a second sync at once (sync-txn.ts).
import type { Answer } from 'dns-packet';
import type { Etcd3 } from 'etcd3';
import { buildApp, type App } from '../app.js';
import { isClusterDataProvider } from '../chain/cluster-data.js';
import { createLogger } from './logger.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { servedRecords } from './records.js';
import { newClient } from '../plugins/etcd/kv.js';
import { parseHttpAddress } from '../pkg/http.js';
import { ManifestWatcher } from '../cluster/read/watch.js';
import { skydnsValues } from './sync-values.js';
import { syncValues, type SyncLimits, type SyncResult } from './sync-txn.js';
import { RetryingSync, serveSyncMetrics, syncMetrics } from './sync-watch.js';
import { untilSignal } from './until-signal.js';

export type { SyncLimits, SyncResult } from './sync-txn.js';

export interface SyncFlags extends ClusterFlags {
  etcd: string[];
  prefix: string;
  owner: string;
  watch?: boolean;
  interval: string;
  retryMax: string;
  etcdTimeout: string;
  metrics?: string;
  maxTxnOps: string;
  maxTxnBytes: string;
  allowEmpty?: boolean;
  logLevel: string;
}

/** First wait after a failed --watch run; it doubles up to --retry-max. */
const RETRY_INITIAL_MS = 250;

function parseLimit(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} ${text}: must be a whole number from ${min} to ${max}`);
  return n;
}

/** Operations in one transaction at most: they are passed to the client as arguments. */
const MAX_TXN_OPS = 10_000;

/**
 * What --watch follows: the --manifests paths, every manifests path the Corefile's kubernetes and
 * k8s_gateway blocks name (already resolved against the Corefile's directory), the file plugin's
 * zone files, and the Corefile.
 */
function watchedPaths(app: App, flags: SyncFlags): string[] {
  const paths = new Set<string>(flags.manifests ?? []);
  for (const plugin of app.chains.flatMap((c) => c.plugins)) {
    if (isClusterDataProvider(plugin)) for (const p of plugin.manifestPaths) paths.add(p);
    const own = (plugin as { cfg?: { manifests?: unknown } }).cfg?.manifests;
    if (Array.isArray(own)) for (const p of own) if (typeof p === 'string') paths.add(p);
    const zoneFile = (plugin as { cfg?: { file?: unknown } }).cfg?.file;
    if (plugin.name === 'file' && typeof zoneFile === 'string') paths.add(zoneFile);
  }
  if (flags.conf) paths.add(flags.conf);
  return [...paths];
}

interface Built {
  byZone: Map<string, Map<string, Answer>>;
  paths: string[];
  ms: number;
}

export async function sync(flags: SyncFlags): Promise<void> {
  const log = createLogger(flags.logLevel, 2);
  // Every argument is checked before anything is written.
  if (!flags.etcd || flags.etcd.length === 0)
    throw new Error('sync needs --etcd URL (repeat it, or separate URLs with commas), e.g. --etcd http://127.0.0.1:2379');
  const endpoints = flags.etcd.flatMap((e) => e.split(',')).filter(Boolean);
  // Each transaction carries the writer key and the marker besides the data.
  const limits: SyncLimits = {
    maxTxnOps: parseLimit('--max-txn-ops', flags.maxTxnOps, 3, MAX_TXN_OPS),
    maxTxnBytes: parseLimit('--max-txn-bytes', flags.maxTxnBytes, 1024),
    allowEmpty: flags.allowEmpty,
  };
  const interval = parseLimit('--interval', flags.interval, 100);
  const retryMax = parseLimit('--retry-max', flags.retryMax, RETRY_INITIAL_MS);
  const etcdTimeout = parseLimit('--etcd-timeout', flags.etcdTimeout, 100);
  if (flags.metrics !== undefined && !flags.watch) throw new Error('--metrics serves the state of sync --watch; add --watch, or drop --metrics');
  const metricsAddress = flags.metrics === undefined ? undefined : parseHttpAddress(flags.metrics);
  if (typeof metricsAddress === 'string') throw new Error(`--metrics ${metricsAddress}`);

  // One App for the whole run, never listening: under --watch a change is a reload of it, so its
  // manifest feed reads again only the files that changed.
  const app = await buildApp({
    conf: flags.conf,
    manifests: flags.manifests,
    port: 53,
    logger: log,
    cluster: clusterOptions(flags),
    corefileLimits: corefileLimits(flags),
  });
  let builds = 0;
  const build = async (): Promise<Built> => {
    const started = Date.now();
    if (builds++ > 0 && !(await app.reload('manifests changed'))) {
      throw new Error('sync: the Corefile or the manifests have errors (logged above); etcd keeps what the last good run wrote');
    }
    return { byZone: await servedRecords(app), paths: watchedPaths(app, flags), ms: Date.now() - started };
  };
  const write = async (client: Etcd3, built: Built): Promise<SyncResult> => {
    const started = Date.now();
    const desired = skydnsValues(built.byZone, flags.prefix, flags.owner, log);
    // A hung etcd (a stopped process, a black-holed route) never answers: without a deadline the
    // run, and every --watch retry after it, would wait for ever. The caller closes the client,
    // which cancels the calls still waiting.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `sync: etcd (${endpoints.join(', ')}) did not finish reading and writing within ${etcdTimeout} ms; is it running and reachable? (--etcd-timeout sets the limit)`,
            ),
          ),
        etcdTimeout,
      );
    });
    let r: SyncResult;
    try {
      r = await Promise.race([syncValues(client, flags.prefix, flags.owner, desired, limits, log), deadline]);
    } finally {
      clearTimeout(timer);
    }
    // buildMs: loading the cluster and asking it every record; etcdMs: reading etcd and writing the difference.
    const etcdMs = Date.now() - started;
    log.info(
      { ...r, zones: [...built.byZone.keys()], ms: built.ms + etcdMs, buildMs: built.ms, etcdMs },
      r.mode === 'none' ? 'sync: etcd already up to date' : 'sync: etcd updated',
    );
    return r;
  };

  let first: Built;
  try {
    first = await build();
  } catch (err) {
    await app.close();
    throw err;
  }
  if (!flags.watch) {
    await app.close();
    const client = await newClient({ endpoints });
    try {
      await write(client, first);
    } finally {
      client.close();
    }
    return;
  }
  if (first.paths.length === 0) {
    await app.close();
    throw new Error('sync --watch has nothing to watch: give --manifests PATH, or a --conf Corefile whose kubernetes block names its manifests');
  }

  let client = await newClient({ endpoints });

  const state = syncMetrics();
  state.pending.set(1);
  const metricsRoute = metricsAddress ? await serveSyncMetrics(metricsAddress, log) : undefined;
  let next: Built | undefined = first;
  const runner = new RetryingSync(
    async () => {
      const built = next ?? (await build());
      next = undefined;
      try {
        await write(client, built);
      } catch (err) {
        // A fresh client: etcd3's circuit breaker would keep failing calls for seconds after etcd is back.
        client.close();
        client = await newClient({ endpoints });
        throw err;
      }
    },
    { initialMs: RETRY_INITIAL_MS, maxMs: retryMax },
    state,
    log,
  );
  const watcher = new ManifestWatcher(first.paths, interval, () => runner.request());
  try {
    runner.request();
    watcher.start();
    log.info({ paths: first.paths, intervalMs: interval, retryMaxMs: retryMax }, 'sync: watching manifests');
    await untilSignal();
  } finally {
    watcher.stop();
    runner.stop();
    await metricsRoute?.release();
    client.close();
    await app.close();
  }
}
