// The cheaper forms the control-plane emulation computes its names and addresses with must give
// the values of the forms they replaced: digests as latin1 strings (against Buffer digests),
// IPv6 text from groups (against formatIp), addresses assigned in place (against copies), the
// index of the selectors' label keys only (against the index of every label).
import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { hasControllerSelector, PodIndex } from '../../src/cluster/emulate/endpoints.js';
import { buildModel } from '../../src/cluster/load.js';
import type { ClusterNode, Pod } from '../../src/cluster/model/model.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { assignPodIPs, formatIPv4, formatIPv6Groups, inKeyOrder, parsePodCidrs } from '../../src/cluster/emulate/podips.js';
import { computeTemplateHash, digestWord16, fnv32a, safeEncodeString, sha256Bytes } from '../../src/cluster/emulate/workloads.js';
import { formatIp, parseIp } from '../../src/pkg/ip.js';
import { prng } from '../helpers/prng.js';

describe('sha256Bytes', () => {
  it('gives the bytes of the SHA-256 of the UTF-8 text, one character each', () => {
    const rnd = prng(7);
    const alphabet = 'abcz09-/.#éß漢😀';
    for (let n = 0; n < 2000; n++) {
      const chars = [...alphabet];
      let key = '';
      const len = Math.floor(rnd() * 40);
      for (let i = 0; i < len; i++) key += chars[Math.floor(rnd() * chars.length)];
      const want = createHash('sha256').update(key).digest();
      const got = sha256Bytes(key);
      expect(got.length).toBe(32);
      expect(Buffer.from(got, 'latin1').equals(want)).toBe(true);
      for (let i = 0; i < 32; i += 2) expect(digestWord16(got, i)).toBe(want.readUInt16BE(i));
    }
  });
});

describe('computeTemplateHash', () => {
  // The canonical JSON as it was written before (map/filter/join), to compare the one-pass form with.
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const mapJoinForm = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(mapJoinForm).join(',')}]`;
    if (isObj(v)) {
      return `{${Object.keys(v)
        .sort()
        .filter((k) => v[k] !== undefined)
        .map((k) => `${JSON.stringify(k)}:${mapJoinForm(v[k])}`)
        .join(',')}}`;
    }
    if (v instanceof Date) return JSON.stringify(v.toISOString());
    return JSON.stringify(v) ?? 'null';
  };

  it('hashes the same text as the map/join form for nested, sparse and odd values', () => {
    const rnd = prng(3);
    const leaf = (): unknown => [1, 'x', '', 'é"\\n', null, true, 0.5, -0, undefined, new Date(0), 1e21][Math.floor(rnd() * 11)];
    const gen = (depth: number): unknown => {
      const r = rnd();
      if (depth > 3 || r < 0.3) return leaf();
      if (r < 0.6) {
        const a: unknown[] = [];
        const n = Math.floor(rnd() * 4);
        for (let i = 0; i < n; i++) if (rnd() < 0.8) a[i] = gen(depth + 1);
        a.length = n;
        return a;
      }
      const o: Record<string, unknown> = {};
      for (const k of ['b', 'a', '10', '2', 'z-y', '']) if (rnd() < 0.5) o[k] = gen(depth + 1);
      return o;
    };
    for (let n = 0; n < 3000; n++) {
      const t = gen(0);
      const want = safeEncodeString(String(fnv32a(Buffer.from(mapJoinForm(t), 'utf8'))));
      expect(computeTemplateHash(t)).toBe(want);
    }
  });
});

describe('formatIPv4', () => {
  it('matches formatIp at every octet value and for random addresses', () => {
    const rnd = prng(5);
    const check = (v: number): void => {
      expect(formatIPv4(v)).toBe(formatIp(new Uint8Array([v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255])));
    };
    for (let o = 0; o < 256; o++) for (const shift of [0, 8, 16, 24]) check((o << shift) >>> 0);
    for (let n = 0; n < 20000; n++) check(Math.floor(rnd() * 2 ** 32));
    check(0xffffffff);
  });
});

describe('formatIPv6Groups', () => {
  const viaFormatIp = (g: Uint16Array): string => {
    const b = new Uint8Array(16);
    for (let i = 0; i < 8; i++) {
      b[i * 2] = g[i]! >> 8;
      b[i * 2 + 1] = g[i]! & 255;
    }
    return formatIp(b);
  };

  it('matches formatIp for every pattern of zero groups', () => {
    const values = [1, 0xffff, 0xabc, 0x10];
    for (let mask = 0; mask < 256; mask++) {
      for (const v of values) {
        const g = new Uint16Array(8);
        for (let i = 0; i < 8; i++) g[i] = mask & (1 << i) ? 0 : v + i;
        expect(formatIPv6Groups(g)).toBe(viaFormatIp(g));
      }
    }
  });

  it('matches formatIp for IPv4-mapped and random addresses', () => {
    const rnd = prng(11);
    const g = new Uint16Array(8);
    for (let n = 0; n < 20000; n++) {
      for (let i = 0; i < 8; i++) g[i] = rnd() < 0.4 ? 0 : Math.floor(rnd() * 65536);
      if (n % 10 === 0) g.fill(0, 0, 5).fill(0xffff, 5, 6);
      expect(formatIPv6Groups(g)).toBe(viaFormatIp(g));
    }
  });
});

describe('assignPodIPs in place', () => {
  const node: ClusterNode = { name: 'n1', addresses: ['192.168.1.5', 'fd00:1::5'], labels: {} };
  const nodes = new Map([[node.name, node]]);
  const mkPods = (): Pod[] => {
    const out: Pod[] = [];
    for (let i = 0; i < 300; i++) {
      out.push({
        name: `p-${i}`,
        namespace: i % 3 === 0 ? 'a' : 'b-x',
        labels: {},
        annotations: {},
        source: { file: 'f', line: i + 1 },
        podIPs: i === 7 ? ['10.244.0.9'] : [],
        ...(i === 7 ? { podIP: '10.244.0.9' } : {}),
        phase: i % 50 === 1 ? 'Pending' : 'Running',
        deleting: i % 60 === 2,
        nodeName: 'n1',
        hostNetwork: i % 40 === 3,
        ready: true,
      });
    }
    return out;
  };

  it.each([
    [['10.244.0.0/16', 'fd00:10:244::/56'], 250],
    [['fd00:10:244::fe00/119'], 250],
    [['10.1.2.0/23', 'fd00::1:0/112'], 250],
    // Too small: refused mapJoinForm any address is given.
    [['10.1.2.128/25'], 0],
  ])('gives the same pods, keys in the same order, as the copying form (%j)', (cidrTexts, addressed) => {
    const f1: Finding[] = [];
    const f2: Finding[] = [];
    const copied = assignPodIPs(mkPods(), parsePodCidrs(cidrTexts, f1), nodes, f1);
    const input = mkPods();
    const inPlace = assignPodIPs(input, parsePodCidrs(cidrTexts, f2), nodes, f2, true);
    expect(f2).toEqual(f1);
    expect(inPlace).toStrictEqual(copied);
    expect(inPlace.map((p) => Object.keys(p))).toEqual(copied.map((p) => Object.keys(p)));
    expect(inPlace.every((p, i) => p === input[i])).toBe(true);
    // Strings and arrays made in one piece (see podips.ts) but equal to the old ones.
    for (const p of inPlace) for (const ip of p.podIPs) expect(formatIp(parseIp(ip)!)).toBe(ip);
    expect(copied.filter((p) => p.podIPs.length > 0 && p.name !== 'p-7').length).toBeGreaterThanOrEqual(addressed);
    expect(f1.length > 0).toBe(addressed === 0);
  });

  it('takes the pods in "namespace/name" order, namespaces that prefix others included', () => {
    const rnd = prng(9);
    const names = ['a', 'a-b', 'ab', 'a0', 'b', 'b0', 'a.b', 'z-', 'x-1', 'x-10', 'x-1-0'];
    for (const withSlash of [false, true]) {
      const spaces = withSlash ? [...names, 'a/b', 'a/'] : names;
      const input: Pod[] = [];
      for (let i = 0; i < 400; i++) {
        const p = mkPods()[0]!;
        input.push({ ...p, namespace: spaces[Math.floor(rnd() * spaces.length)]!, name: `${names[Math.floor(rnd() * names.length)]}-${i}` });
      }
      const key = (p: Pod): string => `${p.namespace}/${p.name}`;
      const want = [...input].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
      expect(inKeyOrder(input).map(key)).toEqual(want.map(key));
    }
  });

  it('leaves the input pods alone without ownsPods', () => {
    const input = mkPods();
    const out = assignPodIPs(input, parsePodCidrs(['10.244.0.0/16'], []), nodes, []);
    expect(input[0]!.podIPs).toEqual([]);
    expect(out[0]!.podIPs.length).toBe(1);
  });
});

describe('PodIndex.forServices', () => {
  it('selects what the full index selects for every Service the controller manages', () => {
    const docs: string[] = [];
    for (let i = 0; i < 12; i++) {
      const kind = i % 3 === 0 ? 'StatefulSet' : 'Deployment';
      const sel = i % 4 === 0 ? `app: a${i}\n    tier: t${i % 2}` : `app: a${i}`;
      docs.push(`apiVersion: v1\nkind: Service\nmetadata:\n  name: s${i}\n  namespace: ns${i % 2}\nspec:\n  selector:\n    ${sel}\n  ports:\n  - port: 80\n`);
      docs.push(
        `apiVersion: apps/v1\nkind: ${kind}\nmetadata:\n  name: w${i}\n  namespace: ns${i % 2}\nspec:\n  replicas: ${i % 5}\n  selector:\n    matchLabels:\n      app: a${i}\n  template:\n    metadata:\n      labels:\n        app: a${i}\n        tier: t${i % 2}\n    spec:\n      containers:\n      - name: c\n        image: x\n`,
      );
    }
    // A Service selecting a StatefulSet pod by its own label, which only such a selector indexes.
    docs.push(
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: one\n  namespace: ns1\nspec:\n  selector:\n    statefulset.kubernetes.io/pod-name: w3-1\n  ports:\n  - port: 80\n`,
    );
    const { model } = buildModel([{ file: 'c.yaml', text: docs.join('---\n') }]);
    const full = new PodIndex(model.pods);
    const lean = PodIndex.forServices(model.pods, model.services);
    let selected = 0;
    for (const s of model.services) {
      if (!hasControllerSelector(s)) continue;
      const want = full.select(s.namespace, s.selector!);
      expect(lean.select(s.namespace, s.selector!)).toEqual(want);
      selected += want.length;
    }
    expect(selected).toBeGreaterThan(20);
    expect(lean.select('ns1', { 'statefulset.kubernetes.io/pod-name': 'w3-1' }).map((p) => p.name)).toEqual(['w3-1']);
  });
});
