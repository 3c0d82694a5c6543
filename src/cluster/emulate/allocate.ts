// Deterministic cluster IP allocation, shaped like the API server's allocator
// (pkg/registry/core/service/ipallocator):
// - usable offsets of a CIDR start at network+1; the IPv4 broadcast address is never used; IPv6
//   ranges are capped at 65536 addresses (the bitmap size);
// - network+1 (offset 0) goes to the `kubernetes` Service in `default` and is never handed out
//   to another Service;
// - the range is split into a lower static band of min(max(16, size/16), 256) addresses, kept
//   for explicitly chosen IPs like kube-dns's .10, and an upper dynamic band that allocations
//   prefer (KEP-3070); the static band is used only when the dynamic band is full.
// Instead of a random pick, the start offset is a hash of "namespace/name" in the dynamic band,
// with linear probing past taken addresses. Declared IPs are reserved first, then Services are
// allocated in namespace/name order, so the result does not depend on file order and a new
// Service does not move existing ones unless it declares their IP (or, astronomically rarely,
// lands in the same probe chain).

import { hash } from 'node:crypto';
import type { Finding } from '../model/finding.js';
import type { Service } from '../model/model.js';
import type { Cidr } from '../../pkg/ip.js';
import { bigIntToBytes, cidrContains, cidrSize, formatIp, ipToBigInt, parseCidr, parseIp } from '../../pkg/ip.js';
import type { Family, FamilyInfo, ServiceDraft } from '../admit/services.js';
import { familyOf } from '../admit/services.js';
import { FreeOffsets } from './free-offsets.js';

interface Range {
  readonly cidr: Cidr;
  readonly family: Family;
  /** Integer value of offset 0 (network + 1). */
  readonly base: bigint;
  /** Number of usable offsets (at most 2^32 - 2 for IPv4, 65535 for IPv6, so a safe integer). */
  readonly max: number;
  /** Offsets [0, staticBand) form the static band. */
  readonly staticBand: number;
  /** Free offsets of the static band [0, staticBand) and of the dynamic band [staticBand, max). */
  readonly staticFree: FreeOffsets;
  readonly dynamicFree: FreeOffsets;
}

function takeOffset(r: Range, off: number): void {
  if (off < r.staticBand) r.staticFree.take(off);
  else r.dynamicFree.take(off - r.staticBand);
}

function makeRange(cidr: Cidr): Range {
  let max = cidrSize(cidr);
  if (cidr.family === 6) {
    if (max > 65536n) max = 65536n;
  } else {
    max -= 1n; // broadcast
  }
  max -= 1n; // network address
  if (max < 0n) max = 0n;
  const size = cidrSize(cidr);
  let staticBand = 0n;
  if (size > 16n) {
    staticBand = size / 16n;
    if (staticBand < 16n) staticBand = 16n;
    if (staticBand > 256n) staticBand = 256n;
  }
  if (staticBand > max) staticBand = max;
  const range: Range = {
    cidr,
    family: cidr.family === 4 ? 'IPv4' : 'IPv6',
    base: ipToBigInt(cidr.network) + 1n,
    max: Number(max),
    staticBand: Number(staticBand),
    staticFree: new FreeOffsets(Number(staticBand)),
    dynamicFree: new FreeOffsets(Number(max - staticBand)),
  };
  takeOffset(range, 0); // reserved for default/kubernetes
  return range;
}

/** Parses the configured service CIDRs; reports invalid ones. */
export function parseServiceCidrs(texts: readonly string[], findings: Finding[]): Cidr[] {
  const out: Cidr[] = [];
  for (const t of texts) {
    const c = parseCidr(t);
    if (c) out.push(c);
    else findings.push({ file: '<options>', line: 0, severity: 'error', message: `service CIDR "${t}" is not a valid CIDR such as 10.96.0.0/12` });
  }
  return out;
}

export function familyInfo(cidrs: readonly Cidr[]): FamilyInfo {
  const available = new Set<Family>(cidrs.map((c) => (c.family === 4 ? 'IPv4' : 'IPv6')));
  const first = cidrs[0];
  return { primary: first ? (first.family === 4 ? 'IPv4' : 'IPv6') : 'IPv4', available };
}

function hashKey(key: string): bigint {
  return hash('sha256', key, 'buffer').readBigUInt64BE(0);
}

function ipAt(r: Range, offset: number): string {
  return formatIp(bigIntToBytes(r.base + BigInt(offset), r.cidr.family === 4 ? 4 : 6));
}

/** The first free offset of a band from lo + h mod size, wrapping (linear probing's answer). */
function probe(band: FreeOffsets, lo: number, h: bigint, dm: DraftMemo | undefined): number | undefined {
  if (band.size <= 0) return undefined;
  let start: number | undefined;
  if (dm) {
    // BigInt arithmetic allocates: a kept draft's start in each band is worked out once.
    const starts = (dm.starts ??= []);
    for (let i = 0; i < starts.length; i += 2) if (starts[i] === band.size) start = starts[i + 1];
    if (start === undefined) {
      if (starts.length >= 8) starts.length = 0; // service CIDRs changed between loads
      starts.push(band.size, (start = Number(h % BigInt(band.size))));
    }
  } else start = Number(h % BigInt(band.size));
  const off = band.firstFreeFrom(start);
  return off === undefined ? undefined : lo + off;
}

const keyOf = (s: ServiceDraft): string => `${s.meta.namespace}/${s.meta.name}`;

/** What allocating a draft computes from the draft alone (its read), and the Service it gave last. */
interface DraftMemo {
  readonly key: string;
  h?: bigint;
  /** Band size and the hash's start in it, pairs. */
  starts?: number[];
  /** Addresses formatted for it: per service CIDR and offset. */
  ips?: { readonly cidr: string; readonly off: number; readonly ip: string }[];
  service?: Service;
  /** Whether that Service had allocated IPs (else its IPs were the declared ones alone). */
  allocated?: boolean;
  /** Where its declared IPs fall (rangeFor: range index and offset, -1 outside), for the service CIDRs named. */
  declared?: { readonly cidrs: string; readonly at: readonly number[] };
}

/**
 * Kept across a feed's loads (emulate-cache.ts), by the drafts' metadata, which stays the same
 * object while the draft's file is not read again: a draft's key, hash and address texts are
 * not made again, and its Service of the last load stands when it gets the same cluster IPs.
 * What is kept is a function of the draft, so allocation gives what it gives without.
 */
export class AllocationMemo {
  private readonly byMeta = new WeakMap<ServiceDraft['meta'], DraftMemo>();

  of(d: ServiceDraft): DraftMemo {
    let m = this.byMeta.get(d.meta);
    if (!m) this.byMeta.set(d.meta, (m = { key: keyOf(d) }));
    return m;
  }
}
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Where a declared IP falls: its range and offset, or undefined outside every range. */
function rangeFor(ranges: readonly Range[], ip: string): { r: Range; off: number } | undefined {
  const p = parseIp(ip)!;
  for (const r of ranges) {
    if (!cidrContains(r.cidr, p)) continue;
    const off = ipToBigInt(p.bytes) - r.base;
    if (off >= 0n && off < BigInt(r.max)) return { r, off: Number(off) };
  }
  return undefined;
}

/**
 * A --service-cidr under which `ip` would be valid: the smallest CIDR holding it and the configured
 * range of its family when that is no wider than a /8 (IPv4) or /64 (IPv6), else the IP's own
 * /16 or /112, a range to add.
 */
function fittingCidr(ip: string, configured: Cidr | undefined): string {
  const p = parseIp(ip)!;
  const bits = p.family === 4 ? 32 : 128;
  const v = ipToBigInt(p.bytes);
  let prefix = p.family === 4 ? 16 : 112;
  if (configured) {
    const n = ipToBigInt(configured.network);
    let common = configured.prefix;
    while (common > 0 && v >> BigInt(bits - common) !== n >> BigInt(bits - common)) common--;
    if (common >= (p.family === 4 ? 8 : 64)) prefix = common;
  }
  const net = (v >> BigInt(bits - prefix)) << BigInt(bits - prefix);
  return `${formatIp(bigIntToBytes(net, p.family))}/${prefix}`;
}

/** Takes every declared cluster IP out of its range; a second claim on one IP is an error. Returns IP -> owner. */
function reserveDeclared(
  drafts: readonly ServiceDraft[],
  cidrs: readonly Cidr[],
  ranges: readonly Range[],
  memo: AllocationMemo | undefined,
): Map<string, ServiceDraft> {
  const cidrsKey = memo ? cidrs.map((c) => c.text).join(',') : '';
  /** rangeFor of a draft's i-th declared IP, from the memo when the draft was met with these CIDRs. */
  const where = (d: ServiceDraft, i: number, ip: string): { r: Range; off: number } | undefined => {
    if (!memo) return rangeFor(ranges, ip);
    const dm = memo.of(d);
    if (dm.declared?.cidrs !== cidrsKey) {
      const at: number[] = [];
      for (const x of d.declaredIPs) {
        const hit = rangeFor(ranges, x);
        at.push(hit ? ranges.indexOf(hit.r) : -1, hit ? hit.off : -1);
      }
      dm.declared = { cidrs: cidrsKey, at };
    }
    const k = dm.declared.at[i * 2]!;
    return k < 0 ? undefined : { r: ranges[k]!, off: dm.declared.at[i * 2 + 1]! };
  };
  // Source order, so "first" in messages means the earlier file/line.
  const bySource = [...drafts].sort((a, b) => cmp(a.meta.source.file, b.meta.source.file) || a.meta.source.line - b.meta.source.line);
  const owner = new Map<string, ServiceDraft>();
  for (const d of bySource) {
    for (let i = 0; i < d.declaredIPs.length; i++) {
      const ip = d.declaredIPs[i]!;
      const prev = owner.get(ip);
      if (prev) {
        d.check.error(
          `cluster IP ${ip} is already used by Service "${keyOf(prev)}" (${prev.meta.source.file}:${prev.meta.source.line}); every cluster IP must be unique, pick another one or omit it to have one allocated`,
          d.check.written('spec.clusterIPs', 'spec.clusterIP'),
          // The IP allocator's Allocate: "provided IP is already allocated".
          'cluster-ip-taken',
        );
        continue;
      }
      owner.set(ip, d);
      const hit = where(d, i, ip);
      if (hit) takeOffset(hit.r, hit.off);
      else {
        const same = cidrs.filter((c) => c.family === parseIp(ip)!.family);
        const within = same.map((c) => c.text);
        const where = d.check.written('spec.clusterIP', 'spec.clusterIPs');
        const fit = fittingCidr(ip, same[0]);
        if (d.admitted) {
          // A dump of a cluster: its API server allocated this IP, so it was in that cluster's
          // range; the configured range is what differs.
          d.check.warn(
            `cluster IP ${ip} is outside the configured service CIDRs (${within.length > 0 ? within.join(', ') : `none for ${familyOf(ip)}`}), but the object was read from a cluster (it has server-set metadata), so it is kept; configure a --service-cidr that holds it, such as ${fit} (or the cluster's own range)`,
            where,
            'cluster-ip-out-of-range',
          );
        } else {
          // The IP allocator's Allocate (pkg/registry/core/service/ipallocator): "failed to
          // allocate IP ...: provided IP is not in the valid range".
          d.check.error(
            `cluster IP ${ip} is not in the valid range (${within.length > 0 ? within.join(', ') : `no ${familyOf(ip)} service CIDR configured`}): the API server rejects it; pick an address inside the service CIDR, omit it to have one allocated, or configure a --service-cidr that holds it, such as ${fit}`,
            where,
            'cluster-ip-out-of-range',
          );
        }
      }
    }
  }
  return owner;
}

/** Allocates the cluster IPs Services did not declare, in namespace/name order. Returns draft -> family -> IP. */
function allocateMissing(
  sorted: readonly ServiceDraft[],
  ranges: readonly Range[],
  owner: ReadonlyMap<string, ServiceDraft>,
  memo: AllocationMemo | undefined,
): Map<ServiceDraft, Allocated> {
  const allocated = new Map<ServiceDraft, Allocated>();
  const rangesOf = { IPv4: ranges.filter((r) => r.family === 'IPv4'), IPv6: ranges.filter((r) => r.family === 'IPv6') };
  // Indexed loops, no set or list per draft: once per Service, 10k of them on every load.
  for (let i = 0; i < sorted.length; i++) {
    const d = sorted[i]!;
    if (d.type === 'ExternalName' || d.headless) continue;
    for (let j = 0; j < d.families.length; j++) {
      const fam = d.families[j]!;
      if (d.declaredIPs.length > 0 && d.declaredIPs.some((ip) => familyOf(ip) === fam)) continue;
      const famRanges = rangesOf[fam];
      if (famRanges.length === 0) {
        d.check.error(`no ${fam} service CIDR is configured to allocate a cluster IP from; set spec.clusterIPs or configure an ${fam} service CIDR`);
        continue;
      }
      let got: string | undefined;
      if (d.meta.namespace === 'default' && d.meta.name === 'kubernetes') {
        const r = famRanges[0]!;
        if (r.max > 0 && !owner.has(ipAt(r, 0))) got = ipAt(r, 0);
      }
      const dm = memo?.of(d);
      let h: bigint;
      if (dm) h = dm.h ??= hashKey(dm.key);
      else h = hashKey(keyOf(d));
      for (const r of famRanges) {
        if (got !== undefined) break;
        const off = probe(r.dynamicFree, r.staticBand, h, dm) ?? probe(r.staticFree, 0, h, dm);
        if (off !== undefined) {
          takeOffset(r, off);
          if (dm) {
            const ips = (dm.ips ??= []);
            got = ips.find((x) => x.off === off && x.cidr === r.cidr.text)?.ip;
            if (got === undefined) {
              if (ips.length >= 4) ips.shift(); // a draft moved about by others' changes: the latest few
              ips.push({ cidr: r.cidr.text, off, ip: (got = ipAt(r, off)) });
            }
          } else got = ipAt(r, off);
        }
      }
      if (got === undefined) {
        d.check.error(`the ${fam} service CIDR (${famRanges.map((r) => r.cidr.text).join(', ')}) is full; use a larger CIDR`);
        continue;
      }
      const m = allocated.get(d);
      if (m) m[fam] = got;
      else allocated.set(d, { [fam]: got });
    }
  }
  return allocated;
}

/** A draft's allocated IP per family. */
type Allocated = { [F in Family]?: string };

/**
 * The Services made from drafts with server-set metadata (ServiceDraft.admitted): node port
 * checks (nodeports.ts) keep their written node ports outside the configured range too. Weak, so
 * it holds no model alive.
 */
export const admittedServices = new WeakSet<Service>();

/** The final Service: declared IPs first, allocated ones for the other families, in family order. */
function toServiceObject(d: ServiceDraft, allocated: ReadonlyMap<ServiceDraft, Allocated>, memo: AllocationMemo | undefined): Service {
  const got = allocated.get(d);
  const ipOf = (fam: Family): string | undefined => (d.declaredIPs.length > 0 ? d.declaredIPs.find((x) => familyOf(x) === fam) : undefined) ?? got?.[fam];
  const dm = memo?.of(d);
  const last = dm?.service;
  // Declared IPs alone, now as then: the same draft gives the same IPs.
  if (last && got === undefined && dm!.allocated === false) return last;
  if (last && d.type !== 'ExternalName' && !d.headless) {
    // The last load's Service when its IPs are the same: compared before any list is made.
    let n = 0;
    let same = true;
    for (let i = 0; i < d.families.length && same; i++) {
      const ip = ipOf(d.families[i]!);
      if (ip !== undefined) same = last.clusterIPs[n++] === ip;
    }
    if (same && n === last.clusterIPs.length) return last;
  } else if (last) return last; // no allocated IPs: the same draft gives the same Service
  let clusterIPs: string[];
  if (d.type === 'ExternalName') clusterIPs = [];
  else if (d.headless) clusterIPs = ['None'];
  else {
    clusterIPs = [];
    for (const fam of d.families) {
      const ip = ipOf(fam);
      if (ip !== undefined) clusterIPs.push(ip);
    }
  }
  const m = d.meta;
  const out: { -readonly [K in keyof Service]: Service[K] } = {
    name: m.name,
    namespace: m.namespace,
    labels: m.labels,
    annotations: m.annotations,
    source: m.source,
    type: d.type,
    clusterIPs,
    headless: d.headless,
    ports: d.ports,
    publishNotReadyAddresses: d.publishNotReadyAddresses,
    ipFamilies: d.families,
    externalIPs: d.externalIPs,
  };
  if (d.externalName !== undefined) out.externalName = d.externalName;
  if (d.selector !== undefined) out.selector = d.selector;
  if (d.admitted) admittedServices.add(out);
  if (dm) {
    dm.service = out;
    dm.allocated = got !== undefined;
  }
  return out;
}

export function allocateClusterIPs(drafts: readonly ServiceDraft[], cidrs: readonly Cidr[], memo?: AllocationMemo): Service[] {
  const ranges = cidrs.map(makeRange);
  const owner = reserveDeclared(drafts, cidrs, ranges, memo);
  const sorted = drafts
    .map((d) => ({ d, k: memo ? memo.of(d).key : keyOf(d) }))
    .sort((a, b) => cmp(a.k, b.k))
    .map((x) => x.d);
  const allocated = allocateMissing(sorted, ranges, owner, memo);
  // Final services, in namespace/name order.
  return sorted.map((d) => toServiceObject(d, allocated, memo));
}
