// `prometheus [ADDRESS] { runtime_metrics }` -> a PrometheusConfig, as CoreDNS's
// plugin/metrics/setup.go reads it; setup also hangs the block's coredns_dns_* observer on the
// block's listeners.
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt, type Directive } from '../../chain/corefile.js';
import { parseHttpAddress, type HttpAddress } from '../../pkg/http.js';
import { metricsObserver } from './observer.js';
import { PrometheusPlugin } from './plugin.js';

const DEFAULT_PROMETHEUS_ADDRESS = 'localhost:9153';

export interface PrometheusConfig {
  /** Where /metrics is served; blocks naming the same address share one listener and registry. */
  address: HttpAddress;
}

/** One option line; none of them changes the config. */
function checkOption(o: Directive): void {
  // CoreDNS's runtime_metrics adds Go's runtime/metrics; every runtime metric prom-client
  // has for Node (heap, GC, event loop lag) is exported already, so there is nothing to add.
  if (o.name === 'runtime_metrics') {
    if (o.args.length > 0) throw new CorefileError(o.file, o.line, 'prometheus runtime_metrics takes no arguments');
    return;
  }
  if (o.name === 'tls') throw new CorefileError(o.file, o.line, 'prometheus tls is not supported: the metrics endpoint serves plain HTTP');
  throw new CorefileError(o.file, o.line, `unknown prometheus option "${excerpt(o.name)}"; valid options: runtime_metrics`);
}

function parsePrometheus(d: Directive): PrometheusConfig {
  if (d.args.length > 1) throw new CorefileError(d.file, d.line, 'prometheus takes at most one address, e.g. `prometheus localhost:9153`');
  for (const o of d.block ?? []) checkOption(o);
  const address = parseHttpAddress(d.args[0] ?? DEFAULT_PROMETHEUS_ADDRESS);
  if (typeof address === 'string') throw new CorefileError(d.file, d.line, `prometheus: ${address}`);
  return { address };
}

export const prometheusPlugin: PluginDefinition = {
  name: 'prometheus',
  setup(d, ctx) {
    const plugin = new PrometheusPlugin(parsePrometheus(d), ctx.keys, () => ctx.bindAddresses, ctx.scrapeMetrics);
    ctx.onBuilt((plugins) => {
      plugin.blockPlugins = plugins;
    });
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
