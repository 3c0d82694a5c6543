// `reload [INTERVAL] [JITTER]` -> a ReloadConfig. Arguments as CoreDNS plugin/reload/setup.go:
// defaults 30s and 15s, INTERVAL at least 2s, JITTER 0 (none) or at least 1s, and a JITTER above
// half INTERVAL is clamped to half of it (`reload 10s` runs with 5s), not rejected.
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, type Directive } from '../../chain/corefile.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { ReloadPlugin } from './plugin.js';

const DEFAULT_INTERVAL_MS = 30000;
const DEFAULT_JITTER_MS = 15000;
const MIN_INTERVAL_MS = 2000;
const MIN_JITTER_MS = 1000;

export interface ReloadConfig {
  /** Time between two reads of the Corefile. */
  intervalMs: number;
  /** Each wait is intervalMs plus a random share of [-jitterMs/2, +jitterMs/2); 0 for none. */
  jitterMs: number;
}

function parseReload(d: Directive): ReloadConfig {
  if (d.args.length > 2) throw new CorefileError(d.file, d.line, 'reload takes at most two arguments: reload [INTERVAL] [JITTER]');
  const interval = d.args[0] === undefined ? DEFAULT_INTERVAL_MS : parseGoDuration(d.args[0]);
  if (interval === undefined) throw new CorefileError(d.file, d.line, `reload: interval "${d.args[0]}" is not a duration; write e.g. 30s or 1m`);
  if (interval < MIN_INTERVAL_MS) throw new CorefileError(d.file, d.line, `reload: interval "${d.args[0]}" must be at least 2s`);
  let jitter = d.args[1] === undefined ? DEFAULT_JITTER_MS : parseGoDuration(d.args[1]);
  if (jitter === undefined) throw new CorefileError(d.file, d.line, `reload: jitter "${d.args[1]}" is not a duration; write e.g. 0s, 1s or 15s`);
  if (jitter !== 0 && jitter < MIN_JITTER_MS) throw new CorefileError(d.file, d.line, `reload: jitter "${d.args[1]}" must be 0 or at least 1s`);
  if (jitter > interval / 2) jitter = interval / 2;
  return { intervalMs: interval, jitterMs: jitter };
}

export const reloadPlugin: PluginDefinition = {
  name: 'reload',
  setup(d, ctx) {
    const cfg = parseReload(d);
    if (!ctx.corefile) ctx.log.warn('reload has no Corefile to watch (the built-in default is in use)');
    return new ReloadPlugin(cfg, ctx.corefile, ctx.requestReload);
  },
};
