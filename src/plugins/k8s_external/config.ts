// The k8s_external plugin's settings as setup.ts reads them from the Corefile and plugin.ts
// applies them.

export interface K8sExternalConfig {
  /** Zones answered, lowercased and fully qualified (the block's when none are given). */
  zones: string[];
  /** Label(s) under each zone where the name server records live (default `dns`). */
  apex: string;
  ttl: number;
  headless: boolean;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
  /**
   * Distinct load balancer host names one answer chases through the server at most (an A or
   * AAAA lookup each, or both for SRV); default DEFAULT_MAX_LOOKUPS.
   */
  maxLookups?: number;
}

/** Host names chased per answer when the Corefile sets no `max_lookups`; see README "Limits". */
export const DEFAULT_MAX_LOOKUPS = 16;
