// CoreDNS plugin/kubernetes/setup_test.go (TestKubernetesParse, API rate limiting), ported. The
// manifests come from --manifests (runtime), as a block without `manifests` reads them.
import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import { repoRoot } from '../../helpers/server.js';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { KubernetesConfig } from '../../../src/plugins/kubernetes/config.js';

const manifests = [path.join(repoRoot, 'examples/manifests')];
const errorsOf = async (body: string) => (await setupBlock(body, { manifests })).errors.join('\n');
const cfgOf = async (body: string) => (await setupPlugin<{ cfg: KubernetesConfig }>(body, 'kubernetes', { manifests })).cfg;

// [should error, input, expected error] in CoreDNS's order.
const table: [boolean, string, RegExp?][] = [
  [false, 'kubernetes coredns.local'],
  [false, 'kubernetes coredns.local test.local'],
  [false, 'kubernetes coredns.local {\n}'],
  [false, 'kubernetes coredns.local {\nendpoint http://localhost:9090 http://localhost:9091\n}'],
  [false, 'kubernetes coredns.local {\nnamespaces demo\n}'],
  [false, 'kubernetes coredns.local {\nnamespaces demo test\n}'],
  [false, 'kubernetes coredns.local {\nlabels environment=prod\n}'],
  [false, 'kubernetes coredns.local {\nlabels environment in (production, staging, qa),application=nginx\n}'],
  [false, 'kubernetes coredns.local {\nnamespace_labels istio-injection=enabled\n}'],
  [
    true,
    'kubernetes coredns.local {\nnamespaces foo bar\nnamespace_labels istio-injection=enabled\n}',
    /namespaces and namespace_labels cannot be used together/,
  ],
  [
    false,
    'kubernetes coredns.local test.local {\nendpoint http://localhost:8080\nnamespaces demo test\nlabels environment in (production, staging, qa),application=nginx\nfallthrough\n}',
  ],
  [true, 'kubernetes coredns.local {\nendpoint\n}', /kubernetes endpoint: wrong number of arguments: 0 given, at least 1 expected/],
  [true, 'kubernetes coredns.local {\nnamespaces\n}', /kubernetes namespaces: wrong number of arguments: 0 given, at least 1 expected/],
  [true, 'kubernetes coredns.local {\nlabels\n}', /kubernetes labels: wrong number of arguments: 0 given, at least 1 expected/],
  [true, 'kubernetes coredns.local {\nlabels environment in (production, qa\n}', /kubernetes labels: /],
  [false, 'kubernetes coredns.local {\npods disabled\n}'],
  [false, 'kubernetes coredns.local {\npods insecure\n}'],
  [false, 'kubernetes coredns.local {\npods verified\n}'],
  [true, 'kubernetes coredns.local {\npods giant_seed\n}', /kubernetes pods: mode "giant_seed" is not one of disabled, insecure or verified/],
  [false, 'kubernetes coredns.local {\nfallthrough ip6.arpa inaddr.arpa foo.com\n}'],
  [true, 'kubernetes coredns.local\nkubernetes cluster.local', /appears twice/],
  [
    true,
    'kubernetes coredns.local {\nkubeconfig\n}',
    /kubernetes kubeconfig: wrong number of arguments: 0 given, 1 to 2 expected; usage `kubeconfig KUBECONFIG \[CONTEXT\]`/,
  ],
  [true, 'kubernetes coredns.local {\nkubeconfig file context extraarg\n}', /kubernetes kubeconfig: wrong number of arguments: 3 given, 1 to 2 expected/],
  [false, 'kubernetes coredns.local {\nkubeconfig file\n}'],
  [false, 'kubernetes coredns.local {\nkubeconfig file context\n}'],
  [false, 'kubernetes coredns.local {\nkubeconfig file context\nstartup_timeout 1s\n}'],
  [false, 'kubernetes coredns.local {\nendpoint_pod_names\n}'],
  [true, 'kubernetes coredns.local {\nendpoint_pod_names giant_seed\n}', /endpoint_pod_names takes no arguments/],
  [false, 'kubernetes coredns.local {\nnoendpoints\n}'],
  [true, 'kubernetes coredns.local {\nnoendpoints ixnay on the endpointsay\n}', /noendpoints takes no arguments/],
  [false, 'kubernetes coredns.local {\nignore empty_service\n}'],
  [true, 'kubernetes coredns.local {\nignore ixnay on the endpointsay\n}', /kubernetes ignore: value "ixnay" is not one of empty_service/],
  [false, 'kubernetes coredns.local {\nignore empty_service ixnay on the endpointsay\n}'],
  [false, 'kubernetes coredns.local clusterset.local {\nmulticluster clusterset.local\n}'],
  [true, 'kubernetes coredns.local {\nmulticluster clusterset.local\n}', /kubernetes multicluster: zone clusterset.local. is not one of the plugin's zones/],
  [
    true,
    'kubernetes coredns.local clusterset.local {\nmulticluster clusterset.local test.local\n}',
    /kubernetes multicluster: zone test.local. is not one of the plugin's zones/,
  ],
  [false, 'kubernetes coredns.local {\nmulticluster\n}'],
  // TestKubernetesParseAPIRateLimiting
  [false, 'kubernetes coredns.local {\napiserver_qps 50.0\napiserver_burst 100\napiserver_max_inflight 25\n}'],
  [true, 'kubernetes coredns.local {\napiserver_qps -10\n}', /kubernetes apiserver_qps: N must be at least 0: -10/],
  [true, 'kubernetes coredns.local {\napiserver_burst -5\n}', /kubernetes apiserver_burst: N must be at least 0: -5/],
  [true, 'kubernetes coredns.local {\napiserver_max_inflight -1\n}', /kubernetes apiserver_max_inflight: N must be at least 0: -1/],
  // And the rest of the connection options' arguments.
  [true, 'kubernetes coredns.local {\ntls a b\n}', /kubernetes tls: wrong number of arguments: 2 given, 3 expected; usage `tls CERT KEY CACERT`/],
  [true, 'kubernetes coredns.local {\nstartup_timeout soon\n}', /startup_timeout: "soon" is not a duration/],
  [true, 'kubernetes coredns.local {\nmanifests ""\n}', /manifests: a path is empty/],
];

const emptyLabel = "zone in key 'bad..zone' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)";
const options =
  'pods, ttl, namespaces, namespace_labels, labels, endpoint_pod_names, noendpoints, fallthrough, ignore, multicluster, zonal, ' +
  'manifests, watch, endpoint, tls, kubeconfig, apiserver_qps, apiserver_burst, apiserver_max_inflight, startup_timeout';

// Every error of setup.ts without a row above, word for word (`line: reason`; the block's first
// line is line 2).
const rejected: [string, string][] = [
  ['kubernetes in-addr.arpa ip6.arpa', '2: kubernetes needs at least one zone that is not in-addr.arpa or ip6.arpa (e.g. cluster.local)'],
  ['kubernetes bad..zone', `2: kubernetes: bad zone "bad..zone": ${emptyLabel}`],
  ['kubernetes coredns.local {\nnoendpoints\nzonal\n}', '2: kubernetes: zonal needs endpoints; remove noendpoints or zonal'],
  ['kubernetes coredns.local {\npods\n}', '3: kubernetes pods: wrong number of arguments: 0 given, 1 expected; usage `pods disabled|insecure|verified`'],
  [
    'kubernetes coredns.local {\npods insecure verified\n}',
    '3: kubernetes pods: wrong number of arguments: 2 given, 1 expected; usage `pods disabled|insecure|verified`',
  ],
  ['kubernetes coredns.local {\nttl\n}', '3: kubernetes ttl: wrong number of arguments: 0 given, 1 expected; usage `ttl SECONDS`, e.g. `ttl 30`'],
  ['kubernetes coredns.local {\nttl 3601\n}', '3: kubernetes ttl: ttl must be in range [0, 3600]: 3601'],
  ['kubernetes coredns.local {\nttl -1\n}', '3: kubernetes ttl: ttl must be in range [0, 3600]: -1'],
  ['kubernetes coredns.local {\nttl 5s\n}', '3: kubernetes ttl: ttl "5s" is not an integer'],
  [
    'kubernetes coredns.local {\nnamespace_labels\n}',
    '3: kubernetes namespace_labels: wrong number of arguments: 0 given, at least 1 expected; usage `namespace_labels SELECTOR`, e.g. `namespace_labels team=dns`',
  ],
  [
    'kubernetes coredns.local {\nnamespace_labels a in (b\n}',
    '3: kubernetes namespace_labels: invalid label selector term "a in (b": use key=value, key!=value, key in (a,b), key notin (a,b), key or !key',
  ],
  ['kubernetes coredns.local {\nzonal on\n}', '3: kubernetes zonal takes no arguments, got "on"'],
  ['kubernetes coredns.local {\nfallthrough bad..zone\n}', `3: fallthrough: bad zone "bad..zone": ${emptyLabel}`],
  [
    'kubernetes coredns.local {\nmanifests\n}',
    '3: kubernetes manifests: wrong number of arguments: 0 given, at least 1 expected; usage `manifests PATH...`, e.g. `manifests ./manifests`',
  ],
  ['kubernetes coredns.local {\nwatch\n}', '3: kubernetes watch: wrong number of arguments: 0 given, 1 expected; usage `watch DURATION`, e.g. `watch 2s`'],
  ['kubernetes coredns.local {\nwatch often\n}', '3: kubernetes watch: "often" is not a duration; write e.g. 500ms, 2s, 1m or 0 to disable'],
  ['kubernetes coredns.local {\nwatch -1s\n}', '3: kubernetes watch: "-1s" must not be negative'],
  [
    'kubernetes coredns.local {\nstartup_timeout\n}',
    '3: kubernetes startup_timeout: wrong number of arguments: 0 given, 1 expected; usage `startup_timeout DURATION`',
  ],
  ['kubernetes coredns.local {\napiserver_qps\n}', '3: kubernetes apiserver_qps: wrong number of arguments: 0 given, 1 expected; usage `apiserver_qps N`'],
  [
    'kubernetes coredns.local {\napiserver_burst 1 2\n}',
    '3: kubernetes apiserver_burst: wrong number of arguments: 2 given, 1 expected; usage `apiserver_burst N`',
  ],
  ['kubernetes coredns.local {\napiserver_qps fast\n}', '3: kubernetes apiserver_qps: N "fast" is not a number'],
  ['kubernetes coredns.local {\napiserver_max_inflight 2.5\n}', '3: kubernetes apiserver_max_inflight: N "2.5" is not an integer'],
  ['kubernetes coredns.local {\nresyncperiod 30s\n}', `3: unknown kubernetes option "resyncperiod"; valid options: ${options}`],
];

describe('kubernetes setup (CoreDNS setup_test.go)', () => {
  it.each(rejected)('rejects %j', async (body, error) => {
    expect((await setupBlock(body, { manifests })).errors).toEqual([error]);
  });

  it('rejects a block with no manifests to serve', async () => {
    expect((await setupBlock('kubernetes coredns.local', { manifests: [] })).errors).toEqual([
      '2: kubernetes has no manifests to serve: pass --manifests PATH or add `manifests PATH` to this block',
    ]);
  });

  it.each(table)('error %s: %j', async (shouldErr, body, reason) => {
    const errors = await errorsOf(body);
    if (shouldErr) expect(errors).toMatch(reason!);
    else expect(errors).toBe('');
  });

  it('reads what the accepted lines set', async () => {
    expect((await cfgOf('kubernetes coredns.local test.local')).zones).toEqual(['coredns.local.', 'test.local.']);
    expect([...(await cfgOf('kubernetes coredns.local {\nnamespaces demo test\n}')).namespaces]).toEqual(['demo', 'test']);
    expect((await cfgOf('kubernetes coredns.local {\nignore empty_service ixnay\n}')).ignoreEmptyService).toBe(true);
    expect((await cfgOf('kubernetes coredns.local {\nmulticluster\n}')).multicluster).toEqual([]);
    expect((await cfgOf('kubernetes coredns.local {\nfallthrough ip6.arpa inaddr.arpa foo.com\n}')).fallthrough).toEqual([
      'ip6.arpa.',
      'inaddr.arpa.',
      'foo.com.',
    ]);
  });

  it('accepts a zone outside the server block, as CoreDNS does', async () => {
    expect((await setupBlock('kubernetes cluster.local', { key: 'example.org', manifests })).errors).toEqual([]);
  });
});
