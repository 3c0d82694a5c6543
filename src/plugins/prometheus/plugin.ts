// The prometheus plugin's HTTP side (CoreDNS plugin/metrics/metrics.go): its App's registry
// on http://ADDRESS/metrics, and coredns_plugin_enabled for the query handlers of its block. The
// coredns_dns_* counting is the block's query observer, in observer.ts.
import type { BlockContext } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import type { ServerKey } from '../../chain/corefile.js';
import { openRoute, type HttpAddress, type HttpLimits, type OpenRoute } from '../../pkg/http.js';
import { serverLabel, type AppMetrics } from '../../metrics/index.js';
import type { PrometheusConfig } from './config.js';

/** Plugins CoreDNS does not list in coredns_plugin_enabled: they are not query handlers. */
const NOT_HANDLERS = new Set(['health', 'ready', 'bind', 'reload']);

export class PrometheusPlugin implements Plugin {
  readonly name = 'prometheus';
  blockPlugins: readonly Plugin[] = [];
  private route: OpenRoute | undefined;
  private readonly enabled: { server: string; zone: string; view: string; name: string }[] = [];

  constructor(
    readonly cfg: PrometheusConfig,
    private readonly keys: readonly ServerKey[],
    private readonly bindAddresses: () => readonly string[],
    private readonly scrape: BlockContext['scrapeMetrics'],
    private readonly metrics: AppMetrics,
    private readonly httpLimits?: Readonly<HttpLimits>,
  ) {}

  get address(): HttpAddress {
    return this.cfg.address;
  }

  /** coredns_plugin_enabled for one listener and zone of this block. */
  markEnabled(server: string, zone: string): void {
    const pm = this.metrics.m.pluginEnabled;
    for (const p of this.blockPlugins) {
      if (NOT_HANDLERS.has(p.name)) continue;
      const labels = { server, zone, view: '', name: p.name };
      if (this.enabled.some((l) => l.server === server && l.zone === zone && l.name === p.name)) continue;
      pm.set(labels, 1);
      this.enabled.push(labels);
    }
  }

  async start(): Promise<void> {
    this.metrics.collectProcessMetrics();
    // Every metric is on the first scrape, at zero until counted.
    void this.metrics.m;
    this.route = await openRoute(
      this.address,
      '/metrics',
      async (_req, res) => {
        // With --workers, any worker may get the scrape: it answers with every worker's metrics.
        const body = await this.scrape();
        res.writeHead(200, { 'content-type': body.contentType }).end(body.text);
      },
      this.httpLimits,
    );
    // Keys without a port use the server's default port, which is learnt from the first query.
    const binds = this.bindAddresses();
    for (const key of this.keys) {
      if (key.port === undefined) continue;
      for (const host of binds.length === 0 ? [''] : binds) this.markEnabled(serverLabel(host, key.port, key.transport), key.zone);
    }
  }

  async close(): Promise<void> {
    const pm = this.metrics.m.pluginEnabled;
    for (const labels of this.enabled.splice(0)) pm.remove(labels);
    const route = this.route;
    this.route = undefined;
    await route?.release();
  }
}
