// `loop` -> a LoopConfig, as CoreDNS's plugin/loop/setup.go: no arguments, no options, once per
// block; the probe goes to the block's first zone.
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, type Directive } from '../../chain/corefile.js';
import { exitOnLoop, LoopPlugin } from './plugin.js';

export interface LoopConfig {
  /** The zone probed: the server block's first (CoreDNS), `.` for a block without zones. */
  zone: string;
}

function parseLoop(d: Directive, blockZones: readonly string[]): LoopConfig {
  if (d.args.length > 0) throw new CorefileError(d.file, d.line, 'loop takes no arguments');
  if (d.block && d.block.length > 0) throw new CorefileError(d.file, d.line, 'loop takes no option block');
  return { zone: blockZones[0] ?? '.' };
}

export const loopPlugin: PluginDefinition = {
  name: 'loop',
  setup(d, ctx) {
    const { zone } = parseLoop(d, ctx.zones);
    return new LoopPlugin(zone, (qname) => ctx.lookup(qname, 'HINFO'), exitOnLoop(ctx.log));
  },
};
