// The ready plugin's HTTP side (CoreDNS plugin/ready/ready.go): /ready answers 200 OK once every
// plugin of the server blocks that enable ready reports ready, else 503 with their names.
import type { Logger } from 'pino';
import type { Plugin } from '../../chain/plugin.js';
import type { SharedResource } from '../../chain/registry.js';
import type { Lameduck } from '../../chain/lameduck.js';
import { openRoute, type HttpAddress, type HttpLimits, type OpenRoute } from '../../pkg/http.js';
import type { MonitorMode, ReadyConfig } from './config.js';

interface ReadyReport {
  ready: boolean;
  /** Names of the plugins not ready, sorted and comma-separated (CoreDNS's body). */
  notReady: string;
  /** Why each is not ready, for the log. */
  reasons: Record<string, string>;
}

/**
 * Every `ready` of an App reports on the same list, as CoreDNS's does in its process: the plugins
 * of each block that enables ready, whichever address serves /ready. Another App has its own.
 */
export class ReadyMonitors {
  private readonly monitors = new Set<ReadyPlugin>();

  add(p: ReadyPlugin): void {
    this.monitors.add(p);
  }

  delete(p: ReadyPlugin): void {
    this.monitors.delete(p);
  }

  /** Asks every monitored plugin; plugins that said ready once are not asked again (until-ready). */
  readiness(): ReadyReport {
    const names = new Set<string>();
    const reasons: Record<string, string> = {};
    for (const m of this.monitors) {
      for (const p of m.blockPlugins) {
        if (!p.ready || m.confirmed.has(p)) continue;
        const r = p.ready();
        if (r === true) {
          if (m.mode === 'until-ready') m.confirmed.add(p);
          continue;
        }
        names.add(p.name);
        reasons[p.name] = r;
      }
    }
    const notReady = [...names].sort().join(',');
    return { ready: names.size === 0, notReady, reasons };
  }

  close(): void {
    this.monitors.clear();
  }
}

export class ReadyPlugin implements Plugin {
  readonly name = 'ready';
  /** The plugins of this block, once it is built. */
  blockPlugins: readonly Plugin[] = [];
  readonly confirmed = new WeakSet<Plugin>();
  private route: OpenRoute | undefined;

  constructor(
    readonly cfg: ReadyConfig,
    private readonly log: Logger,
    private readonly monitors: SharedResource<ReadyMonitors>,
    private readonly lameduck: Lameduck,
    private readonly httpLimits?: Readonly<HttpLimits>,
  ) {}

  get address(): HttpAddress {
    return this.cfg.address;
  }

  get mode(): MonitorMode {
    return this.cfg.mode;
  }

  async start(): Promise<void> {
    this.monitors.value.add(this);
    try {
      this.route = await openRoute(
        this.address,
        '/ready',
        (_req, res) => {
          if (this.lameduck.active || !this.route) {
            res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('Shutting down');
            return;
          }
          const report = this.monitors.value.readiness();
          if (report.ready) {
            res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('OK');
            return;
          }
          this.log.info({ reasons: report.reasons }, `Plugins not ready: "${report.notReady}"`);
          res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end(report.notReady);
        },
        this.httpLimits,
      );
    } catch (err) {
      this.monitors.value.delete(this);
      throw err;
    }
  }

  async close(): Promise<void> {
    this.monitors.value.delete(this);
    this.monitors.release();
    const route = this.route;
    this.route = undefined;
    await route?.release();
  }
}
