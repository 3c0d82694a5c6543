// cache: a positive and a negative cache in front of the rest of the chain, after CoreDNS's
// plugin/cache (handler.go ServeDNS, cache.go ResponseWriter.WriteMsg/set, item.go,
// plugin/pkg/cache shards, plugin/pkg/response Typify, plugin/pkg/dnsutil MinimalTTL,
// plugin/cache/freq for prefetch).
import { serverLabel, type AppMetrics } from '../../metrics/index.js';
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { Rcode, withTtl, type Rr } from '../../dns/records.js';
import { matchZone } from '../../pkg/names.js';
import { typeCode } from '../../dns/query.js';
import type { CacheConfig } from './config.js';

type MaybePromise<T> = T | Promise<T>;

/** CoreDNS's response.Type classes that matter to the cache. */
type ResponseType = 'NOERROR' | 'NXDOMAIN' | 'NODATA' | 'SERVERERROR' | 'DELEGATION' | 'META' | 'OTHERERROR';

const SHARDS = 256;
/** dnsutil.MinimalDefaultTTL and MaximumDefaulTTL, seconds. */
const MINIMAL_DEFAULT_TTL = 5;
const MAXIMUM_DEFAULT_TTL = 3600;

interface Item {
  rcode: number;
  answer: Rr[];
  authority: Rr[];
  additional: Rr[];
  /** Seconds the item lives (the capped TTL at store time). */
  origTtl: number;
  /** Date.now() when stored. */
  stored: number;
  /** Prefetch popularity (plugin/cache/freq): hits with no gap longer than the window. */
  hits: number;
  last: number;
}

/** Remaining TTL in whole seconds, negative once expired (Go truncates the elapsed seconds). */
function itemTtl(i: Item, now: number): number {
  return i.origTtl - Math.trunc((now - i.stored) / 1000);
}

/**
 * The shard of a cache key: the low byte of CoreDNS's FNV-1 64-bit hash of DO, CD, qtype and
 * the lowercased name (the low 8 bits of a 64-bit product depend only on the low 8 bits of
 * its factors, so one byte of state is enough).
 */
export function shardOf(qname: string, qtype: number, doBit: boolean, cd = false): number {
  let h = 0x25; // low byte of the FNV-64 offset basis 0xcbf29ce484222325
  const step = (b: number): void => {
    h = Math.imul(h, 0xb3) & 0xff; // low byte of the FNV-64 prime 0x100000001b3
    h ^= b;
  };
  step(doBit ? 0x31 : 0x30);
  step(cd ? 0x31 : 0x30);
  step((qtype >> 8) & 0xff);
  step(qtype & 0xff);
  for (const b of Buffer.from(qname, 'utf8')) step(b);
  return h;
}

/**
 * CoreDNS's plugin/pkg/cache: 256 shards of size/256 items each (at least 4); a full shard
 * evicts one item at random to take a new key.
 */
class ShardedStore {
  private readonly shards: Map<string, Item>[] = [];
  readonly shardSize: number;

  constructor(capacity: number) {
    this.shardSize = Math.max(4, Math.floor(capacity / SHARDS));
    for (let i = 0; i < SHARDS; i++) this.shards.push(new Map());
  }

  get(shard: number, key: string): Item | undefined {
    return this.shards[shard]!.get(key);
  }

  /** Stores the item; true when another item was evicted to make room. */
  add(shard: number, key: string, item: Item): boolean {
    const s = this.shards[shard]!;
    let evicted = false;
    if (s.size >= this.shardSize && !s.has(key)) {
      let victim = Math.floor(Math.random() * s.size);
      for (const k of s.keys()) {
        if (victim-- === 0) {
          s.delete(k);
          break;
        }
      }
      evicted = true;
    }
    s.set(key, item);
    return evicted;
  }

  remove(shard: number, key: string): void {
    this.shards[shard]!.delete(key);
  }

  get size(): number {
    let n = 0;
    for (const s of this.shards) n += s.size;
    return n;
  }
}

/** CoreDNS's response.Typify for a chain response to a question of type `qtype`. */
function typify(res: DnsResponse, qtype: string): ResponseType {
  if (qtype === 'AXFR' || qtype === 'IXFR') return 'META';
  if (res.answer.length > 0 && res.rcode === Rcode.NOERROR) return 'NOERROR';
  let soa = false;
  let ns = 0;
  for (const r of res.authority) {
    if (r.type === 'SOA') soa = true;
    else if (r.type === 'NS') ns++;
  }
  if (soa && res.rcode === Rcode.NOERROR) return 'NODATA';
  if (soa && res.rcode === Rcode.NXDOMAIN) return 'NXDOMAIN';
  if (res.rcode === Rcode.SERVFAIL || res.rcode === Rcode.NOTIMP) return 'SERVERERROR';
  if (ns > 0 && res.rcode === Rcode.NOERROR) return 'DELEGATION';
  if (res.rcode === Rcode.NOERROR) return 'NOERROR';
  return 'OTHERERROR';
}

function rrTtl(r: Rr): number {
  return (r as { ttl?: number }).ttl ?? 0;
}

/** CoreDNS's dnsutil.MinimalTTL, in seconds. */
function minimalTtl(res: DnsResponse, mt: ResponseType): number {
  if (mt !== 'NOERROR' && mt !== 'NXDOMAIN' && mt !== 'NODATA') return MINIMAL_DEFAULT_TTL;
  const extra = res.additional.filter((r) => r.type !== 'OPT');
  if (res.answer.length + res.authority.length === 0 && extra.length === 0) return MINIMAL_DEFAULT_TTL;
  let min = MAXIMUM_DEFAULT_TTL;
  for (const r of res.answer) min = Math.min(min, rrTtl(r));
  for (const r of res.authority) min = Math.min(min, rrTtl(r));
  for (const r of extra) min = Math.min(min, rrTtl(r));
  return min;
}

function clamp(ttl: number, min: number, max: number): number {
  let t = ttl;
  if (t < min) t = min;
  if (t > max) t = max;
  return t;
}

function allWithTtl(rrs: readonly Rr[], ttl: number): Rr[] {
  return rrs.filter((r) => r.type !== 'OPT').map((r) => withTtl(r, ttl));
}

export class CachePlugin implements Plugin {
  readonly name = 'cache';
  /** Positive answers (and delegations). */
  readonly pcache: ShardedStore;
  /** NXDOMAIN, NODATA and server errors. */
  readonly ncache: ShardedStore;
  private closed = false;
  private readonly background = new Set<Promise<unknown>>();

  constructor(
    readonly cfg: CacheConfig,
    private readonly metrics: AppMetrics,
    /** Clock in ms; tests move it. */
    private readonly now: () => number = Date.now,
  ) {
    this.pcache = new ShardedStore(cfg.successCap);
    this.ncache = new ShardedStore(cfg.denialCap);
    this.zonesLabel = cfg.zones.join(',');
  }

  /** CoreDNS's cache metric labels: the server the query came in on and the cache's zones. */
  private labels(req: DnsRequest): { server: string; zones: string; view: string } {
    const host = req.local.address === '::' || req.local.address === '0.0.0.0' ? '' : req.local.address;
    return { server: serverLabel(host, req.local.port, req.local.transport), zones: this.zonesLabel, view: '' };
  }

  private readonly zonesLabel: string;

  serve(req: DnsRequest, next: Next): MaybePromise<DnsResponse> {
    if (!matchZone(req.qname, this.cfg.zones)) return next(req);
    const m = this.metrics.m;
    const labels = this.labels(req);
    m.cacheRequests.inc(labels);
    const doBit = req.edns?.do ?? false;
    const qt = typeCode(req.qtype);
    const key = `${doBit ? 1 : 0}0${qt}|${req.qclass}|${req.qname}`;
    const shard = shardOf(req.qname, qt, doBit);
    let now = this.now();
    const item = this.getIgnoreTtl(now, shard, key);
    if (!item) {
      m.cacheMisses.inc(labels);
      return this.fetch(req, next, shard, key, false);
    }
    m.cacheHits.inc({ ...labels, type: this.ncache.get(shard, key) === item ? 'denial' : 'success' });
    const ttl = itemTtl(item, now);
    if (ttl < 0) m.cacheServedStale.inc(labels);
    if (ttl < 0) {
      if (this.cfg.verifyStale) return this.verifyThenStale(req, next, shard, key, item, now);
      // Served with TTL 0, refreshed behind the reply.
      now += ttl * 1000;
      this.prefetchLater(req, next, shard, key, item, now);
    } else if (this.shouldPrefetch(item, now)) {
      this.prefetchLater(req, next, shard, key, item, now);
    }
    return this.toResponse(item, now);
  }

  /** An item that is fresh, or stale but within serve_stale's window; the denial cache first. */
  private getIgnoreTtl(now: number, shard: number, key: string): Item | undefined {
    const staleSeconds = Math.trunc(this.cfg.staleUpToMs / 1000);
    for (const store of [this.ncache, this.pcache]) {
      const i = store.get(shard, key);
      if (!i) continue;
      const ttl = itemTtl(i, now);
      if (ttl > 0 || (this.cfg.staleUpToMs > 0 && -ttl < staleSeconds)) return i;
    }
    return undefined;
  }

  private async verifyThenStale(req: DnsRequest, next: Next, shard: number, key: string, item: Item, now: number): Promise<DnsResponse> {
    try {
      const res = await next(req);
      // RFC 8767 section 4: only NOERROR and NXDOMAIN replace a stale entry.
      if (res.rcode === Rcode.NOERROR || res.rcode === Rcode.NXDOMAIN) return this.written(req, res, shard, key, false);
    } catch {
      // the source is unavailable: serve the stale entry
    }
    return this.toResponse(item, now + itemTtl(item, now) * 1000);
  }

  /** Asks the rest of the chain and stores the reply (CoreDNS's ResponseWriter). */
  private fetch(req: DnsRequest, next: Next, shard: number, key: string, prefetch: boolean): MaybePromise<DnsResponse> {
    const res = next(req);
    if (res instanceof Promise) return res.then((r) => this.written(req, r, shard, key, prefetch));
    return this.written(req, res, shard, key, prefetch);
  }

  private written(req: DnsRequest, res: DnsResponse, shard: number, key: string, prefetch: boolean): DnsResponse {
    const cfg = this.cfg;
    const mt = typify(res, req.qtype);
    const msgTtl = minimalTtl(res, mt);
    let duration: number;
    if (mt === 'NXDOMAIN' || mt === 'NODATA') duration = clamp(msgTtl, cfg.denialMinTtl, cfg.denialMaxTtl);
    else if (mt === 'SERVERERROR') duration = cfg.servfailTtl;
    else duration = clamp(msgTtl, cfg.successMinTtl, cfg.successMaxTtl);
    const storable = mt !== 'OTHERERROR' && mt !== 'META';
    if (storable && duration > 0 && !this.closed) this.set(req, res, shard, key, mt, duration, prefetch);
    if (cfg.keepTtl) return { ...res, cacheable: false };
    // The capped TTL on every record, so the client never sees 1799 turn into 8 on the next query.
    return {
      ...res,
      answer: allWithTtl(res.answer, duration),
      authority: allWithTtl(res.authority, duration),
      additional: allWithTtl(res.additional, duration),
      // The next reply from the cache counts the TTL down: never reused by the server.
      cacheable: false,
    };
  }

  private set(req: DnsRequest, res: DnsResponse, shard: number, key: string, mt: ResponseType, duration: number, prefetch: boolean): void {
    const item: Item = {
      rcode: res.rcode,
      answer: [...res.answer],
      authority: [...res.authority],
      additional: res.additional.filter((r) => r.type !== 'OPT'),
      origTtl: duration,
      stored: this.now(),
      hits: 0,
      last: 0,
    };
    const m = this.metrics.m;
    const labels = this.labels(req);
    if (mt === 'NOERROR' || mt === 'DELEGATION') {
      if (matchZone(req.qname, this.cfg.disableSuccess)) return;
      if (this.pcache.add(shard, key, item)) m.cacheEvictions.inc({ ...labels, type: 'success' });
      if (prefetch) this.ncache.remove(shard, key);
    } else {
      if (matchZone(req.qname, this.cfg.disableDenial)) return;
      if (this.ncache.add(shard, key, item)) m.cacheEvictions.inc({ ...labels, type: 'denial' });
    }
    m.cacheEntries.set({ ...labels, type: 'success' }, this.pcache.size);
    m.cacheEntries.set({ ...labels, type: 'denial' }, this.ncache.size);
  }

  /** plugin/cache/freq: count hits with no gap longer than the window; prefetch near expiry. */
  private shouldPrefetch(item: Item, now: number): boolean {
    if (this.cfg.prefetch <= 0) return false;
    if (item.last < now - this.cfg.prefetchWindowMs) item.hits = 1;
    else item.hits++;
    item.last = now;
    const threshold = Math.ceil((this.cfg.prefetchPercentage / 100) * item.origTtl);
    return item.hits >= this.cfg.prefetch && itemTtl(item, now) <= threshold;
  }

  private prefetchLater(req: DnsRequest, next: Next, shard: number, key: string, item: Item, now: number): void {
    if (this.closed) return;
    this.metrics.m.cachePrefetches.inc(this.labels(req));
    const run = (async () => {
      await Promise.resolve();
      await this.fetch(req, next, shard, key, true);
      // The refreshed item keeps the popularity the old one had gathered.
      const fresh = this.ncache.get(shard, key) ?? this.pcache.get(shard, key);
      if (fresh && fresh !== item) {
        fresh.hits = item.hits;
        fresh.last = now;
      }
    })().catch(() => {
      // a failed refresh leaves the old item in place
    });
    this.background.add(run);
    void run.finally(() => this.background.delete(run));
  }

  /** An item as a reply: AA set (CoreDNS sets it on every cached reply), TTLs counted down. */
  private toResponse(item: Item, now: number): DnsResponse {
    const ttl = Math.max(0, itemTtl(item, now));
    const keep = this.cfg.keepTtl;
    return {
      rcode: item.rcode,
      aa: true,
      answer: keep ? item.answer : allWithTtl(item.answer, ttl),
      authority: keep ? item.authority : allWithTtl(item.authority, ttl),
      additional: keep ? item.additional : allWithTtl(item.additional, ttl),
      cacheable: false,
    };
  }

  /** Waits for refreshes running behind replies (tests). */
  async settled(): Promise<void> {
    for (let i = 0; i < 10 && this.background.size > 0; i++) await Promise.allSettled([...this.background]);
  }

  close(): void {
    this.closed = true;
  }
}
