// How a server block is served: the scheme of its keys (CoreDNS's plugin/pkg/transport), and what
// the block's plugins set for its stream listeners (`tls`, `https`, `grpc_server`, `timeouts`).
import type { TlsOptions } from 'node:tls';

export type { Transport } from '../dns/transport.js';

/** The TLS side of a listener, as the `tls` plugin sets it; each transport adds its own ALPN. */
export interface ServerTls {
  options: TlsOptions;
  /** A client certificate is optional but, when given, must verify. */
  verifyIfGiven: boolean;
  /** Names the content (certificate, key, CA, mode): a reload that reads the same files keeps the listener open. */
  id: string;
}

/**
 * What a block's plugins set for its listeners besides TLS. Blocks that share a listener must
 * agree on these (the Corefile is refused otherwise), since one socket has one setting.
 */
export interface ListenerSettings {
  /** Set by `https`: only what its lines give; the DoH listener has a default for each. */
  https?: { maxConnections?: number; maxStreams?: number; maxHeaderBytes?: number; maxResetsPerSecond?: number };
  /** Set by `grpc_server`. */
  grpc?: { maxStreams: number; maxConnections: number };
  /** Set by `timeouts`: read, write and idle deadlines of stream connections, ms. */
  timeouts?: { readMs?: number; writeMs?: number; idleMs?: number };
}
