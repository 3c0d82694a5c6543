// The health plugin's HTTP side (CoreDNS plugin/health/health.go): /health answers 200 OK while
// the process runs, a once-a-second self check feeds the overload metrics, and shutdown waits
// out the lameduck period.
import type { Logger } from 'pino';
import type { Plugin } from '../../chain/plugin.js';
import { localUrl, openRoute, type HttpAddress, type HttpLimits, type OpenRoute } from '../../pkg/http.js';
import type { AppMetrics } from '../../metrics/index.js';
import { goDurationString } from '../../pkg/duration.js';
import type { Lameduck } from '../../chain/lameduck.js';
import type { HealthConfig } from './config.js';

/** The self check runs once a second, as CoreDNS's, and gives up after 3 s. */
const CHECK_INTERVAL_MS = 1000;
const CHECK_TIMEOUT_MS = 3000;

export class HealthPlugin implements Plugin {
  readonly name = 'health';
  private route: OpenRoute | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: AbortController | undefined;
  private lameduckDone = false;

  constructor(
    readonly cfg: HealthConfig,
    private readonly log: Logger,
    private readonly lameduck: Lameduck,
    private readonly metrics: AppMetrics,
    private readonly httpLimits?: Readonly<HttpLimits>,
  ) {}

  get address(): HttpAddress {
    return this.cfg.address;
  }

  get lameduckMs(): number {
    return this.cfg.lameduckMs;
  }

  /** beforeShutdown waits out the lameduck period. */
  get shutdownDelayMs(): number {
    return this.lameduckMs;
  }

  async start(): Promise<void> {
    this.route = await openRoute(
      this.address,
      '/health',
      (_req, res) => {
        // As CoreDNS: healthy for as long as the process serves HTTP, lameduck included.
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('OK');
      },
      this.httpLimits,
    );
    const url = localUrl(this.address, this.route.port, '/health');
    this.timer = setInterval(() => void this.selfCheck(url), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /**
   * CoreDNS's overload signal: fetch our own /health and record how long it took
   * (coredns_health_request_duration_seconds); a busy event loop shows up here first.
   */
  private async selfCheck(url: string): Promise<void> {
    if (this.inFlight) return;
    const abort = new AbortController();
    this.inFlight = abort;
    const timeout = setTimeout(() => abort.abort(), CHECK_TIMEOUT_MS);
    timeout.unref();
    const start = process.hrtime.bigint();
    const m = this.metrics.m;
    try {
      const res = await fetch(url, { signal: abort.signal });
      await res.arrayBuffer();
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      m.healthDuration.observe(seconds);
      if (seconds > 1) this.log.warn(`Local health request to "${url}" took more than 1s: ${goDurationString(seconds * 1000)}`);
    } catch (err) {
      if (this.inFlight !== abort || !this.timer) return; // closed meanwhile
      m.healthDuration.observe(Number(process.hrtime.bigint() - start) / 1e9);
      m.healthFailures.inc();
      this.log.warn(`Local health request to "${url}" failed: ${(err as Error).message}`);
    } finally {
      clearTimeout(timeout);
      if (this.inFlight === abort) this.inFlight = undefined;
    }
  }

  /**
   * Final shutdown, before the DNS listeners close: wait out the lameduck period while /health
   * still answers OK and DNS still answers (and /ready says "Shutting down"), as CoreDNS does.
   */
  async beforeShutdown(): Promise<void> {
    if (this.lameduckDone || !this.route || this.lameduckMs <= 0) return;
    this.lameduckDone = true;
    this.lameduck.enter();
    this.log.info(`Going into lameduck mode for ${goDurationString(this.lameduckMs)}`);
    try {
      await new Promise((resolve) => setTimeout(resolve, this.lameduckMs));
    } finally {
      this.lameduck.leave();
    }
  }

  /** A reload (`{ reload: true }`) closes at once; a shutdown waits out lameduck first if nothing did. */
  async close(opts: { reload?: boolean } = {}): Promise<void> {
    if (!this.route) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.inFlight?.abort();
    this.inFlight = undefined;
    if (!opts.reload) await this.beforeShutdown();
    const route = this.route;
    this.route = undefined;
    await route.release();
  }
}
