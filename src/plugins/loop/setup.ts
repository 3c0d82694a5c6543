// `loop` -> a LoopConfig, as CoreDNS's plugin/loop/setup.go: no arguments, no options, once per
// block; the probe goes to the block's first zone.
import type { PluginDefinition } from '../../chain/registry.js';
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { exitOnLoop, LoopPlugin } from './plugin.js';

export interface LoopConfig {
  /** The zone probed: the server block's first (CoreDNS), `.` for a block without zones. */
  zone: string;
}

function parseLoop(d: Directive, blockZones: readonly string[]): LoopConfig {
  OptionReader.of(d).noArgs().noBlock();
  return { zone: blockZones[0] ?? '.' };
}

export const loopPlugin: PluginDefinition = {
  name: 'loop',
  setup(d, ctx) {
    const { zone } = parseLoop(d, ctx.zones);
    return new LoopPlugin(zone, (qname) => ctx.lookup(qname, 'HINFO'), exitOnLoop(ctx.log));
  },
};
