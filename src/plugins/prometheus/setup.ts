// `prometheus [ADDRESS]`: the process's metrics on http://ADDRESS/metrics, and the coredns_dns_*
// metrics of this server block's queries.
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import type { Plugin } from '../../chain/plugin.js';
import { openRoute, parseHttpAddress, type HttpAddress, type OpenRoute } from '../../pkg/http.js';
import { collectProcessMetrics, metrics, serverLabel } from '../../metrics/index.js';
import { metricsObserver } from './observer.js';
import type { ServerKey } from '../../chain/corefile.js';

export const DEFAULT_PROMETHEUS_ADDRESS = 'localhost:9153';

/** Plugins CoreDNS does not list in coredns_plugin_enabled: they are not query handlers. */
const NOT_HANDLERS = new Set(['health', 'ready', 'bind', 'reload']);

export class PrometheusPlugin implements Plugin {
  readonly name = 'prometheus';
  blockPlugins: readonly Plugin[] = [];
  private route: OpenRoute | undefined;
  private readonly enabled: { server: string; zone: string; view: string; name: string }[] = [];

  constructor(
    readonly address: HttpAddress,
    private readonly keys: readonly ServerKey[],
    private readonly bindAddresses: () => readonly string[],
    private readonly scrape: BlockContext['scrapeMetrics'],
  ) {}

  /** coredns_plugin_enabled for one listener and zone of this block. */
  markEnabled(server: string, zone: string): void {
    const pm = metrics().pluginEnabled;
    for (const p of this.blockPlugins) {
      if (NOT_HANDLERS.has(p.name)) continue;
      const labels = { server, zone, view: '', name: p.name };
      if (this.enabled.some((l) => l.server === server && l.zone === zone && l.name === p.name)) continue;
      pm.set(labels, 1);
      this.enabled.push(labels);
    }
  }

  async start(): Promise<void> {
    collectProcessMetrics();
    metrics();
    this.route = await openRoute(this.address, '/metrics', async (_req, res) => {
      // With --workers, any worker may get the scrape: the server answers with every worker's metrics.
      const body = await this.scrape();
      res.writeHead(200, { 'content-type': body.contentType }).end(body.text);
    });
    // Keys without a port use the server's default port, which is learnt from the first query.
    const binds = this.bindAddresses();
    for (const key of this.keys) {
      if (key.port === undefined) continue;
      for (const host of binds.length === 0 ? [''] : binds) this.markEnabled(serverLabel(host, key.port), key.zone);
    }
  }

  async close(): Promise<void> {
    const pm = metrics().pluginEnabled;
    for (const labels of this.enabled.splice(0)) pm.remove(labels);
    const route = this.route;
    this.route = undefined;
    await route?.release();
  }
}

export const prometheusPlugin: PluginDefinition = {
  name: 'prometheus',
  setup(d, ctx) {
    if (d.args.length > 1) throw new CorefileError(d.file, d.line, 'prometheus takes at most one address, e.g. `prometheus localhost:9153`');
    for (const o of d.block ?? []) {
      // CoreDNS's runtime_metrics adds Go's runtime/metrics; every runtime metric prom-client
      // has for Node (heap, GC, event loop lag) is exported already, so there is nothing to add.
      if (o.name === 'runtime_metrics') {
        if (o.args.length > 0) throw new CorefileError(o.file, o.line, 'prometheus runtime_metrics takes no arguments');
        continue;
      }
      if (o.name === 'tls') throw new CorefileError(o.file, o.line, 'prometheus tls is not supported: the metrics endpoint serves plain HTTP');
      throw new CorefileError(o.file, o.line, `unknown prometheus option "${excerpt(o.name)}"; valid options: runtime_metrics`);
    }
    const address = parseHttpAddress(d.args[0] ?? DEFAULT_PROMETHEUS_ADDRESS);
    if (typeof address === 'string') throw new CorefileError(d.file, d.line, `prometheus: ${address}`);
    const plugin = new PrometheusPlugin(address, ctx.keys, () => ctx.bindAddresses, ctx.scrapeMetrics);
    const appOnBuilt = ctx.onBuilt;
    ctx.onBuilt = (plugins) => {
      plugin.blockPlugins = plugins;
      appOnBuilt?.(plugins);
    };
    ctx.observe(
      metricsObserver({
        keys: ctx.keys,
        bindAddresses: () => ctx.bindAddresses,
        onServed: (server, zone) => plugin.markEnabled(server, zone),
      }),
    );
    return plugin;
  },
};
