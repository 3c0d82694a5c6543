// The LoadBalancer address pool, as MetalLB (or a cloud) would hand addresses out to Services of
// type LoadBalancer, Gateways and ingress controllers that have no status in the manifests.
// Deterministic: the first candidate is a hash of the owner's key, then linear probing past
// taken addresses, so the same manifests give the same addresses on every run whatever the
// file order, and adding an owner does not move the others (unless it lands in a probe chain).
import { createHash } from 'node:crypto';
import type { Finding } from '../model/finding.js';
import type { Cidr } from '../../pkg/ip.js';
import { FreeOffsets } from './free-offsets.js';
import { bigIntToBytes, canonicalIp, cidrContains, cidrSize, formatIp, ipToBigInt, parseCidr, parseIp } from '../../pkg/ip.js';

/** Defaults: the top of kind's docker network (where MetalLB examples for kind put their pool), and a ULA /112. */
export const DEFAULT_LB_CIDRS: readonly string[] = ['172.18.255.0/24', 'fc00:f853:ccd:e793:ffff::/112'];

/** IPv6 pools are capped at 65536 addresses, like the cluster IP allocator. */
const MAX_POOL = 65536n;

interface Pool {
  readonly cidr: Cidr;
  /** First usable address (network + 1). */
  readonly base: bigint;
  readonly used: FreeOffsets;
}

export class LoadBalancerPool {
  private readonly pools: Pool[] = [];

  constructor(texts: readonly string[], findings: Finding[]) {
    for (const t of texts) {
      const c = parseCidr(t);
      if (!c) {
        findings.push({
          file: '<options>',
          line: 0,
          severity: 'error',
          message: `load balancer CIDR "${t}" is not a valid CIDR such as 172.18.255.0/24 (--loadbalancer-cidr)`,
        });
        continue;
      }
      let size = cidrSize(c);
      if (c.family === 4) size -= 1n; // broadcast
      size -= 1n; // network
      if (size > MAX_POOL) size = MAX_POOL;
      if (size < 1n) {
        findings.push({
          file: '<options>',
          line: 0,
          severity: 'error',
          message: `load balancer CIDR "${t}" has no usable address; use a prefix of /30 or shorter (IPv6 /126)`,
        });
        continue;
      }
      this.pools.push({ cidr: c, base: ipToBigInt(c.network) + 1n, used: new FreeOffsets(Number(size)) });
    }
  }

  families(): (4 | 6)[] {
    return [...new Set(this.pools.map((p) => p.cidr.family))];
  }

  /** Marks an address taken (written in a manifest), so the pool never hands it out again. */
  reserve(ip: string): void {
    const p = parseIp(ip);
    if (!p) return;
    for (const pool of this.pools) {
      if (!cidrContains(pool.cidr, p)) continue;
      const off = ipToBigInt(p.bytes) - pool.base;
      if (off >= 0n && off < BigInt(pool.used.size)) pool.used.take(Number(off));
    }
  }

  /** An address of `family` for `key`, or undefined when no pool of that family has one left. */
  allocate(key: string, family: 4 | 6): string | undefined {
    const h = createHash('sha256').update(key).digest().readBigUInt64BE(0);
    for (const pool of this.pools) {
      if (pool.cidr.family !== family) continue;
      // Linear probing from the hashed start, in amortised constant time however full the pool is.
      const off = pool.used.firstFreeFrom(Number(h % BigInt(pool.used.size)));
      if (off === undefined) continue;
      pool.used.take(off);
      return canonicalIp(formatIp(bigIntToBytes(pool.base + BigInt(off), family)))!;
    }
    return undefined;
  }
}
