// `sync --watch`: one sync run at a time, again on every manifest change, and again after a
// failure until one succeeds. A change made while etcd is down is written when etcd is back,
// without waiting for another edit.
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import { registry } from '../metrics/index.js';
import { openRoute, type HttpAddress, type OpenRoute } from '../pkg/http.js';

export interface SyncState {
  pending: Gauge;
  lastSuccess: Gauge;
  failures: Counter;
}

/** The gauges a fleet alerts on: a sync that stays pending means replicas serve an old set. */
export function syncMetrics(): SyncState {
  const reg = registry();
  const gauge = (name: string, help: string): Gauge => (reg.getSingleMetric(name) as Gauge | undefined) ?? new Gauge({ name, help, registers: [reg] });
  return {
    pending: gauge('clusterdns_sync_pending', '1 while the manifests as they are now are not yet in etcd (a sync is running or waiting to retry), else 0'),
    lastSuccess: gauge('clusterdns_sync_last_success_timestamp_seconds', 'When etcd last held everything the manifests serve (Unix time, seconds)'),
    failures:
      (reg.getSingleMetric('clusterdns_sync_failures_total') as Counter | undefined) ??
      new Counter({ name: 'clusterdns_sync_failures_total', help: 'Sync runs that failed (each is retried)', registers: [reg] }),
  };
}

/** Serves the process registry on ADDR/metrics (sync --metrics). */
export async function serveSyncMetrics(addr: HttpAddress, log: Logger): Promise<OpenRoute> {
  const route = await openRoute(addr, '/metrics', async (_req, res) => {
    const body = await registry().metrics();
    res.writeHead(200, { 'content-type': registry().contentType });
    res.end(body);
  }).catch((err: unknown) => {
    throw new Error(`--metrics ${addr.text}: cannot listen (${(err as Error).message}); pick another address, e.g. --metrics 127.0.0.1:9154`);
  });
  log.info({ address: addr.text, port: route.port }, 'sync: metrics on /metrics');
  return route;
}

export interface RetryOptions {
  /** First wait after a failure (ms); doubles per failure. */
  initialMs: number;
  /** Longest wait between attempts (ms). */
  maxMs: number;
}

/**
 * Runs `attempt` now and whenever `request` is called, one run at a time; a request during a run
 * runs once more after it. A failed run is retried with a doubling wait capped at `maxMs`, for as
 * long as it takes: the manifests are in etcd only when a run succeeded after the last change.
 */
export class RetryingSync {
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private failingSince = 0;
  private stopped = false;

  constructor(
    private readonly attempt: () => Promise<void>,
    private readonly retry: RetryOptions,
    private readonly state: SyncState,
    private readonly log: Logger,
  ) {}

  /** The manifests changed (or a retry is due): sync now, or right after the run in progress. */
  request(): void {
    if (this.stopped) return;
    this.state.pending.set(1);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      do {
        this.again = false;
        try {
          await this.attempt();
          if (this.failures > 0) {
            this.log.info({ failures: this.failures, downMs: Date.now() - this.failingSince }, 'sync: recovered; etcd now holds the current manifests');
          }
          this.failures = 0;
          if (!this.again) this.state.pending.set(0);
          this.state.lastSuccess.set(Date.now() / 1000);
        } catch (err) {
          if (this.failures === 0) this.failingSince = Date.now();
          this.failures++;
          this.state.failures.inc();
          const delay = this.again ? 0 : Math.min(this.retry.maxMs, this.retry.initialMs * 2 ** Math.min(this.failures - 1, 30));
          this.log.error({ err: (err as Error).message, failures: this.failures, retryInMs: delay }, 'sync failed; etcd keeps the last good set; retrying');
          if (this.again || this.stopped) continue;
          this.timer = setTimeout(() => {
            this.timer = undefined;
            this.request();
          }, delay);
        }
      } while (this.again && !this.stopped);
    } finally {
      this.running = false;
    }
  }
}
