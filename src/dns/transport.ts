// The transports DNS messages travel over, by the scheme of a Corefile server key (CoreDNS's
// plugin/pkg/transport).

/** dns: UDP and TCP; tls: DNS over TLS (RFC 7858); https: DNS over HTTPS (RFC 8484); grpc: CoreDNS's DnsService. */
export type Transport = 'dns' | 'tls' | 'https' | 'grpc';

/** The port of a key that names none, per scheme (CoreDNS's transport.Port). `dns` takes the --port default. */
export const TRANSPORT_DEFAULT_PORTS: Readonly<Record<Exclude<Transport, 'dns'>, number>> = { tls: 853, https: 443, grpc: 443 };
