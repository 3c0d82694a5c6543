// Server block keys ("dns://example.org:53", "10.0.0.0/24", ".") -> zone + port.
//
// Behaviour follows CoreDNS's core/dnsserver/register.go (InspectServerBlocks),
// plugin/normalize.go (SplitHostPort) and plugin/pkg/cidr (Split, Reverse).
// Errors are thrown as KeyError carrying only the reason; the Corefile parser
// adds file:line.

import { excerpt } from './excerpt.js';
import { TRANSPORT_DEFAULT_PORTS, type Transport } from '../dns/transport.js';
import { bigIntToBytes, ipToBigInt, parseCidr } from '../pkg/ip.js';

export interface ServerKey {
  raw: string; // as written, e.g. 'dns://cluster.local:53' or '10.0.0.0/24'
  zone: string; // fully qualified, lowercased, trailing dot
  port?: number; // undefined when the key names no port (the CLI's --port default applies)
  /**
   * For reverse CIDR keys whose prefix is not on an octet (IPv4) or nibble (IPv6)
   * boundary: the network as written (host bits cleared), e.g. '10.0.0.0/25'.
   * CoreDNS splits such a network into boundary-aligned zones that together cover
   * exactly this network, so filtering queries on it never changes the result.
   */
  network?: string;
  /** The key's scheme when it is not dns:// (tls://, https://, grpc://); absent for plain DNS. */
  transport?: Exclude<Transport, 'dns'>;
}

export class KeyError extends Error {}

// The schemes served here; CoreDNS's others (plugin/pkg/transport) are refused with a reason.
const SERVED: ReadonlySet<string> = new Set<Transport>(['dns', 'tls', 'https', 'grpc']);
/** The advice of the refusals (`use dns://, tls://, ... or no scheme`), from what is served. */
const USE_SERVED = (): string => `use ${[...SERVED].map((t) => `${t}://`).join(', ')} or no scheme`;
const OTHER_TRANSPORTS = new Set(['https', 'https3', 'grpc', 'quic']);
// These run over QUIC, which Node 20's standard library does not have.
const QUIC_TRANSPORTS = new Set(['https3', 'quic']);

/** Parse one key; a CIDR off an octet/nibble boundary expands to several keys. */
export function parseServerKey(raw: string): ServerKey[] {
  if (raw === '') throw new KeyError('empty server block key; remove the stray comma or "" from the key list');
  let s = raw;
  let transport: Exclude<Transport, 'dns'> | undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(s);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    if (QUIC_TRANSPORTS.has(name)) {
      throw new KeyError(`transport ${name}:// in key '${excerpt(raw)}' is not supported: it runs over QUIC, which Node 20 does not have; ${USE_SERVED()}`);
    }
    if (OTHER_TRANSPORTS.has(name) && !SERVED.has(name)) {
      throw new KeyError(`transport ${name}:// in key '${excerpt(raw)}' is not supported by clusterdns yet; ${USE_SERVED()}`);
    }
    if (!SERVED.has(name)) throw new KeyError(`unknown scheme ${name}:// in key '${excerpt(raw)}'; ${USE_SERVED()}`);
    if (name !== 'dns') transport = name as Exclude<Transport, 'dns'>;
    s = s.slice(scheme[0].length);
  }

  // Like CoreDNS, the port is whatever follows the *last* colon. That keeps IPv6
  // CIDRs unambiguous because their "/mask" always comes before the port.
  let port: number | undefined;
  const colon = s.lastIndexOf(':');
  if (colon !== -1) {
    const tail = s.slice(colon + 1);
    if (tail === '') throw new KeyError(`key '${excerpt(raw)}' ends with ':' but has no port after it; write e.g. '${excerpt(s)}53' or drop the ':'`);
    if (/^\d+$/.test(tail)) {
      port = Number(tail);
      if (port > 65535) throw new KeyError(`bad port ${excerpt(tail)} in key '${excerpt(raw)}': ports go from 0 to 65535`);
      s = s.slice(0, colon);
    } else if (!tail.includes('/')) {
      throw new KeyError(`bad port '${excerpt(tail)}' in key '${excerpt(raw)}': the port must be a number, e.g. '${excerpt(s.slice(0, colon))}:53'`);
    }
  }

  // ":53" names the root zone (older CoreDNS releases accepted an empty host as ".").
  if (s === '') s = '.';
  if (s.length > 255) throw new KeyError(`zone in key '${excerpt(raw)}' is too long: ${s.length} > 255 characters`);

  if (!transport) return plainKeys(raw, s, port);
  // CoreDNS gives a tls:// key without a port 853 (https:// and grpc:// 443), not the -dns.port default.
  const served = transport;
  return plainKeys(raw, s, port ?? TRANSPORT_DEFAULT_PORTS[served]).map((k) => ({ ...k, transport: served }));
}

function plainKeys(raw: string, s: string, port: number | undefined): ServerKey[] {
  if (s.includes('/')) return reverseKeys(raw, s, port);

  checkDomainName(raw, s);
  let zone = s.toLowerCase();
  if (!zone.endsWith('.')) zone += '.';
  return [port === undefined ? { raw, zone } : { raw, zone, port }];
}

function checkDomainName(raw: string, s: string): void {
  if (s === '.') return;
  const labels = (s.endsWith('.') ? s.slice(0, -1) : s).split('.');
  for (const label of labels) {
    if (label === '')
      throw new KeyError(`zone in key '${excerpt(raw)}' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)`);
    if (label.length > 63)
      throw new KeyError(`zone in key '${excerpt(raw)}' is not a valid domain name: label '${excerpt(label, 20)}' is longer than 63 characters`);
  }
}

// ---- reverse (CIDR) keys ---------------------------------------------------

function reverseKeys(raw: string, cidr: string, port: number | undefined): ServerKey[] {
  // CoreDNS rejects these explicitly (plugin/normalize.go SplitHostPort).
  if (cidr.startsWith(':') || (cidr.startsWith('0') && cidr.includes(':'))) {
    throw new KeyError(`invalid CIDR '${excerpt(cidr)}' in key '${excerpt(raw)}'`);
  }
  const net = parseGoCidr(cidr);
  if (!net)
    throw new KeyError(`'${excerpt(cidr)}' in key '${excerpt(raw)}' is not a valid CIDR; write an address and prefix length such as 10.0.0.0/24 or fd00::/64`);

  const { network: bytes, prefix: ones } = net;
  const bits = bytes.length * 8;
  const v6 = net.family === 6;
  // A reverse-zone label carries 8 bits (in-addr.arpa) or 4 bits (ip6.arpa).
  const boundary = v6 ? 4 : 8;
  const base = ipToBigInt(bytes);

  if (ones % boundary === 0) {
    const zone = reverseZone(bytes, ones);
    return [port === undefined ? { raw, zone } : { raw, zone, port }];
  }

  // Not on a boundary: CoreDNS (cidr.Split) rounds the prefix *up* to the next
  // boundary and serves every subnet of that size, e.g. /15 -> two /16 zones,
  // /25 -> 128 /32 zones. It never widens to the enclosing zone.
  const newLen = Math.ceil(ones / boundary) * boundary;
  const count = 1 << (newLen - ones); // at most 2^7 for IPv4, 2^3 for IPv6
  const step = 1n << BigInt(bits - newLen);
  const network = net.text;
  const keys: ServerKey[] = [];
  for (let i = 0; i < count; i++) {
    const zone = reverseZone(bigIntToBytes(base + step * BigInt(i), net.family), newLen);
    keys.push(port === undefined ? { raw, zone, network } : { raw, zone, port, network });
  }
  return keys;
}

/** Reverse zone for a boundary-aligned prefix: the first ones/labelBits labels, reversed. */
function reverseZone(bytes: Uint8Array, ones: number): string {
  const labels: string[] = [];
  if (bytes.length === 4) {
    for (let i = 0; i < ones / 8; i++) labels.push(String(bytes[i]));
    return [...labels.reverse(), 'in-addr', 'arpa', ''].join('.');
  }
  for (let i = 0; i < ones / 4; i++) {
    const b = bytes[i >> 1]!;
    labels.push(((i & 1) === 0 ? b >> 4 : b & 15).toString(16));
  }
  return [...labels.reverse(), 'ip6', 'arpa', ''].join('.');
}

/** Go's net.ParseCIDR, which (unlike netip) takes leading zeros in the prefix length: "10.0.0.0/024". */
function parseGoCidr(s: string): ReturnType<typeof parseCidr> {
  const m = /^(.*)\/(\d{1,3})$/.exec(s);
  return m ? parseCidr(`${m[1]}/${Number(m[2])}`) : undefined;
}
