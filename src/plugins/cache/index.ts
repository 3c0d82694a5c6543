// Registers the cache plugin.
import type { PluginDefinition } from '../../chain/registry.js';
import { CachePlugin } from './plugin.js';
import { parseCache } from './setup.js';

export const cachePlugin: PluginDefinition = {
  name: 'cache',
  setup(d, ctx) {
    const cfg = parseCache(d, ctx.zones);
    ctx.log.info({ plugin: 'cache', zones: cfg.zones, successMaxTtl: cfg.successMaxTtl, denialMaxTtl: cfg.denialMaxTtl }, 'cache configured');
    return new CachePlugin(cfg);
  },
};
