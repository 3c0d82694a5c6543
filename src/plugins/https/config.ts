// What `https` configures: the DNS over HTTPS listeners of a server block's https:// keys.

export interface HttpsConfig {
  /** TCP connections open at once on one https:// listener; 0 for no cap; absent, the listener's default (CoreDNS's 200). */
  maxConnections?: number;
}
