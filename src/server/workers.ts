// `serve --workers N|auto`: N worker processes share the UDP and TCP ports (Node's cluster module
// hands every worker the same sockets), the primary only supervises: it restarts a worker that
// dies, forwards reload signals, stops them all on shutdown, and aggregates their metrics.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from 'pino';
import { registry } from '../metrics/index.js';

const METRICS_REQUEST = 'clusterdns:metrics';
const METRICS_REPLY = 'clusterdns:metrics-reply';
const STOPPING = 'clusterdns:stopping';
/** How long past its announced budget a stopping worker may run before it is killed. */
const STOP_GRACE_MS = 10000;
/** A worker's announced budget is believed up to this (health's lameduck is rarely above 1m). */
const MAX_STOP_BUDGET_MS = 10 * 60_000;

export function workerCount(flag: string | undefined): number {
  if (flag === undefined) return 1;
  if (flag === 'auto') return Math.max(1, availableParallelism());
  const n = Number(flag);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`--workers ${flag}: use a number from 1 to 64, or auto`);
  return n;
}

export const isWorker = (): boolean => cluster.isWorker;

/** The /metrics body: this process's registry, or in a worker every worker's, aggregated. */
export async function scrapeMetrics(): Promise<{ text: string; contentType: string }> {
  if (cluster.isWorker) return clusterMetrics();
  const reg = registry();
  return { text: await reg.metrics(), contentType: reg.contentType };
}

/**
 * Runs the primary: forks `count` workers running the same command line and supervises them
 * until SIGINT/SIGTERM. Resolves when every worker has exited after a signal; rejects once the
 * workers are stopped when they keep dying, so the process exits non-zero and its supervisor
 * (systemd `Restart=on-failure`, a Kubernetes pod) restarts it instead of seeing a clean exit.
 */
export async function runPrimary(count: number, log: Logger): Promise<void> {
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  const restarts: number[] = [];
  const fork = (): Worker => cluster.fork({ CLUSTERDNS_WORKER: '1' });
  cluster.on('message', (worker, msg: { type?: string; id?: number }) => {
    if (msg?.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_REPLY, id: msg.id, text, contentType: aggregator.contentType }),
      (err: unknown) => worker.send({ type: METRICS_REPLY, id: msg.id, error: String(err) }),
    );
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error({ worker: worker.process.pid, code, signal }, 'worker died; starting a new one');
    // More than 5 restarts a minute means something is broken: stop instead of spinning.
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && restarts[0]! < now - 60000) restarts.shift();
    if (restarts.length > 5) {
      log.fatal('workers keep dying (more than 5 restarts in a minute); stopping');
      void stopAll('crash loop').then(() => crashed(new Error('workers keep dying (more than 5 restarts in a minute); see the log above for why')));
      return;
    }
    fork();
  });
  const workers = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  // A stopping worker says how long its graceful close may take (health's lameduck plus the
  // drain); it is killed only when still running STOP_GRACE_MS past that.
  const budgets = new Map<number, number>();
  const killTimers = new Map<number, NodeJS.Timeout>();
  const armKill = (w: Worker): void => {
    clearTimeout(killTimers.get(w.id));
    const ms = STOP_GRACE_MS + (budgets.get(w.id) ?? 0);
    killTimers.set(
      w.id,
      setTimeout(() => {
        log.warn({ worker: w.process.pid, ms }, 'worker did not stop in time; killing it');
        w.process.kill('SIGKILL');
      }, ms),
    );
  };
  cluster.on('message', (w, msg: { type?: string; budgetMs?: unknown }) => {
    if (msg?.type !== STOPPING || typeof msg.budgetMs !== 'number' || !(msg.budgetMs >= 0)) return;
    budgets.set(w.id, Math.min(msg.budgetMs, MAX_STOP_BUDGET_MS));
    if (killTimers.has(w.id)) armKill(w);
  });
  const stopAll = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'stopping workers');
    await Promise.all(
      workers().map(
        (w) =>
          new Promise<void>((resolve) => {
            armKill(w);
            w.once('exit', () => {
              clearTimeout(killTimers.get(w.id));
              resolve();
            });
            w.process.kill('SIGTERM');
          }),
      ),
    );
  };
  // Each worker logs its own "clusterdns ready"; the primary says when all of them are.
  let ready = 0;
  cluster.on('message', (_w, msg: { type?: string }) => {
    if (msg?.type === 'clusterdns:ready' && ++ready === count) log.info({ workers: count }, 'all workers ready');
  });
  let crashed: (err: Error) => void = () => undefined;
  for (let i = 0; i < count; i++) fork();
  await new Promise<void>((resolve, reject) => {
    crashed = reject;
    process.once('SIGINT', () => void stopAll('SIGINT').then(resolve));
    process.once('SIGTERM', () => void stopAll('SIGTERM').then(resolve));
    for (const signal of ['SIGHUP', 'SIGUSR1'] as const) {
      process.on(signal, () => {
        log.info({ signal }, 'reloading every worker');
        for (const w of workers()) w.process.kill(signal);
      });
    }
  });
}

/** In a worker: this process's metrics registry answers the primary's aggregator. */
export function joinMetricsAggregation(): void {
  AggregatorRegistry.setRegistries([registry()]);
  // prom-client starts answering the primary's requests when an aggregator is constructed.
  new AggregatorRegistry();
}

let nextId = 0;
const pending = new Map<number, (reply: { text?: string; contentType?: string; error?: string }) => void>();

/** In a worker: the metrics of every worker, aggregated by the primary. */
let listening = false;

export function clusterMetrics(timeoutMs = 6000): Promise<{ text: string; contentType: string }> {
  // One listener for every scrape of the process's life: a listener per scrape would pile up
  // (MaxListenersExceededWarning after 11) since `pending` empties between scrapes.
  if (!listening) {
    listening = true;
    process.on('message', (msg: { type?: string; id?: number; text?: string; contentType?: string; error?: string }) => {
      if (msg?.type !== METRICS_REPLY || msg.id === undefined) return;
      pending.get(msg.id)?.(msg);
      pending.delete(msg.id);
    });
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error('the primary did not send the aggregated metrics in time'));
    }, timeoutMs);
    pending.set(id, (reply) => {
      clearTimeout(timer);
      if (reply.error !== undefined || reply.text === undefined) reject(new Error(reply.error ?? 'no metrics'));
      else resolve({ text: reply.text, contentType: reply.contentType ?? 'text/plain' });
    });
    process.send?.({ type: METRICS_REQUEST, id });
  });
}

/** In a worker: tell the primary a graceful close began and may take up to `budgetMs`. */
export function announceStopping(budgetMs: number): void {
  process.send?.({ type: STOPPING, budgetMs });
}

/** In a worker: tell the primary this worker is serving. */
export function announceReady(): void {
  process.send?.({ type: 'clusterdns:ready' });
}
