// What `grpc_server` configures: the limits of a block's grpc:// listeners.

/** CoreDNS's DefaultGRPCMaxStreams and DefaultGRPCMaxConnections; 0 is unbounded. */
export const grpcServerDefaults = { maxStreams: 256, maxConnections: 200 } as const;

/** HTTP/2's largest SETTINGS_MAX_CONCURRENT_STREAMS, and a bound for connections as well. */
export const GRPC_SERVER_MAX = 2 ** 31 - 1;

export interface GrpcServerConfig {
  /** Concurrent calls (HTTP/2 streams) per connection. */
  maxStreams: number;
  /** Concurrent connections per listener, TLS handshakes included. */
  maxConnections: number;
}
