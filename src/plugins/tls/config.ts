// What `tls` configures: the server side of a block's tls:// listeners.

/** CoreDNS's client_auth values (Go's tls.ClientAuthType). */
export const clientAuthModes = ['nocert', 'request', 'require', 'verify_if_given', 'require_and_verify'] as const;
export type ClientAuth = (typeof clientAuthModes)[number];

export interface TlsConfig {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  clientAuth: ClientAuth;
}
