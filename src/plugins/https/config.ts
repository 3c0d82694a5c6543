// What `https` configures: the DNS over HTTPS listeners of a server block's https:// keys.

export interface HttpsConfig {
  /** TCP connections open at once on one https:// listener; 0 for no cap; absent, the listener's default (CoreDNS's 200). */
  maxConnections?: number;
  /** HTTP/2 streams open at once per connection (SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxStreams?: number;
  /** Request header bytes (HTTP/1.1 431 above; HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE). */
  maxHeaderBytes?: number;
  /** HTTP/2 streams a connection may reset per second before it is closed (rapid reset). */
  maxResetsPerSecond?: number;
}
