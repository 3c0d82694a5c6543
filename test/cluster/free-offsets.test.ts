// The allocators' "first free offset from a hashed start" structure must give exactly what
// linear probing gives (so allocated IPs stay where they were), without probing's quadratic cost.
import { describe, expect, it } from 'vitest';
import { FreeOffsets } from '../../src/cluster/emulate/free-offsets.js';
import { buildModel, ManifestError } from '../../src/cluster/load.js';
import { prng } from '../server/raw.js';

function linearProbe(used: Set<number>, size: number, start: number): number | undefined {
  for (let i = 0, o = start; i < size; i++, o = o + 1 === size ? 0 : o + 1) if (!used.has(o)) return o;
  return undefined;
}

describe('FreeOffsets', () => {
  it('answers as linear probing does, through random takes until the range is full', () => {
    for (const [seed, size] of [
      [1, 1],
      [2, 7],
      [3, 64],
      [4, 1000],
    ] as const) {
      const rand = prng(seed);
      const used = new Set<number>();
      const free = new FreeOffsets(size);
      // Some declared (taken without probing), then allocations from hashed starts.
      for (let i = 0; i < size / 5; i++) {
        const o = Math.floor(rand() * size);
        used.add(o);
        free.take(o);
      }
      for (let i = 0; i < size + 3; i++) {
        const start = Math.floor(rand() * size);
        const want = linearProbe(used, size, start);
        expect(free.firstFreeFrom(start), `size ${size}, step ${i}, start ${start}`).toBe(want);
        if (want !== undefined) {
          used.add(want);
          free.take(want);
        }
      }
      expect(free.free).toBe(0);
      expect(free.firstFreeFrom(0)).toBeUndefined();
    }
  });

  it('ignores offsets outside the range and repeated takes', () => {
    const f = new FreeOffsets(3);
    f.take(-1);
    f.take(3);
    f.take(1);
    f.take(1);
    expect(f.taken).toBe(1);
    expect(f.firstFreeFrom(1)).toBe(2);
  });
});

describe('pod CIDR exhaustion', () => {
  it('reports a pod CIDR too small for the pods up front, naming the demand and the room', () => {
    // 300 pods from one Deployment need more than a /24 holds (254 addresses).
    const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: many
spec:
  replicas: 300
  selector:
    matchLabels:
      app: many
  template:
    metadata:
      labels:
        app: many
    spec:
      containers:
      - name: c
        image: nginx
`;
    let findings: readonly { severity: string; message: string }[] = [];
    try {
      buildModel([{ file: 'd.yaml', text: deploy }], { podCIDRs: ['10.1.0.0/24'] });
    } catch (e) {
      expect(e).toBeInstanceOf(ManifestError);
      findings = (e as ManifestError).findings;
    }
    const full = findings.filter((f) => f.severity === 'error' && /is full/.test(f.message));
    expect(full).toHaveLength(1);
    expect(full[0]!.message).toContain('300 pods need an address and 10.1.0.0/24 has 254 free');
  });

  it('fills a range to the last address when the pods fit exactly', () => {
    const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: exact
spec:
  replicas: 254
  selector:
    matchLabels:
      app: exact
  template:
    metadata:
      labels:
        app: exact
    spec:
      containers:
      - name: c
        image: nginx
`;
    const { model, findings } = buildModel([{ file: 'd.yaml', text: deploy }], { podCIDRs: ['10.1.0.0/24'] });
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    const ips = new Set(model.pods.map((p) => p.podIP));
    expect(ips.size).toBe(254);
    expect(ips.has('10.1.0.0')).toBe(false);
    expect(ips.has('10.1.0.255')).toBe(false);
  });
});
