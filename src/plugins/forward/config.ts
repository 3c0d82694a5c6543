// The forward plugin's settings as setup.ts reads them from the Corefile and plugin.ts and
// upstream.ts apply them.

export type Policy = 'random' | 'round_robin' | 'sequential';

/** How an upstream is reached: plain DNS (UDP and TCP) or DNS over TLS (RFC 7858). */
export type Transport = 'dns' | 'tls';

export interface UpstreamAddress {
  /** IP address without brackets or zone. */
  host: string;
  port: number;
  /** `IP:PORT` (`[IPv6]:PORT`) as CoreDNS's metrics and logs write the upstream, without the scheme. */
  label: string;
  transport: Transport;
  /** `tls://IP%NAME`: this upstream's own TLS server name (CoreDNS's per-proxy server name). */
  servername?: string;
}

/** The `tls` and `tls_servername` options: how tls:// upstreams are reached and verified. */
export interface ForwardTls {
  /** PEM roots that verify the upstream's certificate; the system's (node's) roots when absent. */
  ca?: Buffer;
  /** Client certificate and key (PEM), sent when the upstream asks for one. */
  cert?: Buffer;
  key?: Buffer;
  /** SNI and the name the certificate must hold; without it the upstream's IP address must. */
  servername?: string;
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
  /** Lifetime of a cached connection however busy, ms; 0 unlimited. */
  maxAgeMs: number;
  /** Idle connections kept per upstream; 0 unlimited. */
  maxIdleConns: number;
  tls: ForwardTls;
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
