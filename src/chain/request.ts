// What CoreDNS's request.Request answers about a query, for every plugin and observer, so none
// strips `::ffff:` or works out the size limit on its own.
import { addressFamily, plainAddress } from '../pkg/ip.js';
import type { DnsRequest } from './plugin.js';

/** A request or a query event: the parts these helpers read. */
export type RequestView = Pick<DnsRequest, 'client' | 'protocol'> & { readonly edns?: { readonly udpSize: number; readonly do: boolean } };

/** The client's IP, an IPv4 client on a dual-stack socket as plain IPv4 (request.IP). */
export function clientIp(r: Pick<RequestView, 'client'>): string {
  return plainAddress(r.client.address);
}

/** 1 for an IPv4 client, 2 for IPv6 (request.Family). */
export function clientFamily(r: Pick<RequestView, 'client'>): 1 | 2 {
  return addressFamily(r.client.address);
}

/** The DNSSEC OK bit of the query's OPT record (request.Do). */
export function doBit(r: Pick<RequestView, 'edns'>): boolean {
  return r.edns?.do ?? false;
}

/** The largest reply the client takes: 65535 over TCP, else its EDNS size, at least 512 (request.Size). */
export function requestSize(r: Pick<RequestView, 'protocol' | 'edns'>): number {
  return r.protocol === 'tcp' ? 65535 : Math.max(512, r.edns?.udpSize ?? 0);
}
