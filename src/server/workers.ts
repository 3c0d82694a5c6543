// `serve --workers N|auto`: N worker processes share the UDP and TCP ports (Node's cluster module
// hands every worker the same sockets), the primary only supervises: it restarts a worker that
// dies, forwards reload signals, stops them all on shutdown, aggregates their metrics, and
// hands out load permits so the workers' manifest loads (at start and on every reload, which
// all workers do at once) run a few at a time instead of together (chain/load-permit.ts).
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { LoadPermitGate } from '../chain/load-permit.js';
import { parseGoDuration } from '../pkg/duration.js';

const METRICS_REQUEST = 'clusterdns:metrics';
const METRICS_REPLY = 'clusterdns:metrics-reply';
const STOPPING = 'clusterdns:stopping';
const LOAD_ASK = 'clusterdns:load-ask';
const LOAD_GRANTED = 'clusterdns:load-granted';
const LOAD_DONE = 'clusterdns:load-done';
const READY = 'clusterdns:ready';
const START_FAILED = 'clusterdns:start-failed';
/** Default of `--worker-loads`: workers that may load manifests at once. */
export const DEFAULT_WORKER_LOADS = 1;
/**
 * Default of `--worker-load-timeout`: how long a worker may hold a load permit before the
 * primary takes it back. Far above a load of a large cluster (seconds), so only a worker that
 * is frozen (SIGSTOP, a debugger, swapped out) or stuck loses it, instead of holding every other
 * worker's reload back for good.
 */
export const DEFAULT_WORKER_LOAD_TIMEOUT_MS = 120_000;
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

/** `--worker-load-timeout`: a Go duration from 1s to 1h. */
export function workerLoadTimeout(flag: string | undefined): number {
  if (flag === undefined) return DEFAULT_WORKER_LOAD_TIMEOUT_MS;
  const ms = parseGoDuration(flag);
  if (ms === undefined || ms < 1000 || ms > 3_600_000) throw new Error(`--worker-load-timeout ${flag}: use a duration from 1s to 1h, e.g. 2m`);
  return ms;
}

export function workerLoads(flag: string | undefined): number {
  if (flag === undefined) return DEFAULT_WORKER_LOADS;
  const n = Number(flag);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`--worker-loads ${flag}: use a number from 1 to 64`);
  return n;
}

export const isWorker = (): boolean => cluster.isWorker;

/** This worker's id (1, 2, ... as the primary forks them; a restarted worker gets a new one), or undefined in the primary. */
export const workerId = (): number | undefined => cluster.worker?.id;

/** What the primary's load permits need of a worker (cluster's Worker has it). */
export interface PermitHolder {
  readonly id: number;
  readonly process: { readonly pid?: number | undefined };
  isConnected(): boolean;
  send(message: unknown): unknown;
}

/**
 * The primary's load permits: at most `max` held at once, the rest granted in the order asked.
 * A worker that exits gives back what it held and drops what it asked for, so a worker dying
 * mid-load never stalls the others. A permit is a lease of `leaseMs`: one not given back by
 * then is taken back (with a warning naming the worker), so a worker frozen mid-load (SIGSTOP,
 * a debugger) does not hold every other worker's load back; its late "done" is ignored.
 */
export class LoadPermits {
  private readonly held = new Map<string, { worker: PermitHolder; timer: NodeJS.Timeout }>();
  private readonly queue: { worker: PermitHolder; id: number; what: string }[] = [];

  constructor(
    private readonly max: number,
    private readonly log: Logger,
    private readonly leaseMs = DEFAULT_WORKER_LOAD_TIMEOUT_MS,
  ) {}

  /** Permits held now (for tests). */
  get holding(): number {
    return this.held.size;
  }

  ask(worker: PermitHolder, id: number, what = 'load'): void {
    this.queue.push({ worker, id, what });
    this.grant();
  }

  done(worker: PermitHolder, id: number): void {
    this.release(`${worker.id}:${id}`);
    this.grant();
  }

  gone(worker: PermitHolder): void {
    for (const [key, h] of [...this.held]) if (h.worker === worker) this.release(key);
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.worker === worker) this.queue.splice(i, 1);
    this.grant();
  }

  /** Stops the lease timers (the primary is stopping). */
  close(): void {
    for (const key of [...this.held.keys()]) this.release(key);
    this.queue.length = 0;
  }

  private release(key: string): void {
    const h = this.held.get(key);
    if (!h) return;
    clearTimeout(h.timer);
    this.held.delete(key);
  }

  private grant(): void {
    while (this.held.size < this.max && this.queue.length > 0) {
      const { worker, id, what } = this.queue.shift()!;
      if (!worker.isConnected()) continue;
      const key = `${worker.id}:${id}`;
      const timer = setTimeout(() => {
        if (!this.held.has(key)) return;
        this.release(key);
        this.log.warn(
          { worker: worker.id, pid: worker.process.pid, load: what, heldMs: this.leaseMs, waiting: this.queue.length },
          'a worker held its load permit past --worker-load-timeout (frozen or stuck?); taking it back so other workers can load',
        );
        this.grant();
      }, this.leaseMs);
      timer.unref();
      this.held.set(key, { worker, timer });
      worker.send({ type: LOAD_GRANTED, id });
    }
  }
}

/**
 * Runs the primary: forks `count` workers running the same command line and supervises them
 * until SIGINT/SIGTERM. Resolves when every worker has exited after a signal; rejects once the
 * workers are stopped when they keep dying, so the process exits non-zero and its supervisor
 * (systemd `Restart=on-failure`, a Kubernetes pod) restarts it instead of seeing a clean exit.
 */
export async function runPrimary(count: number, log: Logger, loads = DEFAULT_WORKER_LOADS, loadTimeoutMs = DEFAULT_WORKER_LOAD_TIMEOUT_MS): Promise<void> {
  const aggregator = new AggregatorRegistry();
  const permits = new LoadPermits(loads, log, loadTimeoutMs);
  cluster.on('message', (worker, msg: { type?: string; id?: unknown; what?: unknown }) => {
    if (typeof msg?.id !== 'number') return;
    if (msg.type === LOAD_ASK) permits.ask(worker, msg.id, typeof msg.what === 'string' ? msg.what : undefined);
    else if (msg.type === LOAD_DONE) permits.done(worker, msg.id);
  });
  let stopping = false;
  // Until the first worker is serving, a failure is the configuration's or the machine's (a port
  // in use, a bad manifest), the same for every worker: it stops the start with the worker's one
  // message instead of forking the rest into a crash loop that prints it once per restart.
  let starting = true;
  let startFailed: (err: Error) => void = () => undefined;
  cluster.on('message', (_w, msg: { type?: string; message?: unknown }) => {
    if (msg?.type === START_FAILED && starting) startFailed(new Error(typeof msg.message === 'string' ? msg.message : 'the first worker could not start'));
  });
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
    permits.gone(worker);
    if (stopping) return;
    if (starting) {
      startFailed(new Error(`the first worker exited (${signal ?? `code ${code}`}) before it was serving; see the log above for why`));
      return;
    }
    log.error({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker died; starting a new one');
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
        log.warn({ worker: w.id, pid: w.process.pid, ms }, 'worker did not stop in time; killing it');
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
    permits.close();
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
  let firstReady: () => void = () => undefined;
  cluster.on('message', (_w, msg: { type?: string }) => {
    if (msg?.type !== READY) return;
    if (++ready === 1) firstReady();
    if (ready === count) log.info({ workers: count }, 'all workers ready');
  });
  let crashed: (err: Error) => void = () => undefined;
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
    startFailed = (err) => {
      if (!starting) return;
      starting = false;
      void stopAll('the first worker could not start').then(() => reject(err));
    };
    firstReady = () => {
      if (!starting) return;
      starting = false;
      for (let i = 1; i < count; i++) fork();
    };
    fork();
  });
}

/**
 * In a worker that failed to start: hands its error to the primary, which prints it once and
 * exits non-zero, and exits without printing it itself.
 */
export function reportStartFailure(err: unknown): Promise<never> {
  const message = err instanceof Error ? err.message : String(err);
  return new Promise(() => {
    if (!process.connected || !process.send) {
      process.stderr.write(`clusterdns: ${message}\n`);
      process.exit(1);
    }
    process.send({ type: START_FAILED, message }, () => process.exit(1));
  });
}

/** In a worker: the load permit gate that asks the primary (the App's AppOptions.loadPermitGate). */
export function workerLoadPermitGate(log: Logger): LoadPermitGate {
  let nextAsk = 0;
  const waiting = new Map<number, () => void>();
  process.on('message', (msg: { type?: string; id?: number }) => {
    if (msg?.type !== LOAD_GRANTED || msg.id === undefined) return;
    waiting.get(msg.id)?.();
    waiting.delete(msg.id);
  });
  return (what) =>
    new Promise((resolve) => {
      // Without the primary (it is gone and this worker is on its way out) nobody grants.
      if (!process.connected) return resolve(() => undefined);
      const id = ++nextAsk;
      const asked = Date.now();
      waiting.set(id, () => {
        log.debug({ pid: process.pid, load: what, waitedMs: Date.now() - asked }, 'load permit granted');
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          log.debug({ load: what }, 'load permit given back');
          if (process.connected) process.send?.({ type: LOAD_DONE, id });
        });
      });
      process.send?.({ type: LOAD_ASK, id, what });
    });
}

/** In a worker: the serving App's registry answers the primary's aggregator. */
export function joinMetricsAggregation(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  // prom-client starts answering the primary's requests when an aggregator is constructed.
  new AggregatorRegistry();
}

// A worker has one IPC channel to its primary, whatever the Apps in it: the scrapes in flight on
// that channel and its one message listener belong to the process, not to an App.
let nextId = 0;
const pending = new Map<number, (reply: { text?: string; contentType?: string; error?: string }) => void>();
let listening = false;

/** In a worker: the metrics of every worker, aggregated by the primary. */
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
  process.send?.({ type: READY });
}
