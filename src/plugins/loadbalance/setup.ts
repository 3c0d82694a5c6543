// `loadbalance [round_robin]` -> a LoadbalanceConfig, as CoreDNS's plugin/loadbalance/setup.go
// reads it, less what is not implemented (the weighted policy, the `prefer` block), which is
// refused with that reason.
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { LoadbalancePlugin } from './plugin.js';
import type { LoadbalanceConfig } from './config.js';

function parseLoadbalance(d: Directive): LoadbalanceConfig {
  const r = OptionReader.of(d).arity(0, 1, 'loadbalance [round_robin]');
  if (r.count === 1 && r.arg(0) !== 'round_robin') r.fail(`policy "${excerpt(r.arg(0)!)}" is not supported: the only policy is round_robin (weighted is not)`);
  if (d.block && d.block.length > 0) r.fail('the option block (prefer CIDR...) is not supported');
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
