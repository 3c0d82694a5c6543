// `prometheus [ADDRESS] { runtime_metrics }` -> a PrometheusConfig, as CoreDNS's
// plugin/metrics/setup.go reads it; setup also hangs the block's coredns_dns_* observer on the
// block's listeners.
import type { PluginDefinition } from '../../chain/registry.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { parseHttpAddress } from '../../pkg/http.js';
import type { PrometheusConfig } from './config.js';
import { metricsObserver } from './observer.js';
import { PrometheusPlugin } from './plugin.js';

const DEFAULT_PROMETHEUS_ADDRESS = 'localhost:9153';

/** One option line; none of them changes the config. */
function parsePrometheus(d: Directive): PrometheusConfig {
  const r: OptionReader = OptionReader.of(d).arity(0, 1, 'prometheus [ADDRESS]', 'prometheus localhost:9153');
  r.block(
    {
      // CoreDNS's runtime_metrics adds Go's runtime/metrics; every runtime metric prom-client
      // has for Node (heap, GC, event loop lag) is exported already, so there is nothing to add.
      runtime_metrics: (o) => o.noArgs(),
    },
    { unsupported: { tls: 'the metrics endpoint serves plain HTTP' } },
  );
  const address = parseHttpAddress(r.arg(0) ?? DEFAULT_PROMETHEUS_ADDRESS);
  if (typeof address === 'string') r.fail(excerpt(address, 120));
  return { address };
}

export const prometheusPlugin: PluginDefinition = {
  name: 'prometheus',
  setup(d, ctx) {
    const plugin = new PrometheusPlugin(parsePrometheus(d), ctx.keys, () => ctx.bindAddresses, ctx.scrapeMetrics, ctx.metrics, ctx.httpLimits);
    ctx.onBuilt((plugins) => {
      plugin.blockPlugins = plugins;
    });
    ctx.observe(
      metricsObserver(ctx.metrics, {
        keys: ctx.keys,
        bindAddresses: () => ctx.bindAddresses,
        onServed: (server, zone) => plugin.markEnabled(server, zone),
      }),
    );
    return plugin;
  },
};
