// `reload [INTERVAL] [JITTER]` -> a ReloadConfig. Arguments as CoreDNS plugin/reload/setup.go:
// defaults 30s and 15s, INTERVAL at least 2s, JITTER 0 (none) or at least 1s, and a JITTER above
// half INTERVAL is clamped to half of it (`reload 10s` runs with 5s), not rejected.
import type { PluginDefinition } from '../../chain/registry.js';
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { ReloadPlugin } from './plugin.js';
import type { ReloadConfig } from './config.js';

const DEFAULT_INTERVAL_MS = 30000;
const DEFAULT_JITTER_MS = 15000;
const MIN_INTERVAL_MS = 2000;
const MIN_JITTER_MS = 1000;

function parseReload(d: Directive): ReloadConfig {
  const r = OptionReader.of(d).arity(0, 2, 'reload [INTERVAL] [JITTER]').noBlock();
  const interval = r.count > 0 ? r.duration(0, 'interval', { min: MIN_INTERVAL_MS, examples: '30s or 1m' }) : DEFAULT_INTERVAL_MS;
  let jitter = r.count > 1 ? r.duration(1, 'jitter', { min: MIN_JITTER_MS, zero: true, examples: '0s, 1s or 15s' }) : DEFAULT_JITTER_MS;
  if (jitter > interval / 2) jitter = interval / 2;
  return { intervalMs: interval, jitterMs: jitter };
}

export const reloadPlugin: PluginDefinition = {
  name: 'reload',
  setup(d, ctx) {
    const cfg = parseReload(d);
    if (!ctx.corefile) ctx.log.warn('reload has no Corefile to watch (the built-in default is in use)');
    return new ReloadPlugin(cfg, ctx.corefile, ctx.requestReload, ctx.metrics);
  },
};
