// `cache [TTL] [ZONES...] { ... }` -> a validated CacheConfig, following CoreDNS's
// plugin/cache/setup.go (cacheParse) option by option, with its defaults from cache.go; and the
// plugin's registration.
import type { Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { zoneArgs } from '../../chain/zones.js';
import { CachePlugin } from './plugin.js';

export interface CacheConfig {
  /** Zones cached, lowercased and fully qualified. */
  zones: string[];
  /** Capacity, maximum and minimum TTL (seconds) of the success cache. */
  successCap: number;
  successMaxTtl: number;
  successMinTtl: number;
  /** The same for denial of existence (NXDOMAIN, NODATA, and SERVFAIL for `servfail`). */
  denialCap: number;
  denialMaxTtl: number;
  denialMinTtl: number;
  /** Seconds SERVFAIL/NOTIMP replies are cached; 0 never. */
  servfailTtl: number;
  /** 0: no prefetch; else the number of hits that makes an item popular. */
  prefetch: number;
  /** Longest gap between hits that keeps the count going, ms. */
  prefetchWindowMs: number;
  /** Prefetch when the remaining TTL is at most this percentage of the original. */
  prefetchPercentage: number;
  /** Serve expired items for up to this long, ms; 0 never. */
  staleUpToMs: number;
  /** serve_stale `verify`: ask the next plugin before serving stale. */
  verifyStale: boolean;
  /** `disable success ZONES`: positive answers under these zones are not stored. */
  disableSuccess: string[];
  /** `disable denial ZONES`: denials under these zones are not stored. */
  disableDenial: string[];
  /** Cached replies keep their original TTLs instead of counting down. */
  keepTtl: boolean;
}

/** CoreDNS defaults: dnsutil.MaximumDefaulTTL (1h), half of it for denial, MinimalDefaultTTL (5s). */
const DEFAULTS = {
  capacity: 9984,
  maxTtl: 3600,
  maxDenialTtl: 1800,
  minTtl: 5,
  servfailTtl: 5,
} as const;

const OPTIONS = ['success', 'denial', 'prefetch', 'serve_stale', 'servfail', 'disable', 'keepttl'];

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

type Fail = (reason: string) => never;

function int(fail: Fail, o: Directive, text: string, what: string): number {
  if (!/^[+-]?\d+$/.test(text)) fail(`cache ${o.name}: ${what} "${excerpt(text)}" is not an integer`);
  return Number(text);
}

/** `success|denial CAPACITY [TTL] [MINTTL]`. */
function capacityOption(cfg: CacheConfig, o: Directive, fail: Fail): void {
  if (o.args.length === 0 || o.args.length > 3) fail(`cache ${o.name}: usage \`${o.name} CAPACITY [TTL] [MINTTL]\``);
  const cap = int(fail, o, o.args[0]!, 'CAPACITY');
  if (cap < 0) fail(`cache ${o.name}: CAPACITY can not be negative: ${cap}`);
  let max: number | undefined;
  let min: number | undefined;
  if (o.args.length > 1) {
    max = int(fail, o, o.args[1]!, 'TTL');
    if (max <= 0) fail(`cache TTL can not be zero or negative: ${max}`);
  }
  if (o.args.length > 2) {
    min = int(fail, o, o.args[2]!, 'MINTTL');
    if (min < 0) fail(`cache min TTL can not be negative: ${min}`);
  }
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
function prefetchOption(cfg: CacheConfig, o: Directive, fail: Fail): void {
  if (o.args.length === 0 || o.args.length > 3) fail('cache prefetch: usage `prefetch AMOUNT [[DURATION] [PERCENTAGE%]]`');
  const amount = int(fail, o, o.args[0]!, 'AMOUNT');
  if (amount < 0) fail(`cache prefetch amount should be positive: ${amount}`);
  cfg.prefetch = amount;
  if (o.args.length > 1) {
    const ms = parseGoDuration(o.args[1]!);
    if (ms === undefined) fail(`cache prefetch: "${excerpt(o.args[1]!)}" is not a duration (e.g. 1m)`);
    cfg.prefetchWindowMs = ms!;
  }
  if (o.args.length > 2) {
    const pct = o.args[2]!;
    if (!pct.endsWith('%')) fail(`cache prefetch: last character of percentage should be \`%\`, but is: "${pct.slice(-1)}"`);
    const num = int(fail, o, pct.slice(0, -1), 'PERCENTAGE');
    if (num < 10 || num > 90) fail(`cache prefetch: percentage should fall in range [10, 90]: ${num}`);
    cfg.prefetchPercentage = num;
  }
}

/** `serve_stale [DURATION] [immediate|verify]`. */
function serveStaleOption(cfg: CacheConfig, o: Directive, fail: Fail): void {
  // CoreDNS 1.14 also takes a verify timeout, a response TTL and a failure recheck here;
  // the cache here does not implement those, so they are refused rather than ignored.
  if (o.args.length > 2) fail('cache serve_stale: only `serve_stale [DURATION] [immediate|verify]` is supported (the verify timeout, response TTL and recheck arguments are not)');
  cfg.staleUpToMs = 3_600_000;
  if (o.args.length > 0) {
    const ms = parseGoDuration(o.args[0]!);
    if (ms === undefined) fail(`cache serve_stale: "${excerpt(o.args[0]!)}" is not a duration (e.g. 1h)`);
    if (ms! < 0) fail('cache serve_stale: invalid negative duration');
    cfg.staleUpToMs = ms!;
  }
  cfg.verifyStale = false;
  if (o.args.length > 1) {
    const mode = o.args[1]!.toLowerCase();
    if (mode !== 'immediate' && mode !== 'verify') fail(`cache serve_stale: invalid refresh mode "${excerpt(o.args[1]!)}"; use immediate or verify`);
    cfg.verifyStale = mode === 'verify';
  }
}

/** `servfail DURATION`: at most 5 minutes (RFC 2308). */
function servfailOption(cfg: CacheConfig, o: Directive, fail: Fail): void {
  if (o.args.length !== 1) fail('cache servfail: usage `servfail DURATION`');
  const ms = parseGoDuration(o.args[0]!);
  if (ms === undefined) fail(`cache servfail: "${excerpt(o.args[0]!)}" is not a duration (e.g. 5s)`);
  if (ms! < 0) fail('cache servfail: invalid negative ttl');
  if (ms! > 300_000) fail('cache servfail: caching SERVFAIL responses over 5 minutes is not permitted (RFC 2308)');
  cfg.servfailTtl = Math.floor(ms! / 1000);
}

/** `disable success|denial [ZONES...]`. */
function disableOption(cfg: CacheConfig, o: Directive, fail: Fail): void {
  if (o.args.length === 0) fail('cache disable: usage `disable success|denial [ZONES...]`');
  const which = o.args[0];
  if (which !== 'success' && which !== 'denial') fail(`cache disable: cache type must be "success" or "denial", not "${excerpt(which!)}"`);
  const zs = o.args.length > 1 ? zoneArgs(o.args.slice(1), o) : ['.'];
  if (which === 'success') cfg.disableSuccess = zs;
  else cfg.disableDenial = zs;
}

export function parseCache(d: Directive, blockZones: readonly string[]): CacheConfig {
  const args = [...d.args];
  const cfg = defaultCache();
  // The first argument is the TTL when it is a number, else a zone.
  if (args.length > 0 && /^[+-]?\d+$/.test(args[0]!)) {
    const ttl = Number(args.shift());
    if (ttl <= 0) throw new CorefileError(d.file, d.line, `cache TTL can not be zero or negative: ${ttl}`);
    cfg.successMaxTtl = ttl;
    cfg.denialMaxTtl = ttl;
  }
  cfg.zones = args.length > 0 ? zoneArgs(args, d) : [...blockZones];
  forEachOption(d.block, (o) => {
    const fail = (reason: string): never => {
      throw new CorefileError(d.file, o.line, reason);
    };
    switch (o.name) {
      case 'success':
      case 'denial':
        capacityOption(cfg, o, fail);
        break;
      case 'prefetch':
        prefetchOption(cfg, o, fail);
        break;
      case 'serve_stale':
        serveStaleOption(cfg, o, fail);
        break;
      case 'servfail':
        servfailOption(cfg, o, fail);
        break;
      case 'disable':
        disableOption(cfg, o, fail);
        break;
      case 'keepttl':
        if (o.args.length > 0) fail('cache keepttl takes no arguments');
        cfg.keepTtl = true;
        break;
      case 'serve_stale_policy':
        fail('cache serve_stale_policy is not supported');
        break;
      default:
        fail(`unknown cache option "${excerpt(o.name)}"; valid options: ${OPTIONS.join(', ')}`);
    }
  });
  return cfg;
}

export const cachePlugin: PluginDefinition = {
  name: 'cache',
  setup(d, ctx) {
    const cfg = parseCache(d, ctx.zones);
    ctx.log.info({ plugin: 'cache', zones: cfg.zones, successMaxTtl: cfg.successMaxTtl, denialMaxTtl: cfg.denialMaxTtl }, 'cache configured');
    return new CachePlugin(cfg);
  },
};
