// Zone arguments of plugin directives, normalised like server block keys (so `10.0.0.0/24`
// means its reverse zone), with errors that name the directive's line.
import type { Directive } from './corefile.js';
import { CorefileError, defaultCorefileLimits, excerpt } from './corefile.js';
import { parseServerKey } from './corefile-keys.js';

export function zoneArgs(args: readonly string[], d: Directive): string[] {
  const zones: string[] = [];
  const max = d.maxZones ?? defaultCorefileLimits.maxZones;
  for (const a of args) {
    let parsed;
    try {
      parsed = parseServerKey(a);
    } catch (err) {
      throw new CorefileError(d.file, d.line, `${d.name}: bad zone "${excerpt(a)}": ${(err as Error).message}`);
    }
    for (const k of parsed) zones.push(k.zone);
    // A CIDR off an octet boundary is split into up to 128 zones: bound what a line can expand to.
    if (zones.length > max) throw new CorefileError(d.file, d.line, `${d.name}: more than ${max} zones (--max-corefile-zones)`);
  }
  return zones;
}
