// The k8s_gateway plugin's setup_test.go (github.com/k8s-gateway/k8s_gateway), ported, and every
// error of setup.ts word for word. The manifests come from --manifests unless a row names them.
import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import { repoRoot } from '../../helpers/server.js';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { K8sGatewayConfig } from '../../../src/plugins/k8s_gateway/config.js';

const manifests = [path.join(repoRoot, 'examples/manifests')];
const cfgOf = async (body: string) => (await setupPlugin<{ cfg: K8sGatewayConfig }>(body, 'k8s_gateway', { manifests })).cfg;
const defaults: K8sGatewayConfig = {
  zones: ['example.org.'],
  resources: ['Ingress', 'Service'],
  ingressClasses: [],
  gatewayClasses: [],
  ttl: 60,
  apex: 'dns1.kube-system',
  secondary: '',
  watchMs: 2000,
};

describe('k8s_gateway setup (setup_test.go)', () => {
  it.each<[string, Partial<K8sGatewayConfig>]>([
    ['k8s_gateway', { zones: ['.'] }],
    ['k8s_gateway example.org', {}],
    ['k8s_gateway example.org {\n  resources Ingress\n}', { resources: ['Ingress'] }],
    ['k8s_gateway example.org {\n  resources HTTPRoute Service HTTPRoute\n}', { resources: ['HTTPRoute', 'Service'] }],
    ['k8s_gateway example.org {\n  ingressClasses nginx public\n}', { ingressClasses: ['nginx', 'public'] }],
    ['k8s_gateway example.org {\n  gatewayClasses cilium\n}', { gatewayClasses: ['cilium'] }],
    ['k8s_gateway example.org {\n  ttl 30\n}', { ttl: 30 }],
    ['k8s_gateway example.org {\n  ttl 0\n}', { ttl: 0 }],
    ['k8s_gateway example.org {\n  apex Exdns-K8s-Gateway.kube-system.\n}', { apex: 'exdns-k8s-gateway.kube-system' }],
    ['k8s_gateway example.org {\n  secondary dns2.kube-system\n}', { secondary: 'dns2.kube-system' }],
    ['k8s_gateway example.org {\n  fallthrough\n}', { fallthrough: [] }],
    ['k8s_gateway example.org {\n  fallthrough foo.com\n}', { fallthrough: ['foo.com.'] }],
    ['k8s_gateway example.org {\n  watch 500ms\n}', { watchMs: 500 }],
    ['k8s_gateway example.org {\n  watch 0\n}', { watchMs: 0 }],
    ['k8s_gateway example.org {\n  maxRecords 64\n}', { maxRecords: 64 }],
    ['k8s_gateway example.org {\n  maxHostnameLookups 4\n}', { maxHostnameLookups: 4 }],
    ['k8s_gateway example.org {\n  kubeconfig /etc/kubeconfig\n}', {}],
    ['k8s_gateway example.org {\n  kubeconfig /etc/kubeconfig context\n}', {}],
    [`k8s_gateway example.org {\n  manifests ${manifests[0]}\n}`, { manifests }],
    // TestServiceLabelSelectorParsing: each selector as labels.Parse(...).String() writes it.
    ['k8s_gateway example.org {\n  serviceLabelSelectors "app=service1"\n}', { serviceLabelSelectors: ['app=service1'] }],
    ['k8s_gateway example.org {\n  serviceLabelSelectors "app in (service1,service2)"\n}', { serviceLabelSelectors: ['app in (service1,service2)'] }],
    ['k8s_gateway example.org {\n  serviceLabelSelectors "app=service1,tier!=cache"\n}', { serviceLabelSelectors: ['app=service1,tier!=cache'] }],
    ['k8s_gateway example.org {\n  serviceLabelSelectors "app=service1" "app=service2"\n}', { serviceLabelSelectors: ['app=service1', 'app=service2'] }],
    ['k8s_gateway example.org {\n  serviceLabelSelectors "app = service1"\n}', { serviceLabelSelectors: ['app=service1'] }],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "app=service1,tier=frontend" "app=service2,tier=backend"\n}',
      { serviceLabelSelectors: ['app=service1,tier=frontend', 'app=service2,tier=backend'] },
    ],
    // Sorted by key, values of a set sorted; every operator labels.Parse knows.
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "tier notin (b,a),!legacy,app.kubernetes.io/name==web,replicas>2,env"\n}',
      {
        serviceLabelSelectors: ['app.kubernetes.io/name==web,env,!legacy,replicas>2,tier notin (a,b)'],
      },
    ],
  ])('accepts %j', async (body, want) => {
    expect(await cfgOf(body)).toEqual({ ...defaults, ...want });
  });

  // `line: reason`; the block's first line is line 2.
  it.each([
    [
      'k8s_gateway example.org {\n  resources\n}',
      '3: k8s_gateway resources: wrong number of arguments: 0 given, at least 1 expected; usage `resources HTTPRoute|TLSRoute|GRPCRoute|Ingress|Service|DNSEndpoint...`, e.g. `resources Ingress Service`',
    ],
    [
      'k8s_gateway example.org {\n  resources Ingress Widget\n}',
      '3: k8s_gateway resources: unknown resource "Widget"; supported: HTTPRoute, TLSRoute, GRPCRoute, Ingress, Service, DNSEndpoint',
    ],
    [
      'k8s_gateway example.org {\n  ingressClasses\n}',
      '3: k8s_gateway ingressClasses: wrong number of arguments: 0 given, at least 1 expected; usage `ingressClasses CLASS...`, e.g. `ingressClasses nginx`',
    ],
    [
      'k8s_gateway example.org {\n  gatewayClasses\n}',
      '3: k8s_gateway gatewayClasses: wrong number of arguments: 0 given, at least 1 expected; usage `gatewayClasses CLASS...`, e.g. `gatewayClasses envoy`',
    ],
    ['k8s_gateway example.org {\n  ttl\n}', '3: k8s_gateway ttl: wrong number of arguments: 0 given, at least 1 expected; usage `ttl SECONDS`, e.g. `ttl 60`'],
    ['k8s_gateway example.org {\n  ttl x\n}', '3: k8s_gateway ttl: ttl "x" is not an integer'],
    ['k8s_gateway example.org {\n  ttl -1\n}', '3: k8s_gateway ttl: ttl must be in range [0, 3600]: -1'],
    ['k8s_gateway example.org {\n  ttl 3601\n}', '3: k8s_gateway ttl: ttl must be in range [0, 3600]: 3601'],
    [
      'k8s_gateway example.org {\n  apex\n}',
      '3: k8s_gateway apex: wrong number of arguments: 0 given, at least 1 expected; usage `apex NAME`, e.g. `apex exdns-k8s-gateway.kube-system`',
    ],
    [
      'k8s_gateway example.org {\n  secondary\n}',
      '3: k8s_gateway secondary: wrong number of arguments: 0 given, at least 1 expected; usage `secondary NAME`, e.g. `secondary exdns-2`',
    ],
    [
      'k8s_gateway example.org {\n  manifests\n}',
      '3: k8s_gateway manifests: wrong number of arguments: 0 given, at least 1 expected; usage `manifests PATH...`, e.g. `manifests ./manifests`',
    ],
    ['k8s_gateway example.org {\n  watch\n}', '3: k8s_gateway watch: wrong number of arguments: 0 given, 1 expected; usage `watch DURATION`, e.g. `watch 2s`'],
    ['k8s_gateway example.org {\n  watch often\n}', '3: k8s_gateway watch: "often" is not a duration; write e.g. 500ms, 2s or 0 to disable'],
    ['k8s_gateway example.org {\n  watch -1s\n}', '3: k8s_gateway watch: "-1s" must not be negative'],
    [
      'k8s_gateway example.org {\n  kubeconfig\n}',
      '3: k8s_gateway kubeconfig: wrong number of arguments: 0 given, at least 1 expected; usage `kubeconfig FILE [CONTEXT]`',
    ],
    [
      'k8s_gateway example.org {\n  nope 1\n}',
      '3: unknown k8s_gateway option "nope"; valid options: resources, ingressClasses, gatewayClasses, serviceLabelSelectors, ttl, apex, secondary, ' +
        'fallthrough, manifests, watch, kubeconfig, maxRecords, maxHostnameLookups',
    ],
    [
      'k8s_gateway example.org {\n  maxRecords\n}',
      '3: k8s_gateway maxRecords: wrong number of arguments: 0 given, 1 expected; usage `maxRecords COUNT`, e.g. `maxRecords 1000`',
    ],
    ['k8s_gateway example.org {\n  maxRecords 0\n}', '3: k8s_gateway maxRecords: COUNT must be in range [1, 65535]: 0'],
    ['k8s_gateway example.org {\n  maxRecords 1e3\n}', '3: k8s_gateway maxRecords: COUNT "1e3" is not an integer'],
    ['k8s_gateway example.org {\n  maxHostnameLookups 1001\n}', '3: k8s_gateway maxHostnameLookups: COUNT must be in range [1, 1000]: 1001'],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors\n}',
      '3: k8s_gateway serviceLabelSelectors: wrong number of arguments: 0 given, at least 1 expected; usage `serviceLabelSelectors SELECTOR...`, e.g. `serviceLabelSelectors "app=web,tier!=cache"`',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors ""\n}',
      '3: k8s_gateway serviceLabelSelectors: an empty selector would select every Service; remove it or write one such as app=web',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "" "app=service1"\n}',
      '3: k8s_gateway serviceLabelSelectors: an empty selector would select every Service; remove it or write one such as app=web',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "!!!invalid"\n}',
      '3: k8s_gateway serviceLabelSelectors: "!!!invalid" is not a label selector: expected a label key, found "!"; ' +
        'write e.g. app=web or "tier in (frontend,api)"',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "app in ()"\n}',
      '3: k8s_gateway serviceLabelSelectors: "app in ()" is not a label selector: "app in ()": the set of values must not be empty; ' +
        'write e.g. app=web or "tier in (frontend,api)"',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "-app=web"\n}',
      '3: k8s_gateway serviceLabelSelectors: "-app=web" is not a label selector: key "-app": the name must be 1 to 63 letters, digits, "-", "_" or ".", ' +
        'starting and ending with a letter or digit; write e.g. app=web or "tier in (frontend,api)"',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "app=web app=api"\n}',
      '3: k8s_gateway serviceLabelSelectors: "app=web app=api" is not a label selector: expected "," between requirements, found "app"; ' +
        'write e.g. app=web or "tier in (frontend,api)"',
    ],
    [
      'k8s_gateway example.org {\n  serviceLabelSelectors "replicas>two"\n}',
      '3: k8s_gateway serviceLabelSelectors: "replicas>two" is not a label selector: "replicas>" needs an integer, found "two"; ' +
        'write e.g. app=web or "tier in (frontend,api)"',
    ],
    [
      'k8s_gateway bad..zone',
      `2: k8s_gateway: bad zone "bad..zone": zone in key 'bad..zone' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)`,
    ],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body, { manifests })).errors).toEqual([error]);
  });

  it('rejects a block with no manifests to read', async () => {
    expect((await setupBlock('k8s_gateway example.org', { manifests: [] })).errors).toEqual([
      '2: k8s_gateway has no manifests to read: pass --manifests PATH or add `manifests PATH` to its block',
    ]);
  });
});

describe('serviceLabelSelectors matching (labels.Requirement.Matches)', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['app=web', { app: 'web' }, true],
    ['app=web', {}, false],
    ['app!=web', {}, true],
    ['app!=web', { app: 'web' }, false],
    ['tier notin (cache)', {}, true],
    ['tier in (web,api)', { tier: 'api' }, true],
    ['tier in (web,api)', {}, false],
    ['team=edge,!internal', { team: 'edge' }, true],
    ['team=edge,!internal', { team: 'edge', internal: 'true' }, false],
    ['replicas>2', { replicas: '3' }, true],
    ['replicas>2', { replicas: 'three' }, false],
    ['replicas<2', {}, false],
    ['app=', { app: '' }, true],
  ])('%s on %j is %s', async (text, labels, want) => {
    const { parseLabelSelector } = await import('../../../src/plugins/k8s_gateway/selector.js');
    const { matchesSelector } = await import('../../../src/cluster/model/selector.js');
    expect(matchesSelector(parseLabelSelector(text).selector, labels)).toBe(want);
  });
});
