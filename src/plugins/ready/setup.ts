// `ready [ADDRESS] { monitor until-ready|continuously }` -> a ReadyConfig, as CoreDNS's
// plugin/ready/setup.go; the plugin learns its block's plugins once the block is built.
import type { PluginDefinition } from '../../chain/registry.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { parseHttpAddress } from '../../pkg/http.js';
import { ReadyMonitors, ReadyPlugin } from './plugin.js';
import type { MonitorMode, ReadyConfig } from './config.js';

const DEFAULT_READY_ADDRESS = ':8181';

function parseReady(d: Directive): ReadyConfig {
  const r: OptionReader = OptionReader.of(d).arity(0, 1, 'ready [ADDRESS]', 'ready :8181');
  const address = parseHttpAddress(r.arg(0) ?? DEFAULT_READY_ADDRESS);
  if (typeof address === 'string') r.fail(excerpt(address, 120));
  let mode: MonitorMode = 'until-ready';
  r.block({
    monitor: (o) => {
      mode = o.arity(1, 1, 'monitor until-ready|continuously').choice(0, 'mode', ['until-ready', 'continuously']);
    },
  });
  return { address, mode };
}

export const readyPlugin: PluginDefinition = {
  name: 'ready',
  setup(d, ctx) {
    const cfg = parseReady(d);
    // Every ready of the App, in any block and across reloads, reports on the same list.
    const monitors = ctx.shared('ready:monitors', () => new ReadyMonitors());
    const plugin = new ReadyPlugin(cfg, ctx.log.child({ plugin: 'ready' }), monitors, ctx.lameduck, ctx.httpLimits);
    // The block's plugins are known once all of them are set up.
    ctx.onBuilt((plugins) => {
      plugin.blockPlugins = plugins;
    });
    return plugin;
  },
};
