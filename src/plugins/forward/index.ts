// Registers the forward plugin: parse its block, start one Upstream per TO.
import type { PluginDefinition } from '../../chain/registry.js';
import { ForwardPlugin } from './plugin.js';
import { parseForward } from './setup.js';

export const forwardPlugin: PluginDefinition = {
  name: 'forward',
  setup(d, ctx) {
    const cfg = parseForward(d, ctx.zones);
    ctx.log.info(
      { plugin: 'forward', from: cfg.from, to: cfg.upstreams.map((u) => u.label), policy: cfg.policy, except: cfg.except },
      'forward upstreams',
    );
    return new ForwardPlugin(cfg);
  },
};
