// `etcd [ZONES...] { path PATH; endpoint URL...; credentials USER PASS; tls [CERT KEY CACERT];
// min-lease-ttl D; max-lease-ttl D; fallthrough [ZONES...] }` -> a validated EtcdConfig,
// following CoreDNS's plugin/etcd/setup.go.
import fs from 'node:fs';
import path from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import { excerpt } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { isSubdomain } from '../../pkg/names.js';
import { EtcdPlugin } from './plugin.js';
import { acquireMirror } from './mirror.js';
import { parseQueryBudget } from './budget.js';
import type { EtcdConfig } from './config.js';
import { DEFAULT_MAX_RECEIVE_BYTES, DEFAULT_PAGE_BYTES } from './kv.js';

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
  if (ms === undefined) return `"${excerpt(text)}" is not a TTL; write e.g. 30, 30s, 5m, 1h or 2h30m`;
  if (ms < 0) return `"${excerpt(text)}" must not be negative`;
  const secs = Math.floor(ms / 1000);
  if (secs > 0xffffffff) return `"${excerpt(text)}" is too large: the maximum is 4294967295 seconds`;
  return secs;
}

/** `endpoint URL...`: each an http:// or https:// URL with a host. */
function endpointOption(cfg: EtcdConfig, o: OptionReader): void {
  o.arity(1, Infinity, 'endpoint URL...', 'endpoint http://127.0.0.1:2379');
  for (const u of o.args) {
    let url: URL | undefined;
    try {
      url = new URL(u);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || (!url.port && !url.hostname)) {
      o.fail(`"${excerpt(u)}" is not an http:// or https:// URL with a host, e.g. http://127.0.0.1:2379`);
    }
  }
  cfg.endpoints = [...o.args];
}

/** `tls [CERT KEY] [CACERT]`, files relative to the Corefile; none: TLS with the system CAs. */
function tlsOption(cfg: EtcdConfig, o: OptionReader, corefile: string): void {
  o.arity(0, 3, 'tls [CERT KEY] [CACERT]');
  const files = o.args.map((f) => (path.isAbsolute(f) || !fs.existsSync(corefile) ? path.resolve(f) : path.resolve(path.dirname(corefile), f)));
  for (const f of files) if (!fs.existsSync(f)) o.fail(`file ${f} does not exist`);
  if (files.length === 1) cfg.tls = { ca: files[0] };
  else if (files.length === 2) cfg.tls = { cert: files[0], key: files[1] };
  else if (files.length === 3) cfg.tls = { cert: files[0], key: files[1], ca: files[2] };
  else cfg.tls = {};
}

/** `min-lease-ttl TTL`, `max-lease-ttl TTL`: CoreDNS's parseTTL. */
function leaseTtl(o: OptionReader): number {
  o.arity(1, 1, `${o.name} TTL`, `${o.name} 30s`);
  const t = parseTtl(o.arg(0)!);
  if (typeof t === 'string') o.fail(t);
  return t;
}

/** A count of at least `min`. */
function atLeast(o: OptionReader, min: number, example: number): number {
  const n = o.arity(1, 1, `${o.name} N`, `${o.name} ${example}`).int(0, 'N', { min });
  if (!Number.isSafeInteger(n)) o.fail(`N "${excerpt(o.arg(0)!)}" is too large`);
  return n;
}

/** Accepted and ignored, as CoreDNS does ("remove soon"). */
const ignored = (): void => undefined;

export function parseEtcd(d: Directive, blockZones: readonly string[]): EtcdConfig {
  const r: OptionReader = OptionReader.of(d);
  const zones = r.zones(0, blockZones);
  for (const z of zones) {
    if (!blockZones.some((b) => isSubdomain(z, b)))
      r.fail(`zone ${z} is not inside the server block's zones (${blockZones.join(' ')}); queries for it would never reach the plugin`);
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
  r.block(
    {
      path: (o) => {
        o.arity(1, 1, 'path PATH', 'path /skydns');
        if (keyPrefix(o.arg(0)!) === '//') o.fail('must name a key prefix such as /skydns, not the root');
        cfg.path = o.arg(0)!;
      },
      endpoint: (o) => endpointOption(cfg, o),
      credentials: (o) => {
        o.arity(2, 2, 'credentials USERNAME PASSWORD');
        [cfg.username, cfg.password] = o.args as [string, string];
      },
      tls: (o) => tlsOption(cfg, o, d.file),
      'min-lease-ttl': (o) => {
        cfg.minLeaseTtl = leaseTtl(o);
      },
      'max-lease-ttl': (o) => {
        cfg.maxLeaseTtl = leaseTtl(o);
      },
      fallthrough: (o) => {
        cfg.fallthrough = o.fallthrough();
      },
      changeset_timeout: (o) => {
        cfg.changesetTimeoutMs = o.arity(1, 1, 'changeset_timeout DURATION', 'changeset_timeout 60s').duration(0, '', { positive: true, examples: '60s' });
      },
      lookup_limit: (o) => {
        cfg.lookupLimit = atLeast(o, 1, 4096);
      },
      query_budget: (o) => {
        const b = parseQueryBudget(o.args);
        if (typeof b === 'string') return o.fail(b);
        cfg.queryBudget = b;
      },
      call_timeout: (o) => {
        cfg.callTimeoutMs = o.arity(1, 1, 'call_timeout DURATION', 'call_timeout 5s').duration(0, '', { min: 100, examples: '5s' });
      },
      keepalive: (o) => {
        cfg.keepaliveMs = o.arity(1, 1, 'keepalive DURATION', 'keepalive 10s').duration(0, '', { min: 100, examples: '10s' });
      },
      page_bytes: (o) => {
        cfg.pageBytes = atLeast(o, 1024, 8388608);
      },
      max_receive_bytes: (o) => {
        cfg.maxReceiveBytes = atLeast(o, 1024, 8388608);
      },
      lease_concurrency: (o) => {
        cfg.leaseConcurrency = atLeast(o, 1, 16);
      },
      stubzones: ignored,
      debug: ignored,
      upstream: ignored,
    },
    // CoreDNS's options and the two most used of ours.
    { listed: ['path', 'endpoint', 'credentials', 'tls', 'min-lease-ttl', 'max-lease-ttl', 'fallthrough', 'changeset_timeout', 'lookup_limit'] },
  );
  if (cfg.minLeaseTtl > cfg.maxLeaseTtl) r.fail(`min-lease-ttl (${cfg.minLeaseTtl}s) is above max-lease-ttl (${cfg.maxLeaseTtl}s)`);
  const pageBytes = cfg.pageBytes ?? DEFAULT_PAGE_BYTES;
  const maxReceiveBytes = cfg.maxReceiveBytes ?? DEFAULT_MAX_RECEIVE_BYTES;
  if (pageBytes >= maxReceiveBytes) r.fail(`page_bytes (${pageBytes}) must be below max_receive_bytes (${maxReceiveBytes}): a page is one gRPC message`);
  if (cfg.tls && cfg.endpoints.some((e) => e.startsWith('http://'))) r.fail('tls is set but an endpoint is http://; use https:// endpoints with tls');
  return cfg;
}

export const etcdPlugin: PluginDefinition = {
  name: 'etcd',
  setup(d, ctx) {
    const cfg = parseEtcd(d, ctx.zones);
    const log = ctx.log.child({ plugin: 'etcd' });
    const read = (f?: string): Buffer | undefined => (f ? fs.readFileSync(f) : undefined);
    const { mirror, release } = acquireMirror(
      ctx.shared,
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
        metrics: ctx.metrics,
      },
      ctx.invalidate,
    );
    log.info({ zones: cfg.zones, path: keyPrefix(cfg.path), endpoints: cfg.endpoints }, 'etcd zones configured');
    return new EtcdPlugin(cfg, mirror, { lookup: ctx.lookup, log }, release);
  },
};
