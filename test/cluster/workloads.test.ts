import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { buildModel, loadManifests } from '../../src/cluster/load.js';
import type { ClusterModel, EndpointSlice, Pod } from '../../src/cluster/model/model.js';
import { computeTemplateHash, fnv32a, generatedName, safeEncodeString, SAFE_ALPHABET } from '../../src/cluster/emulate/workloads.js';
import { matchesMap, matchesSelector } from '../../src/cluster/model/selector.js';

const FIXTURES = 'test/fixtures/manifests';
const SAFE = `[${SAFE_ALPHABET}]`;

function pods(model: ClusterModel, ns?: string): Pod[] {
  return model.pods.filter((p) => ns === undefined || p.namespace === ns);
}
function podNames(model: ClusterModel, ns?: string): string[] {
  return pods(model, ns).map((p) => p.name);
}
function slicesOf(model: ClusterModel, ns: string, svc: string): EndpointSlice[] {
  return model.endpointSlices.filter((s) => s.namespace === ns && s.serviceName === svc);
}

const deployment = (name: string, replicas: string, extra = ''): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: shop}
spec:
${replicas}  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}, tier: web}}
    spec:
      containers:
      - name: app
        image: app:1
        ports:
        - {name: http, containerPort: 8080}
        - {name: metrics, containerPort: 9090}
        - {name: dns, containerPort: 5353, protocol: UDP}
${extra}`;

describe('Kubernetes name helpers', () => {
  it('FNV-32a and SafeEncodeString behave like Go', () => {
    expect(fnv32a(new Uint8Array())).toBe(0x811c9dc5);
    expect(fnv32a(Buffer.from('a'))).toBe(0xe40c292c);
    expect(fnv32a(Buffer.from('foobar'))).toBe(0xbf9cf968);
    // Digits map to '4'..'9','b','c','d','f': the look of real pod-template-hash values.
    expect(safeEncodeString('0123456789')).toBe('456789bcdf');
  });

  it('computes a template hash of the real form, stable under key order', () => {
    const a = computeTemplateHash({ metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    const b = computeTemplateHash({ spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { app: 'x' } } });
    expect(a).toBe(b);
    expect(a).toMatch(/^[456789bcdf]{1,10}$/);
    expect(computeTemplateHash({ spec: { containers: [{ name: 'c', image: 'j' }] } })).not.toBe(a);
    expect(computeTemplateHash({ a: 1 }, 1)).not.toBe(computeTemplateHash({ a: 1 }));
  });

  it('cuts generated name prefixes to 58 characters', () => {
    expect(generatedName('web-', 'x')).toMatch(new RegExp(`^web-${SAFE}{5}$`));
    const long = generatedName(`${'a'.repeat(70)}-`, 'x');
    expect(long).toHaveLength(63);
  });
});

describe('selectors', () => {
  it('Service selectors are plain maps', () => {
    expect(matchesMap({ app: 'web' }, { app: 'web', tier: 'x' })).toBe(true);
    expect(matchesMap({ app: 'web', tier: 'y' }, { app: 'web', tier: 'x' })).toBe(false);
    expect(matchesMap({}, { app: 'web' })).toBe(true);
  });

  it('workload selectors combine matchLabels and every matchExpressions operator', () => {
    const sel = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In' as const, values: ['front', 'back'] },
        { key: 'env', operator: 'NotIn' as const, values: ['prod'] },
        { key: 'team', operator: 'Exists' as const, values: [] },
        { key: 'canary', operator: 'DoesNotExist' as const, values: [] },
      ],
    };
    const ok = { app: 'web', tier: 'front', team: 'a' };
    expect(matchesSelector(sel, ok)).toBe(true);
    expect(matchesSelector(sel, { ...ok, env: 'dev' })).toBe(true); // NotIn: other value
    expect(matchesSelector(sel, { ...ok, env: 'prod' })).toBe(false);
    expect(matchesSelector(sel, { ...ok, tier: 'middle' })).toBe(false); // In
    expect(matchesSelector(sel, { app: 'web', tier: 'front' })).toBe(false); // Exists
    expect(matchesSelector(sel, { ...ok, canary: '' })).toBe(false); // DoesNotExist
    expect(matchesSelector(sel, { ...ok, app: 'other' })).toBe(false); // matchLabels
  });

  it('decides which dump pods a workload owns (ownerReferences AND selector)', () => {
    const sts = (selector: string): string => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: ${selector}
  template:
    metadata: {labels: {app: db, role: primary}}
    spec: {containers: [{name: db, image: pg}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: db-0
  labels: {app: db, role: primary}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: 0b6f2c4e-0000-4000-8000-000000000003, controller: true}]
spec: {containers: [{name: c, image: i}]}
status: {phase: Running, podIP: 10.244.3.3}
`;
    const owned = buildModel([{ file: 'a.yaml', text: sts('{matchExpressions: [{key: role, operator: In, values: [primary]}]}') }]).model;
    expect(podNames(owned)).toEqual(['db-0']);
    expect(owned.workloads?.[0]).toMatchObject({ kind: 'StatefulSet', hasManifestPods: true, derivedPods: [] });
    // Pod lacks the label the selector requires: the controller would not own it. The template
    // still needs to match, so the selector here matches the template but not the pod.
    const text = sts('{matchLabels: {app: db}, matchExpressions: [{key: role, operator: NotIn, values: [replica]}]}').replace(
      'labels: {app: db, role: primary}\n  ownerReferences',
      'labels: {app: db, role: replica}\n  ownerReferences',
    );
    const released = buildModel([{ file: 'b.yaml', text }]).model;
    expect(released.workloads?.[0]).toMatchObject({ hasManifestPods: false });
    // db-0 is taken by the manifest pod, so the StatefulSet cannot create that ordinal (warned).
    const r = buildModel([{ file: 'b.yaml', text }]);
    expect(r.findings.some((f) => /already exists in the manifests/.test(f.message))).toBe(true);
  });
});

describe('StatefulSet with a headless Service (rendered Helm chart)', () => {
  const { model, findings } = loadManifests([join(FIXTURES, 'helm')]);

  it('derives web-0..2 with hostname and subdomain', () => {
    expect(findings.map((f) => f.code)).toEqual(['kind-unused']); // the chart's ConfigMap
    expect(podNames(model)).toEqual(['web-0', 'web-1', 'web-2']);
    for (const p of model.pods) {
      expect(p).toMatchObject({ namespace: 'default', hostname: p.name, subdomain: 'nginx', phase: 'Running', ready: true, derived: true });
      expect(p.owner).toEqual({ kind: 'StatefulSet', name: 'web' });
      expect(p.labels['statefulset.kubernetes.io/pod-name']).toBe(p.name);
      expect(p.podIPs).toHaveLength(2);
      expect(p.nodeName).toMatch(/^kind-/);
    }
    expect(model.ignoredKinds).toEqual(new Map([['ConfigMap', 1]]));
  });

  it('generates slices with hostnames, resolved named ports and zones', () => {
    const slices = slicesOf(model, 'default', 'nginx');
    expect(slices.map((s) => s.addressType)).toEqual(['IPv4']); // a single-stack headless Service
    const s = slices[0]!;
    expect(s.name).toMatch(new RegExp(`^nginx-${SAFE}{5}$`));
    expect(s.labels).toEqual({
      'app.kubernetes.io/name': 'web',
      'app.kubernetes.io/instance': 'release-name',
      'helm.sh/chart': 'web-0.1.0',
      'kubernetes.io/service-name': 'nginx',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      'service.kubernetes.io/headless': '',
    });
    expect(s.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
    expect(s.endpoints.map((e) => [e.hostname, e.targetRefName, e.ready, e.addresses])).toEqual(model.pods.map((p) => [p.name, p.name, true, [p.podIP]]));
    for (const e of s.endpoints) expect(e.zone).toMatch(/^zone-[abc]$/);
    expect(model.controllerServices).toEqual(new Set(['default/nginx']));
  });
});

describe('Deployment with a ClusterIP Service and named target ports', () => {
  const svc = `apiVersion: v1
kind: Service
metadata: {name: front, namespace: shop}
spec:
  selector: {app: front}
  ports:
  - {name: http, port: 80, targetPort: http}
  - {name: metrics, port: 9090, targetPort: metrics}
  - {name: dns, port: 53, protocol: UDP, targetPort: dns}
  - {name: admin, port: 8443}
`;
  const docs = [
    { file: 'deploy.yaml', text: deployment('front', '  replicas: 3\n') },
    { file: 'svc.yaml', text: svc },
  ];
  const { model } = buildModel(docs);

  it('creates one ReplicaSet and its pods', () => {
    const w = model.workloads!.find((x) => x.kind === 'Deployment')!;
    expect(w.replicaSet).toMatch(/^front-[456789bcdf]{1,10}$/);
    const hash = w.replicaSet!.slice('front-'.length);
    expect(w.derivedPods).toHaveLength(3);
    for (const p of pods(model, 'shop')) {
      expect(p.name).toMatch(new RegExp(`^${w.replicaSet}-${SAFE}{5}$`));
      expect(p.labels).toEqual({ app: 'front', tier: 'web', 'pod-template-hash': hash });
      expect(p.owner).toEqual({ kind: 'ReplicaSet', name: w.replicaSet });
      expect(p.hostname).toBeUndefined();
    }
    // Same input, same names and IPs.
    const again = buildModel(docs).model;
    expect(again.pods.map((p) => [p.name, p.podIPs])).toEqual(model.pods.map((p) => [p.name, p.podIPs]));
  });

  it('resolves named targetPorts by name and protocol, defaults targetPort to port', () => {
    const slices = slicesOf(model, 'shop', 'front');
    // The Service is SingleStack (IPv4 by default), so one slice; the pods are dual-stack.
    expect(slices.map((s) => s.addressType)).toEqual(['IPv4']);
    expect(slices[0]!.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 8080 },
      { name: 'metrics', protocol: 'TCP', port: 9090 },
      { name: 'dns', protocol: 'UDP', port: 5353 },
      { name: 'admin', protocol: 'TCP', port: 8443 },
    ]);
    expect(slices[0]!.endpoints).toHaveLength(3);
    for (const e of slices[0]!.endpoints) {
      expect(e.hostname).toBeUndefined();
      expect(e.targetRefKind).toBe('Pod');
      expect(e.nodeName).toMatch(/^kind-/);
    }
  });

  it('leaves pods that lack a named port out of that port only (separate slice)', () => {
    const other = `apiVersion: v1
kind: Pod
metadata: {name: stray, namespace: shop, labels: {app: front}}
spec: {containers: [{name: c, image: i, ports: [{name: http, containerPort: 7000}]}]}
`;
    const m = buildModel([...docs, { file: 'pod.yaml', text: other }]).model;
    const slices = slicesOf(m, 'shop', 'front');
    expect(slices).toHaveLength(2);
    const strays = slices.find((s) => s.endpoints.some((e) => e.targetRefName === 'stray'))!;
    expect(strays.endpoints).toHaveLength(1);
    expect(strays.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 7000 },
      { name: 'admin', protocol: 'TCP', port: 8443 },
    ]);
    const rest = slices.find((s) => s !== strays)!;
    expect(rest.endpoints).toHaveLength(3);
  });

  it("dual-stack Services get one slice per family with the pods' IPs of that family", () => {
    const dual = svc.replace('spec:\n', 'spec:\n  ipFamilyPolicy: RequireDualStack\n');
    const m = buildModel([docs[0]!, { file: 'svc.yaml', text: dual }]).model;
    const slices = slicesOf(m, 'shop', 'front');
    expect(slices.map((s) => s.addressType)).toEqual(expect.arrayContaining(['IPv4', 'IPv6']));
    expect(slices).toHaveLength(2);
    const v6 = slices.find((s) => s.addressType === 'IPv6')!;
    expect(v6.endpoints.map((e) => e.addresses[0])).toEqual(m.pods.map((p) => p.podIPs[1]));
    for (const p of m.pods) {
      expect(p.podIP).toBe(p.podIPs[0]);
      expect(p.podIPs[0]).toMatch(/^10\.244\./);
      expect(p.podIPs[1]).toMatch(/^fd00:10:244::/);
    }
  });

  it('honours podCIDRs: IPv6 first, or single stack', () => {
    const v6first = buildModel(docs, { podCIDRs: ['fd00:1::/64', '10.1.0.0/16'] }).model;
    for (const p of v6first.pods) {
      expect(p.podIPs[0]).toMatch(/^fd00:1::/);
      expect(p.podIPs[1]).toMatch(/^10\.1\./);
    }
    const v4 = buildModel(docs, { podCIDRs: ['10.1.0.0/16'] }).model;
    for (const p of v4.pods) expect(p.podIPs).toEqual([p.podIP]);
  });

  it('replicas: 0 gives no pods and no endpoints', () => {
    const m = buildModel([
      { file: 'deploy.yaml', text: deployment('front', '  replicas: 0\n') },
      { file: 'svc.yaml', text: svc },
    ]).model;
    expect(m.pods).toEqual([]);
    expect(slicesOf(m, 'shop', 'front')).toEqual([]);
    expect(m.controllerServices).toEqual(new Set(['shop/front']));
  });

  it('default replicas is 1', () => {
    const m = buildModel([{ file: 'deploy.yaml', text: deployment('front', '') }]).model;
    expect(m.pods).toHaveLength(1);
  });
});

describe('DaemonSet, Job, CronJob, ReplicaSet and bare pods', () => {
  const ds = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      containers: [{name: a, image: a}]
`;

  it('runs one DaemonSet pod per node; hostNetwork pods use the node IP', () => {
    const { model } = buildModel([{ file: 'ds.yaml', text: ds }]);
    const byNode = model.pods.map((p) => [p.nodeName, p.podIPs]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(byNode).toEqual([
      ['kind-control-plane', ['172.18.0.2', 'fc00:f853:ccd:e793::2']],
      ['kind-worker', ['172.18.0.3', 'fc00:f853:ccd:e793::3']],
      ['kind-worker2', ['172.18.0.4', 'fc00:f853:ccd:e793::4']],
    ]);
    for (const p of model.pods) expect(p.name).toMatch(new RegExp(`^agent-${SAFE}{5}$`));
  });

  it('uses configured nodes and nodeSelector', () => {
    const nodes = [
      { name: 'n1', addresses: ['192.168.1.1'], zone: 'z1', labels: { gpu: 'true' } },
      { name: 'n2', addresses: ['192.168.1.2'], zone: 'z2' },
    ];
    const sel = ds.replace('hostNetwork: true', 'hostNetwork: true\n      nodeSelector: {gpu: "true"}');
    const { model } = buildModel([{ file: 'ds.yaml', text: sel }], { nodes, podCIDRs: ['10.244.0.0/16'] });
    expect(model.pods.map((p) => [p.nodeName, p.podIPs])).toEqual([['n1', ['192.168.1.1']]]);
    expect(model.nodes?.map((n) => n.name)).toEqual(['n1', 'n2']);
  });

  it('Jobs run parallelism pods (capped by completions); Indexed Jobs get hostnames; CronJobs none', () => {
    const text = `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    metadata: {labels: {app: migrate}}
    spec: {restartPolicy: Never, containers: [{name: m, image: m}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: crunch}
spec:
  parallelism: 4
  completions: 3
  completionMode: Indexed
  template:
    spec: {subdomain: workers, restartPolicy: Never, containers: [{name: c, image: c}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: done}
spec:
  template: {spec: {restartPolicy: Never, containers: [{name: d, image: d}]}}
status:
  conditions: [{type: Complete, status: "True"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template: {spec: {restartPolicy: OnFailure, containers: [{name: n, image: n}]}}
`;
    const { model, findings } = buildModel([{ file: 'jobs.yaml', text }]);
    expect(findings).toEqual([]);
    const names = podNames(model);
    expect(names.filter((n) => n.startsWith('migrate-'))).toHaveLength(1);
    expect(names.filter((n) => n.startsWith('migrate-'))[0]).toMatch(new RegExp(`^migrate-${SAFE}{5}$`));
    const crunch = model.pods.filter((p) => p.name.startsWith('crunch-'));
    expect(crunch.map((p) => p.hostname)).toEqual(['crunch-0', 'crunch-1', 'crunch-2']);
    for (const p of crunch) {
      expect(p.name).toMatch(new RegExp(`^${p.hostname}-${SAFE}{5}$`));
      expect(p.subdomain).toBe('workers');
      expect(p.labels['batch.kubernetes.io/job-name']).toBe('crunch');
    }
    expect(names.some((n) => n.startsWith('done-') || n.startsWith('nightly'))).toBe(false);
    expect(model.workloads?.find((w) => w.kind === 'CronJob')).toMatchObject({ name: 'nightly', derivedPods: [] });
  });

  it('bare pods get IPs; ReplicaSets get pods', () => {
    const text = `apiVersion: v1
kind: Pod
metadata: {name: solo}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: legacy-rs}
spec:
  replicas: 2
  selector: {matchLabels: {app: l}}
  template: {metadata: {labels: {app: l}}, spec: {containers: [{name: c, image: i}]}}
`;
    const { model } = buildModel([{ file: 'x.yaml', text }]);
    const solo = model.pods.find((p) => p.name === 'solo')!;
    expect(solo.derived).toBeUndefined();
    expect(solo.podIPs).toHaveLength(2);
    expect(model.pods.filter((p) => p.owner?.name === 'legacy-rs')).toHaveLength(2);
  });
});

describe('kubectl get -o yaml dump', () => {
  it('keeps a StatefulSet named as a subdomain when it was read from a cluster (a new one is rejected)', () => {
    const sts = (meta: string): string => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db.v1${meta}}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: i}]}
`;
    const fresh = buildModel([{ file: 's.yaml', text: sts('') }]);
    expect(podNames(fresh.model)).toEqual([]); // rejected: not served
    expect(fresh.findings).toEqual([
      expect.objectContaining({
        line: 3,
        severity: 'error',
        message: expect.stringMatching(/^StatefulSet "default\/db\.v1": name "db\.v1" is not a valid DNS-1123 label/),
      }),
    ]);
    const { model, findings } = buildModel([{ file: 's.yaml', text: sts(', uid: 5e0c3f1a-0000-4000-8000-000000000002') }]);
    expect(podNames(model)).toEqual(['db.v1-0']);
    expect(findings).toEqual([expect.objectContaining({ line: 3, severity: 'warning', code: 'invalid-name' })]);
  });

  const { model, findings } = loadManifests([join(FIXTURES, 'dump')]);

  it('derives no pods for workloads whose pods are in the dump', () => {
    expect(findings).toEqual([]);
    expect(model.pods.every((p) => !p.derived)).toBe(true);
    expect(podNames(model)).toEqual(['cart-7d9f8b6c5d-abcde', 'cart-7d9f8b6c5d-fghjk', 'db-0']);
    const byKind = Object.fromEntries(model.workloads!.map((w) => [`${w.kind}/${w.name}`, w]));
    expect(byKind['Deployment/cart']).toMatchObject({ hasManifestPods: true, replicaSet: 'cart-7d9f8b6c5d', derivedPods: [] });
    expect(byKind['ReplicaSet/cart-7d9f8b6c5d']).toMatchObject({ hasManifestPods: true, derivedPods: [] });
    expect(byKind['StatefulSet/db']).toMatchObject({ hasManifestPods: true });
    // Declared IPs are kept; no IPv6 is added to pods that have their status.
    expect(model.pods.map((p) => p.podIPs)).toEqual([['10.244.1.7'], ['10.244.2.9'], ['10.244.1.20']]);
  });

  it("uses the dump's Nodes for zones and its pods' readiness", () => {
    expect(model.nodes?.map((n) => [n.name, n.zone, n.addresses])).toEqual([
      ['worker-a', 'eu-west-1a', ['192.168.0.11']],
      ['worker-b', 'eu-west-1b', ['192.168.0.12']],
    ]);
    const cart = slicesOf(model, 'shop', 'cart');
    expect(cart).toHaveLength(1);
    expect(cart[0]!.endpoints.map((e) => [e.targetRefName, e.ready, e.zone, e.nodeName])).toEqual([
      ['cart-7d9f8b6c5d-abcde', true, 'eu-west-1a', 'worker-a'],
      ['cart-7d9f8b6c5d-fghjk', false, 'eu-west-1b', 'worker-b'],
    ]);
    const db = slicesOf(model, 'shop', 'db')[0]!;
    expect(db.endpoints).toEqual([
      { addresses: ['10.244.1.20'], ready: true, hostname: 'db-0', targetRefName: 'db-0', targetRefKind: 'Pod', zone: 'eu-west-1a', nodeName: 'worker-a' },
    ]);
    expect(db.ports).toEqual([{ name: 'pg', protocol: 'TCP', port: 5432 }]);
  });

  it("derives pods for a Deployment whose ReplicaSet's pods are owned but not in the dump", () => {
    const text = `${deployment('front', '  replicas: 2\n')}---
apiVersion: v1
kind: Pod
metadata:
  name: front-5c7b9d8f4-x2x2x
  namespace: shop
  labels: {app: front, tier: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: front-5c7b9d8f4, uid: 0b6f2c4e-0000-4000-8000-000000000009, controller: true}]
spec: {containers: [{name: c, image: i}]}
status: {phase: Running, podIP: 10.244.9.9}
`;
    const m = buildModel([{ file: 'd.yaml', text }]).model;
    expect(podNames(m)).toEqual(['front-5c7b9d8f4-x2x2x']);
    expect(m.workloads?.[0]).toMatchObject({ replicaSet: 'front-5c7b9d8f4', hasManifestPods: true });
  });
});

describe('readiness', () => {
  const base = `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pending, labels: {app: web}}
spec: {containers: [{name: c, image: i}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: annotated, labels: {app: web}, annotations: {clusterdns.io/ready: "false"}}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: unready, labels: {app: web}}
spec: {containers: [{name: c, image: i}]}
status:
  phase: Running
  podIP: 10.244.7.7
  conditions: [{type: Ready, status: "False"}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, labels: {app: web}}
spec: {containers: [{name: c, image: i}]}
status: {phase: Succeeded, podIP: 10.244.7.8}
---
apiVersion: v1
kind: Pod
metadata: {name: going, labels: {app: web}, deletionTimestamp: "2024-01-01T00:00:00Z"}
spec: {containers: [{name: c, image: i}]}
status: {phase: Running, podIP: 10.244.7.9}
`;
  const readyOf = (m: ClusterModel): Record<string, boolean | undefined> =>
    Object.fromEntries(slicesOf(m, 'default', 'web').flatMap((s) => s.endpoints.map((e) => [e.targetRefName!, e.ready])));

  it('counts pods ready unless status, annotation or option say otherwise', () => {
    const { model } = buildModel([{ file: 'r.yaml', text: base }], { notReady: ['default/web-2'] });
    expect(model.pods.find((p) => p.name === 'pending')).toMatchObject({ ready: false, podIPs: [] });
    // Pending pods without an IP and terminal pods are not endpoints; terminating pods are, not ready.
    expect(readyOf(model)).toEqual({ annotated: false, going: false, unready: false, 'web-0': true, 'web-1': true, 'web-2': false });
  });

  it('notReady accepts globs', () => {
    const { model } = buildModel([{ file: 'r.yaml', text: base }], { notReady: ['*/web-*'] });
    expect(model.pods.filter((p) => p.name.startsWith('web-')).every((p) => p.ready === false)).toBe(true);
    const { model: m2 } = buildModel([{ file: 'r.yaml', text: base }], { notReady: ['web-?'] });
    expect(m2.pods.filter((p) => p.name.startsWith('web-')).every((p) => p.ready === false)).toBe(true);
  });

  it('publishNotReadyAddresses publishes every endpoint as ready', () => {
    const text = base.replace('clusterIP: None', 'clusterIP: None\n  publishNotReadyAddresses: true');
    const { model } = buildModel([{ file: 'r.yaml', text }], { notReady: ['default/web-2'] });
    expect(readyOf(model)).toEqual({ annotated: true, going: true, unready: true, 'web-0': true, 'web-1': true, 'web-2': true });
  });

  it('an annotation on the pod template marks all pods of a workload not ready', () => {
    const text = base.replace('metadata: {labels: {app: web}}', 'metadata: {labels: {app: web}, annotations: {clusterdns.io/ready: "false"}}');
    const { model } = buildModel([{ file: 'r.yaml', text }]);
    expect(model.pods.filter((p) => p.owner?.kind === 'StatefulSet').map((p) => p.ready)).toEqual([false, false, false]);
  });
});

describe('explicit endpoints win', () => {
  it('skips generation when an EndpointSlice or Endpoints exists for the Service', () => {
    const svc = `apiVersion: v1\nkind: Service\nmetadata: {name: front, namespace: shop}\nspec:\n  selector: {app: front}\n  ports: [{name: http, port: 80, targetPort: http}]\n`;
    const slice = `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: front-manual, namespace: shop, labels: {kubernetes.io/service-name: front}}\naddressType: IPv4\nendpoints: [{addresses: [10.9.9.9]}]\n`;
    const eps = `apiVersion: v1\nkind: Endpoints\nmetadata: {name: front, namespace: shop}\nsubsets: [{addresses: [{ip: 10.8.8.8}], ports: [{name: http, port: 80}]}]\n`;
    const d = { file: 'd.yaml', text: deployment('front', '') };
    const a = buildModel([d, { file: 's.yaml', text: svc }, { file: 'e.yaml', text: slice }]).model;
    expect(a.endpointSlices.map((s) => s.name)).toEqual(['front-manual']);
    expect(a.controllerServices?.size).toBe(0);
    const b = buildModel([d, { file: 's.yaml', text: svc }, { file: 'e.yaml', text: eps }]).model;
    expect(b.endpointSlices.map((s) => [s.mirrored, s.endpoints[0]!.addresses[0]])).toEqual([[true, '10.8.8.8']]);
  });

  it('ignores ExternalName Services and Services without selector', () => {
    const text = `apiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: shop}\nspec: {type: ExternalName, externalName: x.example.com, selector: {app: front}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: nosel, namespace: shop}\nspec: {ports: [{port: 80}]}\n`;
    const m = buildModel([
      { file: 'd.yaml', text: deployment('front', '') },
      { file: 's.yaml', text },
    ]).model;
    expect(m.endpointSlices).toEqual([]);
  });
});

describe('allocation stability', () => {
  const docs = [
    { file: 'a.yaml', text: deployment('alpha', '  replicas: 3\n') },
    { file: 'b.yaml', text: deployment('beta', '  replicas: 2\n') },
    {
      file: 'c.yaml',
      text: `apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: gamma, namespace: shop}\nspec:\n  replicas: 2\n  serviceName: gamma\n  selector: {matchLabels: {app: gamma}}\n  template: {metadata: {labels: {app: gamma}}, spec: {containers: [{name: c, image: i}]}}\n`,
    },
    {
      file: 'd.yaml',
      text: `apiVersion: v1\nkind: Service\nmetadata: {name: alpha, namespace: shop}\nspec:\n  selector: {app: alpha}\n  ports: [{name: http, port: 80, targetPort: http}]\n`,
    },
  ];
  const snapshot = (m: ClusterModel): Record<string, unknown> => ({
    pods: m.pods.map((p) => [p.namespace, p.name, p.podIPs, p.nodeName]),
    slices: m.endpointSlices.map((s) => [s.name, s.endpoints.map((e) => e.addresses)]),
    services: m.services.map((s) => [s.name, s.clusterIPs]),
  });

  it('is independent of file order', () => {
    const ref = snapshot(buildModel(docs).model);
    const perms = [
      [3, 2, 1, 0],
      [1, 3, 0, 2],
      [2, 0, 3, 1],
    ];
    for (const perm of perms) expect(snapshot(buildModel(perm.map((i) => docs[i]!)).model)).toEqual(ref);
    // And of document order inside one file.
    const one = { file: 'all.yaml', text: docs.map((d) => d.text).join('---\n') };
    const rev = {
      file: 'all.yaml',
      text: [...docs]
        .reverse()
        .map((d) => d.text)
        .join('---\n'),
    };
    expect(snapshot(buildModel([one]).model)).toEqual(snapshot(buildModel([rev]).model));
    expect(snapshot(buildModel([one]).model)).toEqual(ref);
  });

  it('keeps every derived pod name and IP when a workload is added', () => {
    const before = buildModel(docs).model;
    const after = buildModel([...docs, { file: '0.yaml', text: deployment('aardvark', '  replicas: 5\n') }]).model;
    const keyed = new Map(after.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
    for (const p of before.pods) {
      const q = keyed.get(`${p.namespace}/${p.name}`);
      expect(q, p.name).toBeDefined();
      expect(q!.podIPs).toEqual(p.podIPs);
      expect(q!.nodeName).toEqual(p.nodeName);
    }
    expect(after.pods).toHaveLength(before.pods.length + 5);
    const sliceBefore = before.endpointSlices.map((s) => s.name);
    expect(after.endpointSlices.map((s) => s.name)).toEqual(sliceBefore);
  });

  it('keeps declared pod IPs and probes past them', () => {
    const m = buildModel(docs).model;
    const victim = m.pods[0]!;
    const thief = `apiVersion: v1\nkind: Pod\nmetadata: {name: thief, namespace: other}\nspec: {containers: [{name: c, image: i}]}\nstatus: {phase: Running, podIP: ${victim.podIPs[0]}}\n`;
    const m2 = buildModel([...docs, { file: 't.yaml', text: thief }]).model;
    expect(m2.pods.find((p) => p.name === 'thief')!.podIPs).toEqual([victim.podIPs[0]]);
    const moved = m2.pods.find((p) => p.name === victim.name)!;
    expect(moved.podIPs[0]).not.toBe(victim.podIPs[0]);
    expect(moved.podIPs[1]).toBe(victim.podIPs[1]);
    // Every other pod keeps its address.
    for (const p of m.pods.slice(1)) expect(m2.pods.find((q) => q.name === p.name)!.podIPs).toEqual(p.podIPs);
  });

  it('gives unique pod IPs at scale', () => {
    const m = buildModel([{ file: 'big.yaml', text: deployment('big', '  replicas: 3000\n') }]).model;
    expect(new Set(m.pods.map((p) => p.podIPs[0])).size).toBe(3000);
    expect(new Set(m.pods.map((p) => p.name)).size).toBe(3000);
  });
});
