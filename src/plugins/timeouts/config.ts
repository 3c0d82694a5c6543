// What `timeouts` configures: the read, write and idle deadlines of a block's stream listeners
// (TCP of dns://, tls://, https://, grpc://), as CoreDNS's plugin/timeouts sets them.

/** CoreDNS's range for every timeout: 1 second to 24 hours. */
export const MIN_TIMEOUT_MS = 1000;
export const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

/** CoreDNS's defaults (core/dnsserver/server.go), which the TCP and DoT listeners share. */
export const DEFAULT_TIMEOUTS = { readMs: 3000, writeMs: 5000, idleMs: 10_000 } as const;

export const timeoutNames = ['read', 'write', 'idle'] as const;
export type TimeoutName = (typeof timeoutNames)[number];

export interface TimeoutsConfig {
  readMs?: number;
  writeMs?: number;
  idleMs?: number;
}
