// The addresses behind `ns.dns.<zone>` when no kube-system DNS Service names the server (CoreDNS's
// plugin/kubernetes local.go boundIPs and the fallback at the end of ns.go nsAddrs).
import os from 'node:os';
import { isIPv4 } from 'node:net';
import { isLoopbackOrUnspecified } from '../../pkg/ip.js';

function isUnspecified(a: string): boolean {
  return a === '0.0.0.0' || a === '::';
}

function isLinkLocal6(a: string): boolean {
  return !isIPv4(a) && /^fe[89ab]/i.test(a);
}

/**
 * The server's own addresses for its apex NS. CoreDNS takes the non-loopback addresses it is
 * bound to, or every interface's when it is bound to all; those are used here too (IPv6
 * link-local ones left out: they mean nothing without an interface). CoreDNS stops there, so a
 * server bound to loopback only (or a machine with loopback only) has no NS at its apex and
 * answers the apex NS query with NODATA; a zone always has NS at its apex (RFC 1034 4.2.1), so
 * clusterdns then names the loopback addresses it is bound to (127.0.0.1 when bound to all).
 */
export function serverAddresses(bound: readonly string[], interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces()): string[] {
  const all = bound.length === 0 || bound.some(isUnspecified);
  const candidates = all ? Object.values(interfaces).flatMap((list) => (list ?? []).map((i) => i.address.split('%')[0]!)) : bound.map((a) => a.split('%')[0]!);
  const routable = candidates.filter((a) => !isLoopbackOrUnspecified(a) && !isLinkLocal6(a));
  if (routable.length > 0) return [...new Set(routable)];
  const loopback = bound.filter((a) => !isUnspecified(a) && isLoopbackOrUnspecified(a));
  return loopback.length > 0 ? [...new Set(loopback)] : ['127.0.0.1'];
}
