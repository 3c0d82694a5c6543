// What an `etcd` block configures, beside the plugin so the plugin never imports its setup.
import type { QueryBudgetConfig } from './budget.js';

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
