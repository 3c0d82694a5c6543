// `clusterdns serve`: build the app, listen, log where, and stop cleanly on SIGINT/SIGTERM.
import type { Transport } from '../dns/transport.js';
import type { Logger } from 'pino';
import { buildApp, DEFAULT_MAX_LOOKUP_DEPTH, type App } from '../app.js';
import type { UiOptions } from '../ui/server.js';
import { createLogger } from './logger.js';
import { suggestDig } from './try-name.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { ManifestError } from '../cluster/model/finding.js';
import { transportOptions, type TransportFlags } from './transport-flags.js';
import type { HttpLimits } from '../pkg/http.js';
import { parseGoDuration } from '../pkg/duration.js';
import {
  announceReady,
  announceStopping,
  clusterMetrics,
  isWorker,
  joinMetricsAggregation,
  reportStartFailure,
  runPrimary,
  workerCount,
  workerId,
  workerLoadPermitGate,
  workerLoads,
  workerLoadTimeout,
} from '../server/workers.js';
import { DEFAULT_MAX_ANSWER_RECORDS } from '../server/handler.js';
import { AppMetrics } from '../metrics/index.js';
import { maxOf } from '../pkg/arrays.js';
import path from 'node:path';
import { DEFAULT_IMAGE_BUDGET_BYTES, defaultImageDir } from '../cluster/feed-image-options.js';

/** What the start log says each transport listens on. */
const LISTENING_ON: Readonly<Record<Transport, string>> = {
  dns: 'UDP and TCP',
  tls: 'TCP for DNS over TLS',
  https: 'TCP for DNS over HTTPS',
  grpc: 'TCP for DNS over gRPC',
};

export interface ServeFlags extends ClusterFlags, TransportFlags {
  port: string;
  logLevel: string;
  logQueries?: boolean;
  workers?: string;
  workerLoads?: string;
  workerLoadTimeout?: string;
  upstreamResolvConf?: string;
  maxLookupDepth?: string;
  answerCacheBytes?: string;
  maxAnswerRecords?: string;
  httpMaxConnections?: string;
  httpIdleTimeout?: string;
  httpRequestTimeout?: string;
  /** Any manifest error stops the start or the reload (else the object alone is left out). */
  strict?: boolean;
  /** --no-manifest-image: false. */
  manifestImage?: boolean;
  manifestImageDir?: string;
  manifestImageBytes?: string;
  /** HOST:PORT (or PORT, on loopback) of the `clusterdns ui` page, served beside DNS. */
  ui?: string;
}

/**
 * The page of `clusterdns ui` beside the server, on its own App built from the same flags: the
 * server's App keeps no cluster model (retainModel: false), and the page needs one. Started by
 * the primary only, once however many workers answer DNS. The page follows what the server
 * follows: its own watch of the manifests and the Corefile, and SIGHUP and SIGUSR1 (its App
 * reloads beside the server's, and the open pages are told).
 */
async function startPage(flags: ServeFlags, log: Logger, beside?: UiOptions['beside']): Promise<{ close(): Promise<void> } | undefined> {
  if (flags.ui === undefined || isWorker()) return undefined;
  // A bare port is on loopback, as `ui --listen` is by default.
  const listen = /^:?\d+$/.test(flags.ui) ? `127.0.0.1:${flags.ui.replace(/^:/, '')}` : flags.ui;
  const { startUi } = await import('../ui/server.js');
  const pageLog = log.child({ component: 'ui' });
  const page = await startUi({ flags, log: pageLog, listen, ...(beside ? { beside } : {}) });
  log.info({ url: page.url }, `clusterdns ui: open ${page.url}`);
  const signals = (['SIGHUP', 'SIGUSR1'] as const).map((signal) => {
    const onSignal = (): void => {
      void page
        .reload(signal)
        .then((ok) => pageLog.info({ signal, ok, generation: page.generation }, ok ? 'page reloaded' : 'page reload failed, showing the last good data'));
    };
    process.on(signal, onSignal);
    return () => process.off(signal, onSignal);
  });
  return {
    close: async () => {
      for (const off of signals) off();
      await page.close();
    },
  };
}

/** Plugins of the running configuration not ready yet (the etcd plugin before its first full read), with why. */
function notReady(app: App): Record<string, string> {
  const reasons: Record<string, string> = {};
  for (const chain of app.chains) {
    for (const p of chain.plugins) {
      const r = p.ready?.();
      if (r !== undefined && r !== true) reasons[p.name] = r;
    }
  }
  return reasons;
}

/** How often the ready line's wait asks the plugins again, and how often it repeats why it waits. */
const READY_POLL_MS = 250;
const READY_REPEAT_MS = 10_000;

/**
 * Waits until every plugin is ready, as CoreDNS's kubernetes plugin holds its start until its first
 * sync: "clusterdns ready" must not be said while a zone answers SERVFAIL because its backend
 * (etcd) has not been read yet. The server answers meanwhile (the last line says it listens, and
 * why it is not ready). False when the server stops first.
 */
async function untilReady(app: App, log: Logger, stopping: () => boolean): Promise<boolean> {
  let reasons = notReady(app);
  if (Object.keys(reasons).length === 0) return true;
  let said = '';
  let saidAt = 0;
  while (Object.keys(reasons).length > 0) {
    if (stopping()) return false;
    const text = JSON.stringify(reasons);
    if (text !== said || Date.now() - saidAt >= READY_REPEAT_MS) {
      log.warn(
        { notReady: reasons },
        `clusterdns listening; not ready yet: ${Object.entries(reasons)
          .map(([name, why]) => `${name}: ${why}`)
          .join('; ')}`,
      );
      said = text;
      saidAt = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
    reasons = notReady(app);
  }
  return !stopping();
}

/** A byte count: a whole number, optionally with KiB, MiB or GiB (K, M, G, KB, MB, GB read the same). */
function parseBytes(text: string): number | undefined {
  const m = /^(\d+)\s*(k|m|g)?(i?b)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  const n = Number(m[1]) * unit;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The --http-* flags: limits of the health, ready and metrics listeners. */
function httpLimits(flags: ServeFlags): Partial<HttpLimits> {
  const out: Partial<HttpLimits> = {};
  if (flags.httpMaxConnections !== undefined) {
    const n = Number(flags.httpMaxConnections);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--http-max-connections ${flags.httpMaxConnections}: use a number from 1 to 65535`);
    out.maxConnections = n;
  }
  const duration = (flag: string, text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const ms = parseGoDuration(text);
    if (ms === undefined || ms < 100 || ms > 3_600_000) throw new Error(`${flag} ${text}: use a duration from 100ms to 1h, e.g. 5s`);
    return ms;
  };
  const idle = duration('--http-idle-timeout', flags.httpIdleTimeout);
  if (idle !== undefined) out.idleTimeoutMs = idle;
  const request = duration('--http-request-timeout', flags.httpRequestTimeout);
  if (request !== undefined) out.requestTimeoutMs = request;
  return out;
}

/** How long app.close() may take: the longest plugin shutdown delay (health's lameduck), then the 2 s drain of queries in flight. */
function shutdownBudgetMs(app: App): number {
  const delays = app.chains.flatMap((c) => [...c.plugins]).map((p) => p.shutdownDelayMs ?? 0);
  return maxOf(delays, 0) + 2000;
}

export async function serve(flags: ServeFlags): Promise<void> {
  const processLog = createLogger(flags.logLevel);
  // Checked before workers start, so a bad value fails once instead of in every worker.
  const maxLookupDepth = Number(flags.maxLookupDepth ?? DEFAULT_MAX_LOOKUP_DEPTH);
  if (!Number.isInteger(maxLookupDepth) || maxLookupDepth < 0 || maxLookupDepth > 100)
    throw new Error(`--max-lookup-depth ${flags.maxLookupDepth}: must be a whole number from 0 to 100`);
  const answerCacheBytes = parseBytes(flags.answerCacheBytes ?? '32MiB');
  if (answerCacheBytes === undefined)
    throw new Error(`--answer-cache-bytes ${flags.answerCacheBytes}: must be a byte count such as 33554432, 64MiB or 0 (off)`);
  const maxAnswerRecords = Number(flags.maxAnswerRecords ?? DEFAULT_MAX_ANSWER_RECORDS);
  if (!Number.isInteger(maxAnswerRecords) || maxAnswerRecords < 1 || maxAnswerRecords > 65535)
    throw new Error(`--max-answer-records ${flags.maxAnswerRecords}: must be a whole number from 1 to 65535`);
  const tcp = transportOptions(flags);
  const workers = workerCount(flags.workers);
  const loads = workerLoads(flags.workerLoads);
  const loadTimeoutMs = workerLoadTimeout(flags.workerLoadTimeout);
  // Checked before forking, so a bad flag stops the primary instead of every worker.
  const limits = httpLimits(flags);
  // The manifest feed's persisted image (cluster/feed-image.ts): a start on unchanged files skips parsing them.
  const imageBytes = parseBytes(flags.manifestImageBytes ?? String(DEFAULT_IMAGE_BUDGET_BYTES));
  if (imageBytes === undefined) throw new Error(`--manifest-image-bytes ${flags.manifestImageBytes}: must be a byte count such as 1GiB, or 0 (off)`);
  const image =
    flags.manifestImage === false || imageBytes === 0
      ? {}
      : { image: { dir: path.resolve(flags.manifestImageDir ?? defaultImageDir()), budgetBytes: imageBytes } };
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port ${flags.port}: must be a number from 0 to 65535`);
  if (workers > 1 && !isWorker()) {
    processLog.info({ workers }, 'starting worker processes');
    // The manifests are loaded once, here, for every worker (cluster/feed-hub.ts).
    (await import('../cluster/feed-hub.js')).startFeedHub(processLog);
    const page = await startPage(flags, processLog);
    try {
      await runPrimary(workers, processLog, loads, loadTimeoutMs);
    } finally {
      await page?.close();
    }
    return;
  }
  // Every line a worker logs says which worker it is (the primary's lines name workers the same way).
  const log = isWorker() ? processLog.child({ worker: workerId() }) : processLog;
  // A worker answers the primary's metrics requests from its start, its App's registry included.
  const metrics = new AppMetrics();
  if (isWorker()) joinMetricsAggregation(metrics.registry);
  let app;
  let listeners;
  const cluster = { ...clusterOptions(flags), ...(flags.strict ? { strict: true } : {}), ...image };
  try {
    app = await buildApp({
      conf: flags.conf,
      manifests: flags.manifests,
      port,
      logger: log,
      cluster,
      logQueries: flags.logQueries,
      upstreamResolvConf: flags.upstreamResolvConf,
      maxLookupDepth,
      answerCacheBytes,
      maxAnswerRecords,
      // A server needs only the plugins' indexes, not the cluster model they were built from.
      retainModel: false,
      tcp,
      corefileLimits: corefileLimits(flags),
      httpLimits: limits,
      metrics,
      // A worker's loads take turns with the other workers'; any worker may get a scrape, and
      // answers it with every worker's metrics.
      ...(isWorker() ? { loadPermitGate: workerLoadPermitGate(log), scrapeMetrics: () => clusterMetrics() } : {}),
    });
    listeners = await app.listen();
  } catch (err) {
    const failure = err instanceof ManifestError ? new Error(`manifests have errors, not starting${flags.strict ? ' (--strict)' : ''}:\n${err.message}`) : err;
    if (isWorker()) await reportStartFailure(failure);
    throw failure;
  }
  let page: Awaited<ReturnType<typeof startPage>>;
  try {
    // The page reads the server's manifest feed: one load for both (with --workers, above, the
    // primary has no App and the page loads on its own).
    page = await startPage(flags, log, { app, cluster });
  } catch (e) {
    await app.close();
    throw e;
  }
  for (const l of listeners)
    log.info({ address: l.address, port: l.port, zones: l.zones, transport: l.transport }, `listening on ${LISTENING_ON[l.transport]}`);
  // Signal handlers go in before the ready line: a supervisor (or a test) that reacts to it at
  // once must find SIGHUP reloading, not the default action ending the process.
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      // One shutdown: a worker may get SIGINT from the terminal and SIGTERM from the primary.
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      if (isWorker()) announceStopping(shutdownBudgetMs(app));
      void Promise.all([app.close(), page?.close()]).then(() => resolve());
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
  // The primary forks the other workers once this one serves; readiness is each worker's own.
  if (isWorker()) announceReady();
  let stopping = false;
  void stopped.then(() => (stopping = true));
  if (await untilReady(app, log, () => stopping)) log.info({ listeners, try: suggestDig(app, listeners) }, 'clusterdns ready');
  await stopped;
  // A worker's IPC channel to the primary keeps it alive after the close: leave once closed,
  // instead of waiting for the primary to kill it.
  if (isWorker()) process.exit(0);
}
