// The forward plugin's settings as setup.ts reads them from the Corefile and plugin.ts and
// upstream.ts apply them.

export type Policy = 'random' | 'round_robin' | 'sequential';

export interface UpstreamAddress {
  /** IP address without brackets or zone. */
  host: string;
  port: number;
  /** As written for logs: `127.0.0.1:53`, `[::1]:53`. */
  label: string;
}

export interface ForwardConfig {
  /** Lowercased, fully qualified zone whose names are forwarded ('.' for all). */
  from: string;
  upstreams: UpstreamAddress[];
  /** Names (and below) never forwarded, handed to the next plugin. */
  except: string[];
  forceTcp: boolean;
  preferUdp: boolean;
  /** Idle lifetime of a cached upstream connection, ms (CoreDNS default 10s). */
  expireMs: number;
  /** Failed health checks after which an upstream is down (more than this many); 0 never. */
  maxFails: number;
  healthCheckMs: number;
  healthCheckRd: boolean;
  healthCheckDomain: string;
  policy: Policy;
  /** 0: unlimited. */
  maxConcurrent: number;
  /** 0: no cap on upstream attempts per query. */
  maxConnectAttempts: number;
  failfastAllUnhealthy: boolean;
  /** Upstream rcodes that make forward try the next upstream. */
  failover: number[];
  /** `next RCODE...`: upstream rcodes that hand the query to the next plugin instead. */
  next: number[];
  /** `next_on_nodata`: an empty NOERROR from upstream goes to the next plugin too. */
  nextOnNodata: boolean;
  /** Per-exchange read timeout, ms (CoreDNS: static 2s). */
  readTimeoutMs: number;
  /** Overall time spent on one query across upstreams, ms (CoreDNS defaultTimeout 5s). */
  queryTimeoutMs: number;
}
