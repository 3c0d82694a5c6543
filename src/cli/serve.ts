// `clusterdns serve`: build the app, listen, log where, and stop cleanly on SIGINT/SIGTERM.
import { buildApp } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, type ClusterFlags } from './options.js';
import { ManifestError } from '../cluster/model.js';
import { announceReady, isWorker, joinMetricsAggregation, runPrimary, workerCount } from '../server/workers.js';

export interface ServeFlags extends ClusterFlags {
  port: string;
  logLevel: string;
  logQueries?: boolean;
  workers?: string;
  upstreamResolvConf?: string;
  maxLookupDepth?: string;
  answerCacheBytes?: string;
}

/** A byte count: a whole number, optionally with KiB, MiB or GiB (K, M, G, KB, MB, GB read the same). */
export function parseBytes(text: string): number | undefined {
  const m = /^(\d+)\s*(k|m|g)?(i?b)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  const n = Number(m[1]) * unit;
  return Number.isSafeInteger(n) ? n : undefined;
}

export async function serve(flags: ServeFlags): Promise<void> {
  const log = createLogger(flags.logLevel);
  // Checked before workers start, so a bad value fails once instead of in every worker.
  const maxLookupDepth = Number(flags.maxLookupDepth ?? '8');
  if (!Number.isInteger(maxLookupDepth) || maxLookupDepth < 0 || maxLookupDepth > 100) throw new Error(`--max-lookup-depth ${flags.maxLookupDepth}: must be a whole number from 0 to 100`);
  const answerCacheBytes = parseBytes(flags.answerCacheBytes ?? '32MiB');
  if (answerCacheBytes === undefined) throw new Error(`--answer-cache-bytes ${flags.answerCacheBytes}: must be a byte count such as 33554432, 64MiB or 0 (off)`);
  const workers = workerCount(flags.workers);
  if (workers > 1 && !isWorker()) {
    log.info({ workers }, 'starting worker processes');
    await runPrimary(workers, log);
    return;
  }
  if (isWorker()) joinMetricsAggregation();
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port ${flags.port}: must be a number from 0 to 65535`);
  let app;
  try {
    app = await buildApp({
      conf: flags.conf,
      manifests: flags.manifests,
      port,
      logger: log,
      cluster: clusterOptions(flags),
      logQueries: flags.logQueries,
      upstreamResolvConf: flags.upstreamResolvConf,
      maxLookupDepth,
      answerCacheBytes,
    });
  } catch (err) {
    if (err instanceof ManifestError) {
      throw new Error(`manifests have errors, not starting:\n${err.message}`);
    }
    throw err;
  }
  const listeners = await app.listen();
  for (const l of listeners) log.info({ address: l.address, port: l.port, zones: l.zones }, 'listening on UDP and TCP');
  const first = listeners[0];
  const host = first && (first.address === '::' ? '127.0.0.1' : first.address);
  log.info(
    { listeners, try: first ? `dig @${host} -p ${first.port} kubernetes.default.svc.cluster.local` : undefined },
    'clusterdns ready',
  );
  if (isWorker()) announceReady();
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal }, 'shutting down');
      void app.close().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    // CoreDNS reloads its Corefile on SIGUSR1; SIGHUP is what most daemons use.
    for (const signal of ['SIGHUP', 'SIGUSR1'] as const) {
      process.on(signal, () => {
        log.info({ signal }, 'reloading');
        void app.reload(signal);
      });
    }
  });
}
