// `ready [ADDRESS] { monitor until-ready|continuously }` -> a ReadyConfig, as CoreDNS's
// plugin/ready/setup.go; the plugin learns its block's plugins once the block is built.
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, type Directive } from '../../chain/corefile.js';
import { parseHttpAddress, type HttpAddress } from '../../pkg/http.js';
import { ReadyPlugin } from './plugin.js';

const DEFAULT_READY_ADDRESS = ':8181';

export type MonitorMode = 'until-ready' | 'continuously';

export interface ReadyConfig {
  /** Where /ready is served; blocks naming the same address share one listener. */
  address: HttpAddress;
  /** until-ready: a plugin that reported ready once is not asked again. */
  mode: MonitorMode;
}

/** The one option, `monitor until-ready|continuously`. */
function parseMonitor(o: Directive): MonitorMode {
  if (o.name !== 'monitor') throw new CorefileError(o.file, o.line, `unknown ready option "${o.name}"; the only option is monitor`);
  const v = o.args[0];
  if (o.args.length !== 1 || (v !== 'until-ready' && v !== 'continuously')) {
    throw new CorefileError(o.file, o.line, 'ready monitor takes until-ready or continuously');
  }
  return v;
}

function parseReady(d: Directive): ReadyConfig {
  if (d.args.length > 1) throw new CorefileError(d.file, d.line, 'ready takes at most one address, e.g. `ready :8181`');
  const address = parseHttpAddress(d.args[0] ?? DEFAULT_READY_ADDRESS);
  if (typeof address === 'string') throw new CorefileError(d.file, d.line, `ready: ${address}`);
  let mode: MonitorMode = 'until-ready';
  for (const o of d.block ?? []) mode = parseMonitor(o);
  return { address, mode };
}

export const readyPlugin: PluginDefinition = {
  name: 'ready',
  setup(d, ctx) {
    const plugin = new ReadyPlugin(parseReady(d), ctx.log.child({ plugin: 'ready' }));
    // The block's plugins are known once all of them are set up.
    ctx.onBuilt((plugins) => {
      plugin.blockPlugins = plugins;
    });
    return plugin;
  },
};
