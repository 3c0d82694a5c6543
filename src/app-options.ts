// What an App is built from (AppOptions), what it listens on (ListenSpec, ListenerInfo) and the
// Corefile it serves without --conf: the App's inputs, apart from the App that acts on them.
import type { Logger } from 'pino';
import type { Chain } from './chain/chain.js';
import type { CorefileLimits } from './chain/corefile.js';
import type { LoadPermitGate } from './chain/load-permit.js';
import type { ClusterOptions } from './cluster/model/model.js';
import type { AppMetrics } from './metrics/index.js';
import type { HttpLimits } from './pkg/http.js';
import type { TcpOptions } from './server/tcp.js';
import type { ListenerSettings, ServerTls, Transport } from './chain/transport.js';

/**
 * Used when no --conf is given: the Corefile kubeadm installs (kubernetes/kubernetes
 * cmd/kubeadm/app/phases/addons/dns/manifests.go), with the key's port left to --port and the
 * upstream resolv.conf replaceable (serve --upstream-resolv-conf) so tests never forward off the
 * machine.
 */
export function defaultCorefile(upstreamResolvConf = process.env.CLUSTERDNS_UPSTREAM_RESOLV_CONF ?? '/etc/resolv.conf'): string {
  return `. {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . ${upstreamResolvConf} {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`;
}

export interface AppOptions {
  /** Corefile path; without it (and without corefileText) defaultCorefile(). */
  conf?: string;
  corefileText?: string;
  manifests?: string[];
  /** Port of every server block whose keys name none (CoreDNS's -dns.port). Default 53. */
  port?: number;
  logger?: Logger;
  cluster?: Partial<ClusterOptions>;
  /** Log every query received with the rcode sent. */
  logQueries?: boolean;
  /** The resolv.conf the built-in default Corefile forwards to (default /etc/resolv.conf). */
  upstreamResolvConf?: string;
  /** Internal lookups (ExternalName targets through the server) one query may nest; default 8. */
  maxLookupDepth?: number;
  /** Bytes of encoded answers each listener's answer cache keeps; default 32 MiB. */
  answerCacheBytes?: number;
  /** Records one answer may carry before it is truncated (TC); default DEFAULT_MAX_ANSWER_RECORDS. */
  maxAnswerRecords?: number;
  /** Keep the cluster model for tools that read pods (default true; `serve` turns it off). */
  retainModel?: boolean;
  /**
   * Another App whose manifest feeds this one's plugins read: plugins of both that read the same
   * paths with the same cluster options share one loader thread and one load per change (each
   * App still gets its own views). `serve --ui`'s page beside the server. Other shared resources
   * stay each App's own.
   */
  manifestFeedsOf?: { share<T extends { close(): void }>(key: string, create: () => T): { readonly value: T; release(): void } };
  /** TCP transport limits (serve --tcp-* flags); unset ones keep their defaults. */
  tcp?: Partial<TcpOptions>;
  /** A command that builds the server only to read it once (records, check, resolve); see BlockContext.oneShot. */
  oneShot?: boolean;
  /** Corefile limits other than defaultCorefileLimits (the --max-corefile-* flags). */
  corefileLimits?: Partial<CorefileLimits>;
  /** Limits of the HTTP listeners (health, ready, prometheus) other than the defaults (the --http-* flags). */
  httpLimits?: Partial<HttpLimits>;
  /** Permits for large data loads (a worker's asks its primary); default: every load at once. */
  loadPermitGate?: LoadPermitGate;
  /** The App's metrics, when made before it (a worker joins the primary's aggregation before its build); default a new AppMetrics. */
  metrics?: AppMetrics;
  /** What /metrics serves instead of the App's own registry (a worker's: every worker's, aggregated). */
  scrapeMetrics?: () => Promise<{ text: string; contentType: string }>;
}

/** One listen address and port, and the zones (with their chains) it serves. */
export interface ListenSpec {
  address: string;
  port: number;
  /** dns: UDP and TCP; tls, https, grpc: one TCP socket for that stream transport. */
  transport: Transport;
  /** The `tls` plugin's certificate; absent, a tls://, https:// or grpc:// listener serves without encryption. */
  tls?: ServerTls;
  settings: ListenerSettings;
  entries: { zone: string; chain: Chain }[];
}

export interface ListenerInfo {
  address: string;
  port: number;
  transport: Transport;
  zones: string[];
}
