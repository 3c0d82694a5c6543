import { describe, expect, it } from 'vitest';
import { fallsThrough } from '../../src/pkg/fall.js';
import { setupPlugin } from '../helpers/setup.js';

// CoreDNS plugin/pkg/fall: no line never falls through, a bare line always does, zones limit it.
describe('fallsThrough', () => {
  const cases: Array<[readonly string[] | undefined, string, boolean]> = [
    [undefined, 'a.example.org.', false],
    [[], 'a.example.org.', true],
    [[], 'anything.', true],
    [['example.org.'], 'example.org.', true],
    [['example.org.'], 'a.b.example.org.', true],
    [['example.org.'], 'aexample.org.', false],
    [['example.org.'], 'example.net.', false],
    [['in-addr.arpa.', 'ip6.arpa.'], '1.0.0.10.in-addr.arpa.', true],
    [['in-addr.arpa.', 'ip6.arpa.'], 'a.cluster.local.', false],
    [['.'], 'a.cluster.local.', true],
  ];
  it.each(cases)('%j %s -> %s', (ft, qname, through) => {
    expect(fallsThrough(ft, qname)).toBe(through);
  });
});

// Every backend reads `fallthrough` with the same zone normalisation (lowercase, trailing dot, a
// CIDR as its reverse zones), so the same line means the same thing in each.
describe('fallthrough lines parse the same in every backend', () => {
  const line = 'fallthrough Example.ORG 10.0.0.0/24';
  const want = ['example.org.', '0.0.10.in-addr.arpa.'];
  it.each([
    ['hosts', `hosts {\n  ${line}\n}`],
    ['file', `file ${process.cwd()}/test/fixtures/file/example.net.zone example.net {\n  ${line}\n}`],
    ['kubernetes', `kubernetes cluster.local {\n  manifests ${process.cwd()}/examples/manifests\n  ${line}\n}`],
    ['etcd', `etcd example.org {\n  ${line}\n}`],
    ['k8s_gateway', `k8s_gateway example.org {\n  manifests ${process.cwd()}/examples/manifests\n  ${line}\n}`],
  ])('%s', async (name, body) => {
    const p = await setupPlugin<{ cfg: { fallthrough?: string[] } }>(body, name, { manifests: [] });
    expect(p.cfg.fallthrough).toEqual(want);
  });
});
