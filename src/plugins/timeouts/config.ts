// What `timeouts` configures: the read, write and idle deadlines of a block's stream listeners
// (TCP of dns://, tls://, https://, grpc://), as CoreDNS's plugin/timeouts sets them. Without it
// the listeners keep the --tcp-* flags' values, whose defaults are CoreDNS's (3s, 5s, 10s).

/** CoreDNS's range for every timeout: 1 second to 24 hours. */
export const MIN_TIMEOUT_MS = 1000;
export const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

export type TimeoutName = 'read' | 'write' | 'idle';

export interface TimeoutsConfig {
  readMs?: number;
  writeMs?: number;
  idleMs?: number;
}
