// Pod IP assignment, deterministic (the CNI would pick from the node's pod CIDR):
// - IPs a manifest declares (status.podIP/podIPs) are kept and reserved first;
// - hostNetwork pods get their node's addresses (one per pod-CIDR family), when the node is known;
// - every other Running pod without an IP gets one address per pod CIDR (dual-stack: one per
//   family, podIP = the first), starting at a hash of "namespace/name" with linear probing past
//   taken addresses, pods taken in namespace/name order. A new pod therefore does not move others
//   unless it lands in the same probe chain. Network and IPv4 broadcast addresses are never used.
// Pending, terminal and deleting pods without a declared IP get none, as in a real cluster.

import { hash } from 'node:crypto';
import type { ClusterNode, Finding, Pod } from './model.js';
import type { Cidr } from '../pkg/ip.js';
import { bigIntToBytes, cidrSize, formatIp, ipToBigInt, parseCidr, parseIp } from '../pkg/ip.js';
import { familyOf } from './objects.js';
import { FreeOffsets } from './free-offsets.js';

interface PodRange {
  readonly cidr: Cidr;
  readonly family: 'IPv4' | 'IPv6';
  readonly network: bigint;
  /** Usable offsets are 1..size (capped at 2^32 for large IPv6 ranges). */
  readonly size: number;
  /** Offset o + 1 of the range is free when offset o here is. */
  readonly used: FreeOffsets;
  /** The network address's bytes, for addresses built without BigInt (100k pods). */
  readonly networkBytes: Uint8Array;
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

function makeRange(cidr: Cidr): PodRange {
  let size = cidrSize(cidr) - 1n; // network address
  if (cidr.family === 4) size -= 1n; // broadcast
  if (size > 0xffffffffn) size = 0xffffffffn;
  if (size < 0n) size = 0n;
  const network = ipToBigInt(cidr.network);
  return {
    cidr,
    family: cidr.family === 4 ? 'IPv4' : 'IPv6',
    network,
    size: Number(size),
    used: new FreeOffsets(Number(size)),
    networkBytes: bigIntToBytes(network, cidr.family),
  };
}

/** The first 64 bits of the digest modulo size (at most 2^32), in 16-bit steps so doubles stay exact. */
function digestMod(d: Buffer, size: number): number {
  let r = 0;
  for (let i = 0; i < 8; i += 2) r = (r * 65536 + d.readUInt16BE(i)) % size;
  return r;
}

/** The address `n` (below 2^32) after the network address: its bytes plus n, with carry. */
function addressAt(network: Uint8Array, n: number): string {
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

/** Returns the pods (same order) with podIP/podIPs filled in where a real cluster would have them. */
export function assignPodIPs(pods: readonly Pod[], cidrs: readonly Cidr[], nodes: ReadonlyMap<string, ClusterNode>, findings: Finding[]): Pod[] {
  const ranges = cidrs.map(makeRange);
  for (const p of pods) {
    if (p.hostNetwork) continue;
    for (const ip of p.podIPs) {
      const parsed = parseIp(ip)!;
      for (const r of ranges) {
        if (r.cidr.family !== parsed.family) continue;
        const off = ipToBigInt(parsed.bytes) - r.network;
        if (off >= 1n && off <= BigInt(r.size)) r.used.take(Number(off) - 1);
      }
    }
  }
  const families = ranges.map((r) => r.family);
  const result = new Map<Pod, string[]>();
  const needing = pods
    .filter((p) => p.podIPs.length === 0 && p.phase === 'Running' && !p.deleting)
    .map((p) => ({ p, k: `${p.namespace}/${p.name}` }))
    .sort((a, b) => cmp(a.k, b.k));
  // A range too small for the pods that need an address fails here, before any probing.
  const demand = needing.filter(({ p }) => !p.hostNetwork).length;
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
  for (const { p, k } of needing) {
    if (p.hostNetwork) {
      const node = p.nodeName !== undefined ? nodes.get(p.nodeName) : undefined;
      if (!node) continue;
      const ips: string[] = [];
      for (const f of families) {
        const ip = node.addresses.find((a) => familyOf(a) === f);
        if (ip !== undefined) ips.push(ip);
      }
      result.set(p, ips);
      continue;
    }
    // One-shot hash: the same SHA-256 without a Hash object per pod (100k pods).
    const d = hash('sha256', k, 'buffer');
    const ips: string[] = [];
    for (const r of ranges) {
      if (r.size === 0) continue;
      const off = r.used.firstFreeFrom(digestMod(d, r.size));
      if (off === undefined) {
        full = true;
        continue;
      }
      r.used.take(off);
      ips.push(addressAt(r.networkBytes, off + 1));
    }
    result.set(p, ips);
  }
  if (full) {
    findings.push({ file: '<options>', line: 0, severity: 'error', message: `a pod CIDR (${cidrs.map((c) => c.text).join(', ')}) is full; configure a larger pod CIDR` });
  }
  return pods.map((p) => {
    const ips = result.get(p);
    if (!ips || ips.length === 0) return p;
    return { ...p, podIP: ips[0]!, podIPs: ips };
  });
}
