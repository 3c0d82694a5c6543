// CoreDNS plugin/k8s_external/setup_test.go (TestSetup), ported, and every error of setup.ts word
// for word. k8s_external answers from the block's kubernetes plugin, so each block has one.
import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import { repoRoot } from '../../helpers/server.js';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { K8sExternalConfig } from '../../../src/plugins/k8s_external/config.js';

const manifests = [path.join(repoRoot, 'examples/manifests')];
const withKubernetes = (body: string): string => `kubernetes cluster.local\n${body}`;
const cfgOf = async (body: string) => (await setupPlugin<{ cfg: K8sExternalConfig }>(withKubernetes(body), 'k8s_external', { manifests })).cfg;

describe('k8s_external setup (CoreDNS setup_test.go)', () => {
  it.each([
    ['k8s_external', { zones: ['.'], apex: 'dns', ttl: 5, headless: false }],
    ['k8s_external example.org', { zones: ['example.org.'], apex: 'dns', ttl: 5, headless: false }],
    ['k8s_external example.org {\n  apex testdns\n}', { zones: ['example.org.'], apex: 'testdns', ttl: 5, headless: false }],
    ['k8s_external example.org {\n  apex TestDNS.\n}', { zones: ['example.org.'], apex: 'testdns', ttl: 5, headless: false }],
    ['k8s_external example.org {\n  headless\n}', { zones: ['example.org.'], apex: 'dns', ttl: 5, headless: true }],
    ['k8s_external example.org {\n  fallthrough\n}', { zones: ['example.org.'], apex: 'dns', ttl: 5, headless: false, fallthrough: [] }],
    [
      'k8s_external example.org {\n  fallthrough ip6.arpa inaddr.arpa foo.com\n}',
      { zones: ['example.org.'], apex: 'dns', ttl: 5, headless: false, fallthrough: ['ip6.arpa.', 'inaddr.arpa.', 'foo.com.'] },
    ],
    ['k8s_external example.org {\n  apex testdns\n  ttl 500\n}', { zones: ['example.org.'], apex: 'testdns', ttl: 500, headless: false }],
    ['k8s_external example.org {\n  ttl 0\n}', { zones: ['example.org.'], apex: 'dns', ttl: 0, headless: false }],
    ['k8s_external example.org {\n  ttl 3600\n}', { zones: ['example.org.'], apex: 'dns', ttl: 3600, headless: false }],
    ['k8s_external example.org {\n  max_lookups 4\n}', { zones: ['example.org.'], apex: 'dns', ttl: 5, headless: false, maxLookups: 4 }],
    ['k8s_external example.org 10.0.0.0/24', { zones: ['example.org.', '0.0.10.in-addr.arpa.'], apex: 'dns', ttl: 5, headless: false }],
  ])('accepts %j', async (body, want) => {
    expect(await cfgOf(body)).toEqual(want);
  });

  // `line: reason`; the kubernetes line is line 2, so k8s_external is line 3 and its options 4.
  it.each([
    ['k8s_external example.org {\n  ttl\n}', '4: k8s_external ttl: wrong number of arguments: 0 given, 1 expected; usage `ttl SECONDS`, e.g. `ttl 5`'],
    ['k8s_external example.org {\n  ttl 5s\n}', '4: k8s_external ttl: ttl "5s" is not an integer'],
    ['k8s_external example.org {\n  ttl -1\n}', '4: k8s_external ttl: ttl must be in range [0, 3600]: -1'],
    ['k8s_external example.org {\n  ttl 3601\n}', '4: k8s_external ttl: ttl must be in range [0, 3600]: 3601'],
    ['k8s_external example.org {\n  apex\n}', '4: k8s_external apex: wrong number of arguments: 0 given, 1 expected; usage `apex NAME`, e.g. `apex dns`'],
    ['k8s_external example.org {\n  bogus\n}', '4: unknown k8s_external option "bogus"; valid options: apex, ttl, headless, fallthrough, max_lookups'],
    [
      'k8s_external example.org {\n  max_lookups\n}',
      '4: k8s_external max_lookups: wrong number of arguments: 0 given, 1 expected; usage `max_lookups N`, e.g. `max_lookups 16`',
    ],
    ['k8s_external example.org {\n  max_lookups 0\n}', '4: k8s_external max_lookups: N must be in range [1, 1000]: 0'],
    [
      'k8s_external bad..zone',
      `3: k8s_external: bad zone "bad..zone": zone in key 'bad..zone' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)`,
    ],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(withKubernetes(body), { manifests })).errors).toEqual([error]);
  });

  it('rejects a block without a kubernetes plugin to read from', async () => {
    expect((await setupBlock('k8s_external example.org', { manifests })).errors).toEqual([
      '2: k8s_external: kubernetes plugin not loaded; add a kubernetes block (e.g. `kubernetes cluster.local`) to this server block',
    ]);
  });
});
