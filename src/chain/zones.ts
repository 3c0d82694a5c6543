// Zone arguments of plugin directives, normalised like server block keys (so `10.0.0.0/24`
// means its reverse zone), with errors that name the directive's line.
import type { Directive } from './corefile.js';
import { CorefileError, excerpt } from './corefile.js';
import { parseServerKey } from './corefile-keys.js';

export function zoneArgs(args: readonly string[], d: Directive): string[] {
  const zones: string[] = [];
  for (const a of args) {
    try {
      zones.push(...parseServerKey(a).map((k) => k.zone));
    } catch (err) {
      throw new CorefileError(d.file, d.line, `${d.name}: bad zone "${excerpt(a)}": ${(err as Error).message}`);
    }
  }
  return zones;
}
