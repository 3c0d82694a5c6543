// The cache plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.

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
