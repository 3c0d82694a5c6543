// `cache [TTL] [ZONES...] { ... }` -> a validated CacheConfig, following CoreDNS's
// plugin/cache/setup.go (cacheParse) option by option, with its defaults from cache.go; and the
// plugin's registration.
import type { Directive } from '../../chain/corefile.js';
import { excerpt } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { CachePlugin } from './plugin.js';
import type { CacheConfig } from './config.js';

/** CoreDNS defaults: dnsutil.MaximumDefaulTTL (1h), half of it for denial, MinimalDefaultTTL (5s). */
const DEFAULTS = {
  capacity: 9984,
  maxTtl: 3600,
  maxDenialTtl: 1800,
  minTtl: 5,
  servfailTtl: 5,
} as const;

/** CoreDNS's defaults: capacity, TTL bounds, no prefetch, no stale answers. */
function defaultCache(): CacheConfig {
  return {
    zones: [],
    successCap: DEFAULTS.capacity,
    successMaxTtl: DEFAULTS.maxTtl,
    successMinTtl: DEFAULTS.minTtl,
    denialCap: DEFAULTS.capacity,
    denialMaxTtl: DEFAULTS.maxDenialTtl,
    denialMinTtl: DEFAULTS.minTtl,
    servfailTtl: DEFAULTS.servfailTtl,
    prefetch: 0,
    prefetchWindowMs: 60_000,
    prefetchPercentage: 10,
    staleUpToMs: 0,
    verifyStale: false,
    disableSuccess: [],
    disableDenial: [],
    keepTtl: false,
  };
}

/** `success|denial CAPACITY [TTL] [MINTTL]`. */
function capacityOption(cfg: CacheConfig, o: OptionReader): void {
  o.arity(1, 3, `${o.name} CAPACITY [TTL] [MINTTL]`);
  const cap = o.int(0, 'CAPACITY', { min: 0 });
  const max = o.count > 1 ? o.int(1, 'TTL', { min: 1 }) : undefined;
  const min = o.count > 2 ? o.int(2, 'MINTTL', { min: 0 }) : undefined;
  if (o.name === 'success') {
    cfg.successCap = cap;
    if (max !== undefined) cfg.successMaxTtl = max;
    if (min !== undefined) cfg.successMinTtl = min;
  } else {
    cfg.denialCap = cap;
    if (max !== undefined) cfg.denialMaxTtl = max;
    if (min !== undefined) cfg.denialMinTtl = min;
  }
}

/** `prefetch AMOUNT [[DURATION] [PERCENTAGE%]]`. */
function prefetchOption(cfg: CacheConfig, o: OptionReader): void {
  o.arity(1, 3, 'prefetch AMOUNT [[DURATION] [PERCENTAGE%]]');
  cfg.prefetch = o.int(0, 'AMOUNT', { min: 0 });
  if (o.count > 1) cfg.prefetchWindowMs = o.duration(1, 'DURATION', { examples: '30s, 1m or 10m' });
  if (o.count > 2) {
    const pct = o.arg(2)!;
    if (!/^\d+%$/.test(pct)) o.fail(`PERCENTAGE "${excerpt(pct)}" is not a percentage; write e.g. 10% or 50%`);
    const num = Number(pct.slice(0, -1));
    if (num < 10 || num > 90) o.fail(`PERCENTAGE must be in range [10, 90]: ${num}`);
    cfg.prefetchPercentage = num;
  }
}

/** `serve_stale [DURATION] [immediate|verify]`. */
function serveStaleOption(cfg: CacheConfig, o: OptionReader): void {
  // CoreDNS 1.14 also takes a verify timeout, a response TTL and a failure recheck here;
  // the cache here does not implement those, so they are refused rather than ignored.
  if (o.count > 2) o.fail('only `serve_stale [DURATION] [immediate|verify]` is supported (the verify timeout, response TTL and recheck arguments are not)');
  cfg.staleUpToMs = o.count > 0 ? o.duration(0, 'DURATION', { examples: '1h, 30m or 0' }) : 3_600_000;
  // CoreDNS reads the mode without regard to case.
  cfg.verifyStale = o.count > 1 && o.choice(1, 'refresh mode', ['immediate', 'verify'], true) === 'verify';
}

/** `servfail DURATION`: at most 5 minutes (RFC 2308). */
function servfailOption(cfg: CacheConfig, o: OptionReader): void {
  o.arity(1, 1, 'servfail DURATION');
  const ms = o.duration(0, 'DURATION', { examples: '5s, 30s or 0' });
  if (ms > 300_000) o.fail(`DURATION "${excerpt(o.arg(0)!)}" must be at most 5m: caching SERVFAIL responses over 5 minutes is not permitted (RFC 2308)`);
  cfg.servfailTtl = Math.floor(ms / 1000);
}

/** `disable success|denial [ZONES...]`. */
function disableOption(cfg: CacheConfig, o: OptionReader): void {
  o.arity(1, Infinity, 'disable success|denial [ZONES...]');
  const which = o.choice(0, 'cache type', ['success', 'denial']);
  const zs = o.zones(1, ['.']);
  if (which === 'success') cfg.disableSuccess = zs;
  else cfg.disableDenial = zs;
}

export function parseCache(d: Directive, blockZones: readonly string[]): CacheConfig {
  const r = OptionReader.of(d);
  const cfg = defaultCache();
  // The first argument is the TTL when it is a number, else a zone.
  let zonesFrom = 0;
  if (r.count > 0 && /^[+-]?\d+$/.test(r.arg(0)!)) {
    const ttl = r.int(0, 'TTL', { min: 1 });
    cfg.successMaxTtl = ttl;
    cfg.denialMaxTtl = ttl;
    zonesFrom = 1;
  }
  cfg.zones = r.zones(zonesFrom, blockZones);
  r.block(
    {
      success: (o) => capacityOption(cfg, o),
      denial: (o) => capacityOption(cfg, o),
      prefetch: (o) => prefetchOption(cfg, o),
      serve_stale: (o) => serveStaleOption(cfg, o),
      servfail: (o) => servfailOption(cfg, o),
      disable: (o) => disableOption(cfg, o),
      keepttl: (o) => {
        o.noArgs();
        cfg.keepTtl = true;
      },
    },
    { unsupported: { serve_stale_policy: 'the cache serves stale answers by serve_stale alone' } },
  );
  return cfg;
}

export const cachePlugin: PluginDefinition = {
  name: 'cache',
  setup(d, ctx) {
    const cfg = parseCache(d, ctx.zones);
    ctx.log.info({ plugin: 'cache', zones: cfg.zones, successMaxTtl: cfg.successMaxTtl, denialMaxTtl: cfg.denialMaxTtl }, 'cache configured');
    return new CachePlugin(cfg, ctx.metrics);
  },
};
