// Pod IP assignment, deterministic (the CNI would pick from the node's pod CIDR):
// - IPs a manifest declares (status.podIP/podIPs) are kept and reserved first;
// - hostNetwork pods get their node's addresses (one per pod-CIDR family), when the node is known;
// - every other Running pod without an IP gets one address per pod CIDR (dual-stack: one per
//   family, podIP = the first), starting at a hash of "namespace/name" with linear probing past
//   taken addresses, pods taken in namespace/name order. A new pod therefore does not move others
//   unless it lands in the same probe chain. Network and IPv4 broadcast addresses are never used.
// Pending, terminal and deleting pods without a declared IP get none, as in a real cluster.

import type { ClusterNode, Pod } from '../model/model.js';
import type { Finding } from '../model/finding.js';
import type { Cidr } from '../../pkg/ip.js';
import { bigIntToBytes, cidrSize, formatIp, ipToBigInt, parseCidr, parseIp, zeroRun } from '../../pkg/ip.js';
import { familyOf } from '../admit/services.js';
import { FreeOffsets } from './free-offsets.js';
import { digestWord16, sha256Bytes } from './workloads.js';

export interface PodRange {
  readonly cidr: Cidr;
  readonly family: 'IPv4' | 'IPv6';
  readonly network: bigint;
  /** Usable offsets are 1..size (capped at 2^32 for large IPv6 ranges). */
  readonly size: number;
  /** Offset o + 1 of the range is free when offset o here is. */
  readonly used: FreeOffsets;
  /** The network address's bytes, for addresses built without BigInt (100k pods). */
  readonly networkBytes: Uint8Array;
  /** The low 32 bits of the network address: an address is this plus its offset, in 32-bit arithmetic. */
  readonly networkLow: number;
  /** IPv6: the address's eight 16-bit groups, the first six the network's (see addressAt). */
  readonly groups: Uint16Array;
}

export function parsePodCidrs(texts: readonly string[], findings: Finding[]): Cidr[] {
  const out: Cidr[] = [];
  for (const t of texts) {
    const c = parseCidr(t);
    if (!c) findings.push({ file: '<options>', line: 0, severity: 'error', message: `pod CIDR "${t}" is not a valid CIDR such as 10.244.0.0/16` });
    else if (out.some((o) => o.family === c.family)) {
      findings.push({ file: '<options>', line: 0, severity: 'error', message: `pod CIDR "${t}": give at most one pod CIDR per IP family` });
    } else out.push(c);
  }
  return out;
}

export function makeRange(cidr: Cidr): PodRange {
  let size = cidrSize(cidr) - 1n; // network address
  if (cidr.family === 4) size -= 1n; // broadcast
  if (size > 0xffffffffn) size = 0xffffffffn;
  if (size < 0n) size = 0n;
  const network = ipToBigInt(cidr.network);
  const networkBytes = bigIntToBytes(network, cidr.family);
  const n = networkBytes.length;
  const groups = new Uint16Array(8);
  if (n === 16) for (let i = 0; i < 8; i++) groups[i] = (networkBytes[i * 2]! << 8) | networkBytes[i * 2 + 1]!;
  return {
    cidr,
    family: cidr.family === 4 ? 'IPv4' : 'IPv6',
    network,
    size: Number(size),
    used: new FreeOffsets(Number(size)),
    networkBytes,
    networkLow: ((networkBytes[n - 4]! << 24) | (networkBytes[n - 3]! << 16) | (networkBytes[n - 2]! << 8) | networkBytes[n - 1]!) >>> 0,
    groups,
  };
}

/** The first 64 bits of the digest modulo size (at most 2^32), in 16-bit steps so doubles stay exact. */
export function digestMod(d: string, size: number): number {
  let r = 0;
  for (let i = 0; i < 8; i += 2) r = (r * 65536 + digestWord16(d, i)) % size;
  return r;
}

// Addresses are written as characters into one scratch buffer and made a string in one step:
// the string is flat (template literals and += give ropes of pieces, about 140 bytes more per
// address, held by every pod and endpoint until something flattens them), and nothing else is
// allocated per address.
const chars = Buffer.alloc(64);
let used = 0;
const HEX_CODES = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

function pushDecimal(x: number): void {
  if (x >= 100) chars[used++] = 48 + Math.floor(x / 100);
  if (x >= 10) chars[used++] = 48 + (Math.floor(x / 10) % 10);
  chars[used++] = 48 + (x % 10);
}

function pushHex(x: number): void {
  if (x >= 0x1000) chars[used++] = HEX_CODES[x >> 12]!;
  if (x >= 0x100) chars[used++] = HEX_CODES[(x >> 8) & 15]!;
  if (x >= 0x10) chars[used++] = HEX_CODES[(x >> 4) & 15]!;
  chars[used++] = HEX_CODES[x & 15]!;
}

function pushDotted(hi: number, lo: number): void {
  pushDecimal(hi >> 8);
  chars[used++] = 46;
  pushDecimal(hi & 255);
  chars[used++] = 46;
  pushDecimal(lo >> 8);
  chars[used++] = 46;
  pushDecimal(lo & 255);
}

const takeChars = (): string => {
  const text = chars.toString('latin1', 0, used);
  used = 0;
  return text;
};

/** formatIp of an IPv4 address given as its 32-bit value. */
export function formatIPv4(v: number): string {
  pushDotted(v >>> 16, v & 0xffff);
  return takeChars();
}

/**
 * formatIp of an IPv6 address given as its eight groups (RFC 5952: lower-case hex, the first
 * longest run of two or more zero groups as "::", IPv4-mapped addresses dotted).
 */
export function formatIPv6Groups(g: Uint16Array): string {
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    used = chars.write('::ffff:', 'latin1');
    pushDotted(g[6]!, g[7]!);
    return takeChars();
  }
  const run = zeroRun(g);
  const bestStart = run < 0 ? 8 : run >> 4;
  const bestLen = run < 0 ? 0 : run & 15;
  for (let i = 0; i < bestStart; i++) {
    if (i > 0) chars[used++] = 58;
    pushHex(g[i]!);
  }
  if (bestStart < 8) {
    chars[used++] = 58;
    chars[used++] = 58;
  }
  for (let i = bestStart + bestLen; i < 8; i++) {
    if (i > bestStart + bestLen) chars[used++] = 58;
    pushHex(g[i]!);
  }
  return takeChars();
}

/**
 * The address `n` (below 2^32) after the network address. A network is aligned to its prefix and
 * n stays below the range's size, so the sum never carries out of the low 32 bits; only the low
 * word (IPv4: the address) changes from pod to pod.
 */
export function addressAt(r: PodRange, n: number): string {
  const low = r.networkLow + n;
  if (low > 0xffffffff) return addressWithCarry(r.networkBytes, n);
  if (r.cidr.family === 4) return formatIPv4(low);
  r.groups[6] = low >>> 16;
  r.groups[7] = low & 0xffff;
  return formatIPv6Groups(r.groups);
}

/** The address `n` after the network address: its bytes plus n, with carry. */
function addressWithCarry(network: Uint8Array, n: number): string {
  const out = new Uint8Array(network);
  let carry = n;
  for (let i = out.length - 1; i >= 0 && carry > 0; i--) {
    const sum = out[i]! + (carry % 256);
    out[i] = sum & 0xff;
    carry = Math.floor(carry / 256) + (sum >> 8);
  }
  return formatIp(out);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The offsets in `ranges` of the addresses a pod declares (a host-network pod's are its node's: none). */
export function declaredOffsets(p: Pod, ranges: readonly PodRange[], take: (r: PodRange, offset: number) => void): void {
  if (p.hostNetwork || p.podIPs.length === 0) return;
  for (const ip of p.podIPs) {
    const parsed = parseIp(ip)!;
    for (const r of ranges) {
      if (r.cidr.family !== parsed.family) continue;
      const off = ipToBigInt(parsed.bytes) - r.network;
      if (off >= 1n && off <= BigInt(r.size)) take(r, Number(off) - 1);
    }
  }
}

/** A pod that needs an address from assignPodIPs: Running, not deleting, none declared. */
export const needsAddress = (p: Pod): boolean => p.podIPs.length === 0 && p.phase === 'Running' && !p.deleting;

/** A host-network pod's addresses: its node's, one per family of the pod CIDRs (undefined: node unknown). */
export function hostAddresses(p: Pod, families: readonly ('IPv4' | 'IPv6')[], nodes: ReadonlyMap<string, ClusterNode>): string[] | undefined {
  const node = p.nodeName !== undefined ? nodes.get(p.nodeName) : undefined;
  if (!node) return undefined;
  const ips: string[] = [];
  for (const f of families) {
    const ip = node.addresses.find((a) => familyOf(a) === f);
    if (ip !== undefined) ips.push(ip);
  }
  return ips;
}

/**
 * The pods in "namespace/name" order. Without '/' in a namespace, that is the namespaces in the
 * order of "namespace/" and the names within each: no key string and record per pod kept through
 * the sort (100k of them, promoted and left as garbage). A namespace with '/' (never valid) sorts
 * by the whole key.
 */
export function inKeyOrder(pods: Pod[]): Pod[] {
  const byNs = new Map<string, Pod[]>();
  for (let i = 0; i < pods.length; i++) {
    const p = pods[i]!;
    const l = byNs.get(p.namespace);
    if (l) l.push(p);
    else byNs.set(p.namespace, [p]);
  }
  if ([...byNs.keys()].some((ns) => ns.includes('/'))) {
    const keyed = pods.map((p) => ({ p, k: `${p.namespace}/${p.name}` })).sort((a, b) => cmp(a.k, b.k));
    return keyed.map((x) => x.p);
  }
  const out: Pod[] = [];
  for (const ns of [...byNs.keys()].sort((a, b) => cmp(`${a}/`, `${b}/`))) {
    for (const p of byNs.get(ns)!.sort((a, b) => cmp(a.name, b.name))) out.push(p);
  }
  return out;
}

/**
 * Returns the pods (same order) with podIP/podIPs filled in where a real cluster would have them;
 * `cidrs` as parsePodCidrs gives them, at most one per family.
 * `ownsPods`: the caller holds the only references to the pods (the loader, to pods it just
 * read or derived), so they get their addresses in place instead of as copies; the keys end in
 * the same order either way (podIPs where it was, podIP added last).
 */
export function assignPodIPs(
  pods: readonly Pod[],
  cidrs: readonly Cidr[],
  nodes: ReadonlyMap<string, ClusterNode>,
  findings: Finding[],
  ownsPods = false,
): Pod[] {
  if (cidrs.length > 2 || (cidrs.length === 2 && cidrs[0]!.family === cidrs[1]!.family)) {
    throw new RangeError('assignPodIPs takes at most one pod CIDR per family (parsePodCidrs gives no more)');
  }
  const ranges = cidrs.map(makeRange);
  // Indexed loops over the 100k pods: this runs once, mostly before the optimiser takes the
  // loop, and an unoptimised for-of allocates an iterator result per pod.
  for (let i = 0; i < pods.length; i++) declaredOffsets(pods[i]!, ranges, (r, off) => r.used.take(off));
  const families = ranges.map((r) => r.family);
  const result = new Map<Pod, string[]>();
  const give = (p: Pod, ips: string[]): void => {
    if (!ownsPods) result.set(p, ips);
    else if (ips.length > 0) {
      const m = p as { -readonly [K in keyof Pod]: Pod[K] };
      m.podIP = ips[0]!;
      m.podIPs = ips;
    }
  };
  const needing = inKeyOrder(pods.filter(needsAddress));
  // A range too small for the pods that need an address fails here, before any probing.
  let demand = 0;
  for (let i = 0; i < needing.length; i++) if (!needing[i]!.hostNetwork) demand++;
  const short = ranges.filter((r) => r.size > 0 && r.used.free < demand);
  if (short.length > 0) {
    findings.push({
      file: '<options>',
      line: 0,
      severity: 'error',
      message: `a pod CIDR (${short.map((r) => r.cidr.text).join(', ')}) is full: ${demand} pods need an address and ${short.map((r) => `${r.cidr.text} has ${r.used.free} free`).join(', ')}; configure a larger pod CIDR (--pod-cidr)`,
    });
    return [...pods];
  }
  let full = false;
  for (let i = 0; i < needing.length; i++) {
    const p = needing[i]!;
    if (p.hostNetwork) {
      const ips = hostAddresses(p, families, nodes);
      if (ips) give(p, ips);
      continue;
    }
    const d = sha256Bytes(`${p.namespace}/${p.name}`);
    // At most one range per family: the one or two addresses go straight into an array literal
    // of their length (a pushed-to array keeps room for 17, ~130 bytes more held by every pod).
    let first: string | undefined;
    let second: string | undefined;
    for (const r of ranges) {
      if (r.size === 0) continue;
      const off = r.used.firstFreeFrom(digestMod(d, r.size));
      if (off === undefined) {
        full = true;
        continue;
      }
      r.used.take(off);
      if (first === undefined) first = addressAt(r, off + 1);
      else second = addressAt(r, off + 1);
    }
    give(p, first === undefined ? [] : second === undefined ? [first] : [first, second]);
  }
  if (full) {
    findings.push({
      file: '<options>',
      line: 0,
      severity: 'error',
      message: `a pod CIDR (${cidrs.map((c) => c.text).join(', ')}) is full; configure a larger pod CIDR`,
    });
  }
  if (ownsPods) return pods.slice();
  return pods.map((p) => {
    const ips = result.get(p);
    if (!ips || ips.length === 0) return p;
    return { ...p, podIP: ips[0]!, podIPs: ips };
  });
}
