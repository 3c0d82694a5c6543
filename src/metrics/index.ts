// Every metric clusterdns exports, with CoreDNS's names, label sets and buckets (plugin/metrics/vars,
// plugin/cache, plugin/pkg/proxy, plugin/forward, plugin/reload, plugin/health), so existing CoreDNS
// dashboards and alerts work unchanged, on one registry per App (AppMetrics).
//
// How to use it from a plugin: the App's metrics are `ctx.metrics` in setup.
//
//   const m = ctx.metrics.m;                   // get-or-create, always the same objects per App
//   m.cacheHits.inc({ server, type: 'success', zones, view: '' });
//   m.cacheEntries.set({ server, type: 'denial', zones, view: '' }, size);
//   ctx.metrics.forwardExchange('127.0.0.1:53', 'NOERROR', seconds);
//
// - The `prometheus` plugin serves its App's registry on /metrics. Recording a metric costs the
//   same whether or not a `prometheus` block exists, so plugins need not check: just record.
// - Every label listed for a metric must be given (use '' for `view`: clusterdns has no views).
// - `server` is the listener as CoreDNS writes it: use `serverLabel(bindAddress, port)`, e.g.
//   `dns://:53` without `bind`, `dns://127.0.0.1:1053` with it (see that function).
// - `zones` (cache) is the plugin's zones joined with ',' as CoreDNS's cache does; `zone` (dns_*)
//   is the one server-block zone that matched the query.
// - Loads and reloads report through AppMetrics' methods (recordLoad, recordLoadError,
//   recordReloadFailure, setReloadVersion), never by touching the gauges.
//
// For worker processes: this is an ordinary prom-client Registry, so a primary can aggregate the
// workers' registries with prom-client's AggregatorRegistry (server/workers.ts).
import { readFileSync } from 'node:fs';
import type { Transport } from '../dns/transport.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, exponentialBuckets } from 'prom-client';

/** CoreDNS's plugin.TimeBuckets: 0.25 ms to 8 s, doubling (16 buckets). */
const TIME_BUCKETS = exponentialBuckets(0.00025, 2, 16);
/** CoreDNS's plugin.SlimTimeBuckets: 0.25 ms to 2.5 s, x10 (5 buckets). */
const SLIM_TIME_BUCKETS = exponentialBuckets(0.00025, 10, 5);
/** CoreDNS's request/response size buckets (bytes). */
const SIZE_BUCKETS = [0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3];

export interface Metrics {
  // --- server (plugin/metrics/vars): recorded by the prometheus plugin's query observer ---
  /** coredns_dns_requests_total{server, zone, view, proto, family, type} */
  requests: Counter<'server' | 'zone' | 'view' | 'proto' | 'family' | 'type'>;
  /** coredns_dns_request_duration_seconds{server, zone, view} (CoreDNS 1.14 has no type label here) */
  requestDuration: Histogram<'server' | 'zone' | 'view'>;
  /** coredns_dns_request_size_bytes{server, zone, view, proto} */
  requestSize: Histogram<'server' | 'zone' | 'view' | 'proto'>;
  /** coredns_dns_do_requests_total{server, zone, view} */
  doRequests: Counter<'server' | 'zone' | 'view'>;
  /** coredns_dns_response_size_bytes{server, zone, view, proto} */
  responseSize: Histogram<'server' | 'zone' | 'view' | 'proto'>;
  /** coredns_dns_responses_total{server, zone, view, rcode, plugin} */
  responses: Counter<'server' | 'zone' | 'view' | 'rcode' | 'plugin'>;
  /** coredns_panics_total */
  panics: Counter<string>;
  /** coredns_plugin_enabled{server, zone, view, name} */
  pluginEnabled: Gauge<'server' | 'zone' | 'view' | 'name'>;
  /** coredns_build_info{version, revision, goversion} */
  buildInfo: Gauge<'version' | 'revision' | 'goversion'>;

  // --- health (plugin/health) ---
  /** coredns_health_request_duration_seconds: the health plugin's once-a-second self check. */
  healthDuration: Histogram<string>;
  /** coredns_health_request_failures_total */
  healthFailures: Counter<string>;

  // --- reload (plugin/reload) ---
  /** coredns_reload_failed_total */
  reloadFailed: Counter<string>;
  /** coredns_reload_version_info{hash, value}: hash is 'sha512', value the Corefile digest. */
  reloadVersionInfo: Gauge<'hash' | 'value'>;

  // --- cache (plugin/cache) ---
  /** coredns_cache_entries{server, type, zones, view}; type is 'success' or 'denial'. */
  cacheEntries: Gauge<'server' | 'type' | 'zones' | 'view'>;
  /** coredns_cache_requests_total{server, zones, view} */
  cacheRequests: Counter<'server' | 'zones' | 'view'>;
  /** coredns_cache_hits_total{server, type, zones, view} */
  cacheHits: Counter<'server' | 'type' | 'zones' | 'view'>;
  /** coredns_cache_misses_total{server, zones, view} (deprecated in CoreDNS, still exported) */
  cacheMisses: Counter<'server' | 'zones' | 'view'>;
  /** coredns_cache_prefetch_total{server, zones, view} */
  cachePrefetches: Counter<'server' | 'zones' | 'view'>;
  /** coredns_cache_drops_total{server, zones, view} */
  cacheDrops: Counter<'server' | 'zones' | 'view'>;
  /** coredns_cache_served_stale_total{server, zones, view} */
  cacheServedStale: Counter<'server' | 'zones' | 'view'>;
  /** coredns_cache_evictions_total{server, type, zones, view} */
  cacheEvictions: Counter<'server' | 'type' | 'zones' | 'view'>;

  // --- forward (plugin/pkg/proxy with proxy_name="forward", and plugin/forward) ---
  /** coredns_proxy_request_duration_seconds{proxy_name, to, rcode}: CoreDNS >= 1.11's per-upstream histogram. */
  proxyRequestDuration: Histogram<'proxy_name' | 'to' | 'rcode'>;
  /** coredns_proxy_healthcheck_failures_total{proxy_name, to} */
  proxyHealthcheckFailures: Counter<'proxy_name' | 'to'>;
  /** coredns_proxy_conn_cache_hits_total{proxy_name, to, proto} */
  proxyConnCacheHits: Counter<'proxy_name' | 'to' | 'proto'>;
  /** coredns_proxy_conn_cache_misses_total{proxy_name, to, proto} */
  proxyConnCacheMisses: Counter<'proxy_name' | 'to' | 'proto'>;
  /** coredns_forward_healthcheck_broken_total: every upstream down, a random one is tried. */
  forwardHealthcheckBroken: Counter<string>;
  /** coredns_forward_max_concurrent_rejects_total */
  forwardMaxConcurrentRejects: Counter<string>;
  /**
   * Pre-1.11 names many dashboards still chart; record them through `forwardExchange` and
   * `forwardHealthcheckFailure` below, which keep them and the proxy_* metrics in step.
   * coredns_forward_requests_total{to}
   */
  forwardRequests: Counter<'to'>;
  /** coredns_forward_responses_total{rcode, to} */
  forwardResponses: Counter<'rcode' | 'to'>;
  /** coredns_forward_request_duration_seconds{to, rcode} */
  forwardRequestDuration: Histogram<'to' | 'rcode'>;
  /** coredns_forward_healthcheck_failures_total{to} */
  forwardHealthcheckFailures: Counter<'to'>;

  // --- clusterdns' own: manifest and zone loads ---
  /** clusterdns_objects_loaded{plugin, zones}: manifest objects read by the last good load. */
  objectsLoaded: Gauge<'plugin' | 'zones'>;
  /** clusterdns_records_loaded{plugin, zones}: records served from the last good load. */
  recordsLoaded: Gauge<'plugin' | 'zones'>;
  /** clusterdns_last_load_timestamp_seconds{plugin, zones}: Unix time of the last good load. */
  lastLoadTimestamp: Gauge<'plugin' | 'zones'>;
  /** clusterdns_load_errors_total{plugin, zones}: manifest or zone loads that failed (old data kept). */
  loadErrors: Counter<'plugin' | 'zones'>;
  /** clusterdns_manifest_rejected_objects{plugin, zones}: objects the last load left out (the API server would reject them). */
  rejectedObjects: Gauge<'plugin' | 'zones'>;
}

/**
 * The metrics of one App: its own prom-client registry and every metric on it. Two Apps in one
 * process (two library `Cluster` servers) count apart; the prometheus plugin serves its App's.
 */
export class AppMetrics {
  readonly registry = new Registry();
  private all: Metrics | undefined;
  private defaultsCollected = false;
  private readonly groups = new Map<string, unknown>();
  private answerCacheSource: () => readonly AnswerCacheReading[] = () => [];
  private answerCacheRegistered = false;

  /** Every metric, created on first use on `registry`. */
  get m(): Metrics {
    return (this.all ??= createMetrics(this.registry));
  }

  /**
   * Metrics a plugin defines itself (the etcd mirror's), made once per App under `key` on this
   * App's registry.
   */
  group<T>(key: string, make: (registry: Registry) => T): T {
    let g = this.groups.get(key) as T | undefined;
    if (g === undefined) {
      g = make(this.registry);
      this.groups.set(key, g);
    }
    return g;
  }

  /**
   * Adds Node's process metrics (process_cpu_seconds_total, process_resident_memory_bytes,
   * nodejs_eventloop_lag_seconds...) once, as CoreDNS exports Go's process and runtime metrics.
   */
  collectProcessMetrics(): void {
    if (this.defaultsCollected) return;
    this.defaultsCollected = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /** A load (startup or reload) succeeded and its data now serves. */
  recordLoad(r: LoadReport): void {
    const m = this.m;
    const labels = { plugin: r.plugin, zones: zonesLabel(r.zones) };
    if (r.objects !== undefined) m.objectsLoaded.set(labels, r.objects);
    if (r.records !== undefined) m.recordsLoaded.set(labels, r.records);
    if (r.rejected !== undefined) m.rejectedObjects.set(labels, r.rejected);
    m.lastLoadTimestamp.set(labels, (r.at ?? new Date()).getTime() / 1000);
    m.loadErrors.inc(labels, 0);
  }

  /** A manifest or zone load failed; the previous data keeps serving. */
  recordLoadError(r: { plugin: string; zones: readonly string[] }): void {
    this.m.loadErrors.inc({ plugin: r.plugin, zones: zonesLabel(r.zones) });
  }

  /** A Corefile reload failed (coredns_reload_failed_total). */
  recordReloadFailure(): void {
    this.m.reloadFailed.inc();
  }

  /** The Corefile now serving, by its SHA-512 hex digest (coredns_reload_version_info). */
  setReloadVersion(sha512Hex: string): void {
    const m = this.m;
    m.reloadVersionInfo.reset();
    m.reloadVersionInfo.set({ hash: 'sha512', value: sha512Hex }, 1);
  }

  /**
   * One exchange with a forward upstream finished: records CoreDNS 1.14's proxy histogram and the
   * older coredns_forward_* series together. `rcode` is the upstream's RCODE name.
   */
  forwardExchange(to: string, rcode: string, seconds: number): void {
    const m = this.m;
    m.proxyRequestDuration.observe({ proxy_name: 'forward', to, rcode }, seconds);
    m.forwardRequests.inc({ to });
    m.forwardResponses.inc({ rcode, to });
    m.forwardRequestDuration.observe({ to, rcode }, seconds);
  }

  /** A forward health check of `to` failed. */
  forwardHealthcheckFailure(to: string): void {
    const m = this.m;
    m.proxyHealthcheckFailures.inc({ proxy_name: 'forward', to });
    m.forwardHealthcheckFailures.inc({ to });
  }

  /** Where the answer-cache figures come from: the App's listeners, read when /metrics is scraped. */
  exportAnswerCaches(read: () => readonly AnswerCacheReading[]): void {
    this.answerCacheSource = read;
    if (this.answerCacheRegistered) return;
    this.answerCacheRegistered = true;
    const registers = [this.registry];
    const labelNames = ['server'] as const;
    const source = (): readonly AnswerCacheReading[] => this.answerCacheSource();
    type Field = 'entries' | 'bytes' | 'hits' | 'evictions';
    const gauge = (name: string, help: string, field: Field): void => {
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const r of source()) this.set({ server: r.server }, r[field]);
        },
      });
    };
    const counter = (name: string, help: string, field: Field): void => {
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const r of source()) this.inc({ server: r.server }, r[field]);
        },
      });
    };
    gauge('clusterdns_answer_cache_entries', 'Encoded answers held by the answer cache, per listener.', 'entries');
    gauge('clusterdns_answer_cache_bytes', 'Bytes charged to the answer cache budget (--answer-cache-bytes), per listener.', 'bytes');
    counter('clusterdns_answer_cache_hits_total', 'Queries answered from the answer cache, per listener.', 'hits');
    counter('clusterdns_answer_cache_evictions_total', 'Answers evicted to stay within the answer cache budget, per listener.', 'evictions');
  }

  /** The exposition of this App's registry. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** The version in package.json, for coredns_build_info. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Every metric, registered on `registry`. */
function createMetrics(registry: Registry): Metrics {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
    new Counter<L>({ name, help, labelNames, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> => new Gauge<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: readonly L[] = []): Histogram<L> =>
    new Histogram<L>({ name, help, buckets, labelNames, registers });

  const all: Metrics = {
    requests: counter('coredns_dns_requests_total', 'Counter of DNS requests made per zone, protocol and family.', [
      'server',
      'zone',
      'view',
      'proto',
      'family',
      'type',
    ]),
    requestDuration: histogram('coredns_dns_request_duration_seconds', 'Histogram of the time (in seconds) each request took per zone.', TIME_BUCKETS, [
      'server',
      'zone',
      'view',
    ]),
    requestSize: histogram('coredns_dns_request_size_bytes', 'Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.', SIZE_BUCKETS, [
      'server',
      'zone',
      'view',
      'proto',
    ]),
    doRequests: counter('coredns_dns_do_requests_total', 'Counter of DNS requests with DO bit set per zone.', ['server', 'zone', 'view']),
    responseSize: histogram('coredns_dns_response_size_bytes', 'Size of the returned response in bytes.', SIZE_BUCKETS, ['server', 'zone', 'view', 'proto']),
    responses: counter('coredns_dns_responses_total', 'Counter of response status codes.', ['server', 'zone', 'view', 'rcode', 'plugin']),
    panics: counter('coredns_panics_total', 'A metrics that counts the number of panics.'),
    pluginEnabled: gauge('coredns_plugin_enabled', 'A metric that indicates whether a plugin is enabled on per server and zone basis.', [
      'server',
      'zone',
      'view',
      'name',
    ]),
    buildInfo: gauge('coredns_build_info', "A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.", [
      'version',
      'revision',
      'goversion',
    ]),

    healthDuration: histogram('coredns_health_request_duration_seconds', 'Histogram of the time (in seconds) each request took.', SLIM_TIME_BUCKETS),
    healthFailures: counter('coredns_health_request_failures_total', 'The number of times the health check failed.'),

    reloadFailed: counter('coredns_reload_failed_total', 'Counter of the number of failed reload attempts.'),
    reloadVersionInfo: gauge('coredns_reload_version_info', "A metric with a constant '1' value labeled by hash, and value which type of hash generated.", [
      'hash',
      'value',
    ]),

    cacheEntries: gauge('coredns_cache_entries', 'The number of elements in the cache.', ['server', 'type', 'zones', 'view']),
    cacheRequests: counter('coredns_cache_requests_total', 'The count of cache requests.', ['server', 'zones', 'view']),
    cacheHits: counter('coredns_cache_hits_total', 'The count of cache hits.', ['server', 'type', 'zones', 'view']),
    cacheMisses: counter('coredns_cache_misses_total', 'The count of cache misses. Deprecated, derive misses from cache hits/requests counters.', [
      'server',
      'zones',
      'view',
    ]),
    cachePrefetches: counter('coredns_cache_prefetch_total', 'The number of times the cache has prefetched a cached item.', ['server', 'zones', 'view']),
    cacheDrops: counter('coredns_cache_drops_total', 'The number responses that are not cached, because the reply is malformed.', ['server', 'zones', 'view']),
    cacheServedStale: counter('coredns_cache_served_stale_total', 'The number of requests served from stale cache entries.', ['server', 'zones', 'view']),
    cacheEvictions: counter('coredns_cache_evictions_total', 'The count of cache evictions.', ['server', 'type', 'zones', 'view']),

    proxyRequestDuration: histogram('coredns_proxy_request_duration_seconds', 'Histogram of the time each request took.', TIME_BUCKETS, [
      'proxy_name',
      'to',
      'rcode',
    ]),
    proxyHealthcheckFailures: counter('coredns_proxy_healthcheck_failures_total', 'Counter of the number of failed healthchecks.', ['proxy_name', 'to']),
    proxyConnCacheHits: counter('coredns_proxy_conn_cache_hits_total', 'Counter of connection cache hits per upstream and protocol.', [
      'proxy_name',
      'to',
      'proto',
    ]),
    proxyConnCacheMisses: counter('coredns_proxy_conn_cache_misses_total', 'Counter of connection cache misses per upstream and protocol.', [
      'proxy_name',
      'to',
      'proto',
    ]),
    forwardHealthcheckBroken: counter('coredns_forward_healthcheck_broken_total', 'Counter of the number of complete failures of the healthchecks.'),
    forwardMaxConcurrentRejects: counter(
      'coredns_forward_max_concurrent_rejects_total',
      'Counter of the number of queries rejected because the concurrent queries were at maximum.',
    ),
    forwardRequests: counter('coredns_forward_requests_total', 'Counter of requests made per upstream.', ['to']),
    forwardResponses: counter('coredns_forward_responses_total', 'Counter of responses received per upstream.', ['rcode', 'to']),
    forwardRequestDuration: histogram('coredns_forward_request_duration_seconds', 'Histogram of the time each request took.', TIME_BUCKETS, ['to', 'rcode']),
    forwardHealthcheckFailures: counter('coredns_forward_healthcheck_failures_total', 'Counter of the number of failed healthchecks.', ['to']),

    objectsLoaded: gauge('clusterdns_objects_loaded', 'Manifest objects read by the last successful load, per plugin and zones.', ['plugin', 'zones']),
    recordsLoaded: gauge('clusterdns_records_loaded', 'Records served from the last successful load, per plugin and zones.', ['plugin', 'zones']),
    lastLoadTimestamp: gauge('clusterdns_last_load_timestamp_seconds', 'Unix time of the last successful manifest or zone load, per plugin and zones.', [
      'plugin',
      'zones',
    ]),
    loadErrors: counter('clusterdns_load_errors_total', 'Manifest and zone loads that failed (the last good data keeps serving).', ['plugin', 'zones']),
    rejectedObjects: gauge(
      'clusterdns_manifest_rejected_objects',
      'Manifest objects the last load left out because the API server would reject them (their previous version, if any, keeps serving).',
      ['plugin', 'zones'],
    ),
  };
  // clusterdns is not built with Go: goversion carries the Node.js version that runs it.
  all.buildInfo.set({ version: packageVersion(), revision: '', goversion: process.version }, 1);
  all.reloadFailed.inc(0);
  all.panics.inc(0);
  return all;
}

/**
 * CoreDNS's `server` label: the scheme + host:port of the listener, the host empty when the block
 * has no `bind` (`dns://:53`), IPv6 in brackets (`dns://[::1]:53`), `tls://:853` for DNS over TLS.
 */
export function serverLabel(bindAddress: string | undefined, port: number, transport: Transport = 'dns'): string {
  const host = bindAddress ?? '';
  return `${transport}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The registry of a command that runs no App (`clusterdns sync --metrics`); an App's metrics are
 * its own AppMetrics.
 */
let commandRegistry: Registry | undefined;
export function registry(): Registry {
  commandRegistry ??= new Registry();
  return commandRegistry;
}

// ---------------------------------------------------------------------------------------------
// Loads and reloads (kubernetes and file plugins, the reload code).

export interface LoadReport {
  /** 'kubernetes' or 'file'. */
  plugin: string;
  /** The plugin's zones (lowercased, fully qualified). */
  zones: readonly string[];
  /** Manifest objects read (kubernetes); leave out for zone files. */
  objects?: number;
  /** Records the loaded data serves. */
  records?: number;
  /** Manifest objects left out as the API server would reject them (kubernetes, k8s_gateway). */
  rejected?: number;
  /** When the load finished; default now. */
  at?: Date;
}

const zonesLabel = (zones: readonly string[]): string => zones.join(',');

// ---------------------------------------------------------------------------------------------
// The server's answer cache (src/server/answer-cache.ts; clusterdns's own, in front of every
// chain), read when /metrics is scraped: the cache counts with plain increments on the query
// path, and a labelled prom-client call per query would cost more than a cache hit does.

/** One listener's answer cache. `hits` and `evictions` only grow (a reload carries them over). */
export interface AnswerCacheReading {
  /** As the `server` label of the dns metrics: `dns://127.0.0.1:53`, `dns://:53` when unbound. */
  server: string;
  entries: number;
  bytes: number;
  hits: number;
  evictions: number;
}
