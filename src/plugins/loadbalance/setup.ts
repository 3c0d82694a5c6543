// `loadbalance [round_robin]` -> a LoadbalanceConfig, as CoreDNS's plugin/loadbalance/setup.go
// reads it, less what is not implemented (the weighted policy, the `prefer` block), which is
// refused with that reason.
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import { CorefileError, type Directive } from '../../chain/corefile.js';
import { LoadbalancePlugin } from './plugin.js';

export interface LoadbalanceConfig {
  /** The only policy implemented. */
  policy: 'round_robin';
}

function parseLoadbalance(d: Directive): LoadbalanceConfig {
  if (d.args.length > 1 || (d.args[0] !== undefined && d.args[0] !== 'round_robin')) {
    throw new CorefileError(d.file, d.line, 'loadbalance: the only policy is round_robin (weighted is not supported)');
  }
  if (d.block && d.block.length > 0) throw new CorefileError(d.file, d.line, 'loadbalance: the option block (prefer CIDR...) is not supported');
  return { policy: 'round_robin' };
}

export const loadbalancePlugin: PluginDefinition = {
  name: 'loadbalance',
  // CoreDNS reads every loadbalance line of a block and the last one wins; each is still checked.
  setupAll(directives, ctx) {
    let last: Plugin | undefined;
    for (const d of directives) last = loadbalancePlugin.setup(d, ctx);
    return last;
  },
  setup(d) {
    return new LoadbalancePlugin(parseLoadbalance(d));
  },
};
