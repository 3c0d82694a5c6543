// Compact IP helpers: parsing, canonical text (RFC 5952), reverse (PTR) names and CIDR arithmetic.
// Strict like Go's net/netip: no leading zeros in IPv4 octets, no zones, no prefixes.
import { isIP } from 'node:net';

export type IpFamily = 4 | 6;

export interface ParsedIp {
  readonly family: IpFamily;
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array;
}

export interface Cidr {
  readonly family: IpFamily;
  /** Network address (host bits cleared). */
  readonly network: Uint8Array;
  readonly prefix: number;
  /** Canonical text, e.g. '10.96.0.0/12'. */
  readonly text: string;
}

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

// One pass over the characters, no split or regex: every endpoint and every reverse query parses
// an address, 100k of them at load.
function parseIPv4Bytes(s: string): Uint8Array | undefined {
  if (s.length < 7 || s.length > 15) return undefined;
  const out = new Uint8Array(4);
  let octet = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46;
    if (c === 46 /* . */) {
      if (digits === 0 || octet > 3) return undefined;
      out[octet++] = value;
      value = 0;
      digits = 0;
      continue;
    }
    if (c < 48 || c > 57) return undefined;
    // No leading zeros (Go's netip), at most three digits, at most 255.
    if (digits > 0 && value === 0) return undefined;
    value = value * 10 + (c - 48);
    if (++digits > 3 || value > 255) return undefined;
  }
  return octet === 4 ? out : undefined;
}

function parseIPv6Bytes(s: string): Uint8Array | undefined {
  if (s.length < 2 || s.length > 45) return undefined;
  let tail4: Uint8Array | undefined;
  let text = s;
  // Embedded IPv4 in the last 32 bits (e.g. ::ffff:10.0.0.1).
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.indexOf('.', lastColon) >= 0) {
    tail4 = parseIPv4Bytes(text.slice(lastColon + 1));
    if (!tail4) return undefined;
    text = text.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = text.indexOf('::');
  if (dbl >= 0 && text.indexOf('::', dbl + 1) >= 0) return undefined;
  let head: string[];
  let tail: string[];
  if (dbl >= 0) {
    const a = text.slice(0, dbl);
    const b = text.slice(dbl + 2);
    head = a === '' ? [] : a.split(':');
    tail = b === '' ? [] : b.split(':');
    if (head.length + tail.length > 7) return undefined;
  } else {
    head = text.split(':');
    tail = [];
    if (head.length !== 8) return undefined;
  }
  const groups: number[] = [];
  for (const g of head) {
    if (!HEX_GROUP.test(g)) return undefined;
    groups.push(parseInt(g, 16));
  }
  const fill = 8 - head.length - tail.length;
  for (let i = 0; i < fill; i++) groups.push(0);
  for (const g of tail) {
    if (!HEX_GROUP.test(g)) return undefined;
    groups.push(parseInt(g, 16));
  }
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!;
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  }
  if (tail4) out.set(tail4, 12);
  return out;
}

/** Parses an IPv4 or IPv6 address (no zone, no prefix). */
export function parseIp(s: string): ParsedIp | undefined {
  if (typeof s !== 'string' || s.length === 0) return undefined;
  if (s.includes(':')) {
    const bytes = parseIPv6Bytes(s);
    return bytes ? { family: 6, bytes } : undefined;
  }
  const bytes = parseIPv4Bytes(s);
  return bytes ? { family: 4, bytes } : undefined;
}

export function isIPv4(s: string): boolean {
  return parseIp(s)?.family === 4;
}

export function isIPv6(s: string): boolean {
  return parseIp(s)?.family === 6;
}

/**
 * The RFC 5952 "::" of an IPv6 address's eight groups: the first longest run of two or more zero
 * groups, as start * 16 + length, or -1 when there is none. One number, so the pod IP formatter
 * calls it per address without allocating.
 */
export function zeroRun(groups: ArrayLike<number>): number {
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  return bestLen < 2 ? -1 : bestStart * 16 + bestLen;
}

/** Formats 4 or 16 bytes as canonical text (IPv6 per RFC 5952, IPv4-mapped as ::ffff:a.b.c.d). */
export function formatIp(ip: ParsedIp | Uint8Array): string {
  const bytes = ip instanceof Uint8Array ? ip : ip.bytes;
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) throw new RangeError(`not an IP address: ${bytes.length} bytes`);
  let mapped = true;
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) mapped = false;
  if (mapped && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!);
  const run = zeroRun(groups);
  const hex = (g: number): string => g.toString(16);
  if (run < 0) return groups.map(hex).join(':');
  const bestStart = run >> 4;
  const bestLen = run & 15;
  const left = groups.slice(0, bestStart).map(hex).join(':');
  const right = groups
    .slice(bestStart + bestLen)
    .map(hex)
    .join(':');
  return `${left}::${right}`;
}

/** Canonical text of an IP (IPv6 compressed lowercase per RFC 5952), or undefined if invalid. */
export function canonicalIp(s: string): string | undefined {
  const p = parseIp(s);
  return p ? formatIp(p) : undefined;
}

/** PTR owner name of an IP: '10.96.0.10' -> '10.0.96.10.in-addr.arpa.'; IPv6 in nibble form under ip6.arpa. */
export function ipToReverseName(ip: string | ParsedIp): string {
  const p = typeof ip === 'string' ? parseIp(ip) : ip;
  if (!p) throw new TypeError(`not an IP address: ${String(ip)}`);
  const b = p.bytes;
  if (p.family === 4) return `${b[3]}.${b[2]}.${b[1]}.${b[0]}.in-addr.arpa.`;
  const labels: string[] = [];
  for (let i = 15; i >= 0; i--) {
    const v = b[i]!;
    labels.push((v & 0xf).toString(16), (v >> 4).toString(16));
  }
  return `${labels.join('.')}.ip6.arpa.`;
}

/**
 * Inverse of ipToReverseName: the canonical IP text of a complete reverse name (case-insensitive,
 * trailing dot optional), or undefined for partial or malformed names.
 */
export function reverseNameToIp(name: string): string | undefined {
  let n = name.toLowerCase();
  if (n.endsWith('.')) n = n.slice(0, -1);
  if (n.endsWith('.in-addr.arpa')) {
    const labels = n.slice(0, -'.in-addr.arpa'.length).split('.');
    if (labels.length !== 4) return undefined;
    return canonicalIp(labels.reverse().join('.'));
  }
  if (n.endsWith('.ip6.arpa')) {
    const labels = n.slice(0, -'.ip6.arpa'.length).split('.');
    if (labels.length !== 32) return undefined;
    const bytes = new Uint8Array(16);
    for (let i = 0; i < 32; i++) {
      const l = labels[31 - i]!;
      if (!/^[0-9a-f]$/.test(l)) return undefined;
      const v = parseInt(l, 16);
      const byte = i >> 1;
      bytes[byte] = i % 2 === 0 ? v << 4 : bytes[byte]! | v;
    }
    return formatIp(bytes);
  }
  return undefined;
}

// ---- integer form -------------------------------------------------------------------------

export function ipToBigInt(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

export function bigIntToBytes(v: bigint, family: IpFamily): Uint8Array {
  const len = family === 4 ? 4 : 16;
  const out = new Uint8Array(len);
  let x = v;
  for (let i = len - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

// ---- CIDRs --------------------------------------------------------------------------------

/** Parses 'a.b.c.d/n' or 'x::/n'; host bits are cleared (like Go's net.ParseCIDR). */
export function parseCidr(s: string): Cidr | undefined {
  if (typeof s !== 'string') return undefined;
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(s.slice(0, slash));
  const prefixText = s.slice(slash + 1);
  if (!ip || !/^(?:0|[1-9][0-9]{0,2})$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const bits = ip.family === 4 ? 32 : 128;
  if (prefix > bits) return undefined;
  const network = new Uint8Array(ip.bytes);
  for (let i = 0; i < network.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    network[i] = network[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return { family: ip.family, network, prefix, text: `${formatIp(network)}/${prefix}` };
}

/** Number of addresses in the CIDR. */
export function cidrSize(c: Cidr): bigint {
  return 1n << BigInt((c.family === 4 ? 32 : 128) - c.prefix);
}

export function cidrContains(c: Cidr | string, ip: string | ParsedIp): boolean {
  const cidr = typeof c === 'string' ? parseCidr(c) : c;
  const p = typeof ip === 'string' ? parseIp(ip) : ip;
  if (!cidr || !p || p.family !== cidr.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((p.bytes[i]! & mask) !== cidr.network[i]) return false;
  }
  return true;
}

/** The n-th address of the CIDR (0 = network address) as canonical text; undefined when out of range. */
export function cidrNth(c: Cidr | string, n: bigint | number): string | undefined {
  const cidr = typeof c === 'string' ? parseCidr(c) : c;
  if (!cidr) return undefined;
  const k = BigInt(n);
  if (k < 0n || k >= cidrSize(cidr)) return undefined;
  return formatIp(bigIntToBytes(ipToBigInt(cidr.network) + k, cidr.family));
}

/** Loopback or unspecified, as a listen or peer address: '127.0.0.5', '0.0.0.0', '::1', '::', '::ffff:127.0.0.1'. */
export function isLoopbackOrUnspecified(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.') || address === '0.0.0.0';
  const a = address.toLowerCase().split('%')[0]!;
  return a === '::1' || a === '::' || a.startsWith('::ffff:127.');
}

/** An IPv4 peer seen through a dual-stack socket ('::ffff:10.0.0.1') as plain IPv4, as Go reports it. */
export function plainAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

/** CoreDNS's request family: 1 for IPv4 (mapped addresses included), 2 for IPv6. */
export function addressFamily(address: string): 1 | 2 {
  return plainAddress(address).includes(':') ? 2 : 1;
}
