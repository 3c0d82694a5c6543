// The k8s_gateway plugin's settings as setup.ts reads them from the Corefile and plugin.ts,
// hosts.ts and the loader thread (view.ts) apply them.

export const RESOURCES = ['HTTPRoute', 'TLSRoute', 'GRPCRoute', 'Ingress', 'Service', 'DNSEndpoint'] as const;

export type Resource = (typeof RESOURCES)[number];

export interface K8sGatewayConfig {
  zones: string[];
  /** Looked up in this order; the first resource with a match answers. */
  resources: Resource[];
  ingressClasses: string[];
  gatewayClasses: string[];
  /**
   * Label selectors (labels.Selector.String() form) of the Services exposed; a Service matching
   * any of them is (one informer per selector upstream, results merged). Absent: every Service.
   */
  serviceLabelSelectors?: string[];
  /** TTL of A, AAAA and TXT answers (default 60); SOA and NS always use 60. */
  ttl: number;
  /** Name (below each zone) of this server's own records; default `dns1.kube-system`. */
  apex: string;
  secondary: string;
  fallthrough?: string[];
  manifests?: string[];
  watchMs: number;
  /**
   * Addresses (or TXT strings) one answer carries at most; a name that claims more answers the
   * first ones (a UDP reply is then truncated as any large one). Default DEFAULT_MAX_RECORDS.
   */
  maxRecords?: number;
  /**
   * Distinct load balancer host names one answer resolves at most (each an A and an AAAA lookup
   * through the server); the rest are left out. Default DEFAULT_MAX_HOSTNAME_LOOKUPS.
   */
  maxHostnameLookups?: number;
}

/** Distinct load balancer host names resolved per answer when the Corefile sets no `maxHostnameLookups`. */
export const DEFAULT_MAX_HOSTNAME_LOOKUPS = 16;
