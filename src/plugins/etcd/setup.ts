// `etcd [ZONES...] { path PATH; endpoint URL...; credentials USER PASS; tls [CERT KEY CACERT];
// min-lease-ttl D; max-lease-ttl D; fallthrough [ZONES...] }` -> a validated EtcdConfig,
// following CoreDNS's plugin/etcd/setup.go.
import fs from 'node:fs';
import path from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { zoneArgs } from '../../chain/zones.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { isSubdomain } from '../../pkg/names.js';
import { EtcdPlugin } from './plugin.js';
import { acquireMirror } from './mirror.js';
import { parseQueryBudget, type QueryBudgetConfig } from './budget.js';
import { DEFAULT_MAX_RECEIVE_BYTES, DEFAULT_PAGE_BYTES } from './kv.js';

export interface EtcdConfig {
  /** Zones answered, lowercased and fully qualified. */
  zones: string[];
  /** The `path` as written (CoreDNS default "skydns"); keys live under /PATH/. */
  path: string;
  endpoints: string[];
  username?: string;
  password?: string;
  /** Files of `tls`: CA only, cert and key, or all three; `{}` for TLS with the system CAs. */
  tls?: { cert?: string; key?: string; ca?: string };
  /** Seconds; lease TTLs are clamped into [min, max] (CoreDNS defaults 30 s and 24 h). */
  minLeaseTtl: number;
  maxLeaseTtl: number;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
  /** Milliseconds a marked change set may be held back before what arrived is applied anyway. */
  changesetTimeoutMs: number;
  /** Records one lookup reads at most (the first in key order). */
  lookupLimit: number;
  /** `query_budget WORK [OUTSIDE]` (budget.ts); unset: the defaults there. */
  queryBudget?: QueryBudgetConfig;
  /** Deadline of each etcd call, and of a watch progress request (ms); the defaults are in kv.ts. */
  callTimeoutMs?: number;
  /** Silence before a connection (gRPC ping) or the watch (progress request) is checked (ms). */
  keepaliveMs?: number;
  /** Bytes one listing page aims at. */
  pageBytes?: number;
  /** Largest gRPC message taken from etcd (bytes). */
  maxReceiveBytes?: number;
  /** Lease lookups in flight at once. */
  leaseConcurrency?: number;
}

const OPTIONS = [
  'path',
  'endpoint',
  'credentials',
  'tls',
  'min-lease-ttl',
  'max-lease-ttl',
  'fallthrough',
  'changeset_timeout',
  'lookup_limit',
  'query_budget',
  'call_timeout',
  'keepalive',
  'page_bytes',
  'max_receive_bytes',
  'lease_concurrency',
  'stubzones',
  'debug',
  'upstream',
];
/** Options named in the unknown-property message: CoreDNS's and the two most used of ours. */
const LISTED_OPTIONS = 9;
const DEFAULT_ENDPOINT = 'http://localhost:2379';
/** A 64 KiB message holds about 4,000 address records: more could never be sent anyway. */
const DEFAULT_LOOKUP_LIMIT = 4096;

/** The etcd key prefix of a `path` value: `/skydns/`. */
export function keyPrefix(p: string): string {
  return `/${p.replace(/^\/+|\/+$/g, '')}/`;
}

/** CoreDNS's parseTTL: seconds, or a Go duration; whole seconds from 0 to 2^32-1. */
function parseTtl(text: string): number | string {
  const s = /^\d+$/.test(text) ? `${text}s` : text;
  const ms = parseGoDuration(s);
  if (ms === undefined) return `"${text}" is not a TTL; use a form like 30, 30s, 5m, 1h or 2h30m`;
  if (ms < 0) return `"${text}": TTL must be non-negative`;
  const secs = Math.floor(ms / 1000);
  if (secs > 0xffffffff) return `"${text}": TTL too large, maximum is 4294967295 seconds`;
  return secs;
}

type Fail = (reason: string, at?: Directive) => never;

/** `endpoint URL...`: each an http:// or https:// URL with a host. */
function endpointOption(cfg: EtcdConfig, o: Directive, fail: Fail): void {
  if (o.args.length === 0) fail('endpoint needs at least one URL, e.g. endpoint http://127.0.0.1:2379', o);
  for (const u of o.args) {
    let url: URL | undefined;
    try {
      url = new URL(u);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.port && !url.hostname) {
      fail(`endpoint "${u}" is not an http:// or https:// URL with a host, e.g. http://127.0.0.1:2379`, o);
    }
  }
  cfg.endpoints = [...o.args];
}

/** `tls [CERT KEY] [CACERT]`, files relative to the Corefile; none: TLS with the system CAs. */
function tlsOption(cfg: EtcdConfig, o: Directive, fail: Fail, corefile: string): void {
  const files = o.args.map((f) => (path.isAbsolute(f) || !fs.existsSync(corefile) ? path.resolve(f) : path.resolve(path.dirname(corefile), f)));
  if (files.length > 3) fail('tls takes at most 3 arguments: [CERT KEY] [CACERT]', o);
  for (const f of files) if (!fs.existsSync(f)) fail(`tls file ${f} does not exist`, o);
  if (files.length === 1) cfg.tls = { ca: files[0] };
  else if (files.length === 2) cfg.tls = { cert: files[0], key: files[1] };
  else if (files.length === 3) cfg.tls = { cert: files[0], key: files[1], ca: files[2] };
  else cfg.tls = {};
}

/** `min-lease-ttl TTL`, `max-lease-ttl TTL`. */
function leaseTtlOption(cfg: EtcdConfig, o: Directive, fail: Fail): void {
  if (o.args.length !== 1) fail(`${o.name} needs one TTL, e.g. ${o.name} 30s`, o);
  const t = parseTtl(o.args[0]!);
  if (typeof t === 'string') fail(`invalid ${o.name} value: ${t}`, o);
  if (o.name === 'min-lease-ttl') cfg.minLeaseTtl = t as number;
  else cfg.maxLeaseTtl = t as number;
}

/** One option line of an etcd block into `cfg`. */
function etcdOption(cfg: EtcdConfig, o: Directive, fail: Fail, corefile: string): void {
  switch (o.name) {
    case 'path':
      if (o.args.length !== 1) fail('path needs one argument: path PATH (e.g. /skydns)', o);
      if (keyPrefix(o.args[0]!) === '//') fail('path must name a key prefix such as /skydns, not the root', o);
      cfg.path = o.args[0]!;
      break;
    case 'endpoint':
      endpointOption(cfg, o, fail);
      break;
    case 'credentials':
      if (o.args.length !== 2) fail('credentials requires 2 arguments, username and password', o);
      [cfg.username, cfg.password] = o.args as [string, string];
      break;
    case 'tls':
      tlsOption(cfg, o, fail, corefile);
      break;
    case 'min-lease-ttl':
    case 'max-lease-ttl':
      leaseTtlOption(cfg, o, fail);
      break;
    case 'fallthrough':
      cfg.fallthrough = zoneArgs(o.args, o);
      break;
    case 'lookup_limit': {
      const n = o.args.length === 1 && /^\d+$/.test(o.args[0]!) ? Number(o.args[0]) : 0;
      if (n < 1) fail('lookup_limit needs one whole number of at least 1, e.g. lookup_limit 4096', o);
      cfg.lookupLimit = n;
      break;
    }
    case 'query_budget': {
      const b = parseQueryBudget(o.args);
      if (typeof b === 'string') fail(b, o);
      cfg.queryBudget = b as QueryBudgetConfig;
      break;
    }
    case 'changeset_timeout': {
      const ms = o.args.length === 1 ? parseGoDuration(o.args[0]!) : undefined;
      if (ms === undefined || ms <= 0) fail('changeset_timeout needs one positive duration, e.g. changeset_timeout 60s', o);
      cfg.changesetTimeoutMs = ms!;
      break;
    }
    case 'call_timeout':
    case 'keepalive': {
      const ms = o.args.length === 1 ? parseGoDuration(o.args[0]!) : undefined;
      if (ms === undefined || ms < 100) fail(`${o.name} needs one duration of at least 100ms, e.g. ${o.name} ${o.name === 'keepalive' ? '10s' : '5s'}`, o);
      if (o.name === 'call_timeout') cfg.callTimeoutMs = ms!;
      else cfg.keepaliveMs = ms!;
      break;
    }
    case 'page_bytes':
    case 'max_receive_bytes':
    case 'lease_concurrency': {
      const n = o.args.length === 1 && /^\d+$/.test(o.args[0]!) ? Number(o.args[0]) : 0;
      const min = o.name === 'lease_concurrency' ? 1 : 1024;
      if (n < min || !Number.isSafeInteger(n)) fail(`${o.name} needs one whole number of at least ${min}, e.g. ${o.name} ${o.name === 'lease_concurrency' ? 16 : 8388608}`, o);
      if (o.name === 'page_bytes') cfg.pageBytes = n;
      else if (o.name === 'max_receive_bytes') cfg.maxReceiveBytes = n;
      else cfg.leaseConcurrency = n;
      break;
    }
    case 'stubzones':
    case 'debug':
    case 'upstream':
      // Accepted and ignored, as CoreDNS does ("remove soon").
      break;
    default:
      fail(`unknown property "${o.name}"; valid options: ${OPTIONS.slice(0, LISTED_OPTIONS).join(', ')}`, o);
  }
}

export function parseEtcd(d: Directive, blockZones: readonly string[]): EtcdConfig {
  const fail = (reason: string, at: Directive = d): never => {
    throw new CorefileError(at.file, at.line, `etcd: ${reason}`);
  };
  const zones = d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones];
  for (const z of zones) {
    if (!blockZones.some((b) => isSubdomain(z, b))) fail(`zone ${z} is not inside the server block's zones (${blockZones.join(' ')}); queries for it would never reach the plugin`);
  }
  const cfg: EtcdConfig = {
    zones,
    path: 'skydns',
    endpoints: [DEFAULT_ENDPOINT],
    minLeaseTtl: 30,
    maxLeaseTtl: 86400,
    changesetTimeoutMs: 60_000,
    lookupLimit: DEFAULT_LOOKUP_LIMIT,
  };
  for (const o of d.block ?? []) etcdOption(cfg, o, fail, d.file);
  if (cfg.minLeaseTtl > cfg.maxLeaseTtl) fail(`min-lease-ttl (${cfg.minLeaseTtl}s) is above max-lease-ttl (${cfg.maxLeaseTtl}s)`);
  const pageBytes = cfg.pageBytes ?? DEFAULT_PAGE_BYTES;
  const maxReceiveBytes = cfg.maxReceiveBytes ?? DEFAULT_MAX_RECEIVE_BYTES;
  if (pageBytes >= maxReceiveBytes) fail(`page_bytes (${pageBytes}) must be below max_receive_bytes (${maxReceiveBytes}): a page is one gRPC message`);
  if (cfg.tls && cfg.endpoints.some((e) => e.startsWith('http://'))) fail('tls is set but an endpoint is http://; use https:// endpoints with tls');
  return cfg;
}

export const etcdPlugin: PluginDefinition = {
  name: 'etcd',
  setup(d, ctx) {
    const cfg = parseEtcd(d, ctx.zones);
    const log = ctx.log.child({ plugin: 'etcd' });
    const read = (f?: string): Buffer | undefined => (f ? fs.readFileSync(f) : undefined);
    const { mirror, release } = acquireMirror(
      {
        prefix: keyPrefix(cfg.path),
        endpoints: cfg.endpoints,
        username: cfg.username,
        password: cfg.password,
        tls: cfg.tls ? { ca: read(cfg.tls.ca), cert: read(cfg.tls.cert), key: read(cfg.tls.key) } : undefined,
        zonesLabel: cfg.zones.join(','),
        log,
        changesetTimeoutMs: cfg.changesetTimeoutMs,
        callTimeoutMs: cfg.callTimeoutMs,
        keepaliveMs: cfg.keepaliveMs,
        pageBytes: cfg.pageBytes,
        maxReceiveBytes: cfg.maxReceiveBytes,
        leaseConcurrency: cfg.leaseConcurrency,
      },
      ctx.invalidate,
    );
    log.info({ zones: cfg.zones, path: keyPrefix(cfg.path), endpoints: cfg.endpoints }, 'etcd zones configured');
    return new EtcdPlugin(cfg, mirror, { lookup: ctx.lookup, log }, release);
  },
};
