import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildModel, loadManifests, ManifestError } from '../../src/cluster/load.js';
import type { ClusterModel, Service } from '../../src/cluster/model/model.js';
import type { Finding } from '../../src/cluster/model/finding.js';

const EXAMPLES = 'examples/manifests';
const FIXTURES = 'test/fixtures/manifests';

function exampleDocs(): { file: string; text: string }[] {
  return readdirSync(EXAMPLES)
    .sort()
    .map((f) => ({ file: join(EXAMPLES, f), text: readFileSync(join(EXAMPLES, f), 'utf8') }));
}

function svc(model: ClusterModel, ns: string, name: string): Service {
  const s = model.services.find((x) => x.namespace === ns && x.name === name);
  if (!s) throw new Error(`no service ${ns}/${name}`);
  return s;
}

function ipsOf(model: ClusterModel): Record<string, readonly string[]> {
  return Object.fromEntries(model.services.map((s) => [`${s.namespace}/${s.name}`, s.clusterIPs]));
}

/**
 * Builds a model expected to have errors (objects the API server would reject, left out; or a
 * ManifestError for what no object owns); returns its errors and warnings.
 */
function failing(docs: { file: string; text: string }[], options?: Parameters<typeof buildModel>[1]): Finding[] {
  let findings: readonly Finding[];
  try {
    findings = buildModel(docs, options).findings;
  } catch (e) {
    expect(e).toBeInstanceOf(ManifestError);
    findings = (e as ManifestError).findings;
  }
  if (!findings.some((f) => f.severity === 'error')) throw new Error('expected an error');
  return findings.filter((f) => f.severity !== 'info');
}

function service(name: string, ns = 'default', spec = ''): string {
  return `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  ports:\n  - port: 80\n${spec}`;
}

function ipOffset(ip: string): number {
  const p = ip.split('.').map(Number);
  return ((p[0]! * 256 + p[1]!) * 256 + p[2]!) * 256 + p[3]!;
}

describe('examples/manifests', () => {
  const { model, findings } = loadManifests([EXAMPLES]);

  it('loads without findings', () => {
    expect(findings).toEqual([]);
    expect(model.objectCount).toBe(20);
  });

  it('has the namespaces with their labels', () => {
    expect([...model.namespaces.keys()]).toEqual(['apps', 'default', 'kube-system']);
    expect(model.namespaces.get('apps')?.labels).toEqual({ team: 'web', environment: 'staging', 'kubernetes.io/metadata.name': 'apps' });
    expect(model.namespaces.get('default')?.source).toEqual({ file: join(EXAMPLES, 'default.yaml'), line: 2 });
  });

  it('has every service with its final IPs', () => {
    const nginxBasic = svc(model, 'default', 'nginx-basic').clusterIPs[0]!;
    const db = svc(model, 'apps', 'db').clusterIPs[0]!;
    expect(ipsOf(model)).toEqual({
      'apps/db': [db],
      'apps/dual': ['10.96.100.100', 'fd00:10:96::100'],
      'apps/legacy': ['10.96.200.20'],
      'apps/nginx': ['None'],
      'apps/search': [],
      'default/kubernetes': ['10.96.0.1'],
      'default/nginx-basic': [nginxBasic],
      'kube-system/kube-dns': ['10.96.0.10'],
    });
    // Allocated from the dynamic band of 10.96.0.0/12 (above the 256-address static band).
    expect(nginxBasic).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\./);
    expect(ipOffset(nginxBasic) - ipOffset('10.96.0.0')).toBeGreaterThan(256);
    expect(nginxBasic).toBe('10.108.95.168'); // stable across runs
  });

  it('reads service details', () => {
    const dns = svc(model, 'kube-system', 'kube-dns');
    expect(dns.ports).toEqual([
      { name: 'dns', protocol: 'UDP', port: 53, targetPort: 53 },
      { name: 'dns-tcp', protocol: 'TCP', port: 53, targetPort: 53 },
      { name: 'metrics', protocol: 'TCP', port: 9153, targetPort: 9153 },
    ]);
    expect(dns.source).toEqual({ file: join(EXAMPLES, 'kube-system.yaml'), line: 6 });
    expect(dns.selector).toEqual({ 'k8s-app': 'kube-dns' });
    const nginx = svc(model, 'apps', 'nginx');
    expect(nginx.headless).toBe(true);
    expect(nginx.type).toBe('ClusterIP');
    const search = svc(model, 'apps', 'search');
    expect(search).toMatchObject({ type: 'ExternalName', externalName: 'www.example.com', clusterIPs: [], ipFamilies: [], headless: false });
    const dual = svc(model, 'apps', 'dual');
    expect(dual.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(dual.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
    expect(svc(model, 'default', 'kubernetes').ports).toEqual([{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }]);
  });

  it('has the explicit and mirrored endpoint slices', () => {
    expect(model.endpointSlices.map((s) => `${s.namespace}/${s.serviceName}:${s.mirrored}`)).toEqual([
      'apps/db:false', // generated from the db StatefulSet
      'apps/dual:false', // generated from the dual Deployment: one slice per family
      'apps/dual:false',
      'apps/legacy:true',
      'apps/nginx:false',
      'default/nginx-basic:false', // generated by the endpoints controller from the nginx Deployment
      'kube-system/kube-dns:false',
    ]);
    const dns = model.endpointSlices.find((s) => s.serviceName === 'kube-dns')!;
    expect(dns.endpoints.map((e) => [e.addresses, e.ready, e.targetRefName])).toEqual([
      [['10.244.0.2'], true, 'coredns-5d78c9869d-8xqzt'],
      [['10.244.0.3'], true, 'coredns-5d78c9869d-vj4rl'],
    ]);
    const nginx = model.endpointSlices.find((s) => s.serviceName === 'nginx')!;
    expect(nginx.endpoints.map((e) => [e.hostname, e.ready])).toEqual([
      ['web-0', true],
      ['web-1', true],
      ['web-2', false],
    ]);
    expect(nginx.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80 }]);
    const legacy = model.endpointSlices.find((s) => s.serviceName === 'legacy')!;
    expect(legacy.endpoints).toEqual([
      { addresses: ['192.168.10.5'], ready: true, hostname: 'db-primary' },
      { addresses: ['192.168.10.6'], ready: false },
    ]);
    expect(legacy.source).toEqual({ file: join(EXAMPLES, 'legacy-list.yaml'), line: 28 });
  });

  it('reads pods from a JSON PodList', () => {
    expect(model.pods.filter((p) => !p.derived).map((p) => `${p.namespace}/${p.name}=${p.podIP}`)).toEqual([
      'apps/web-0=10.244.1.10',
      'apps/web-1=10.244.2.11',
      'kube-system/coredns-5d78c9869d-8xqzt=10.244.0.2',
    ]);
    const web0 = model.pods.find((p) => p.name === 'web-0')!;
    expect(web0).toMatchObject({ hostname: 'web-0', subdomain: 'nginx', nodeName: 'worker-1', phase: 'Running', deleting: false, hostNetwork: false });
    expect(web0.source).toEqual({ file: join(EXAMPLES, 'pods.json'), line: 5 });
  });

  it('gives List items their own line', () => {
    expect(svc(model, 'apps', 'legacy').source).toEqual({ file: join(EXAMPLES, 'legacy-list.yaml'), line: 5 });
  });

  it('does not depend on file or document order', () => {
    const docs = exampleDocs();
    const reference = buildModel(docs).model;
    const reversed = buildModel([...docs].reverse()).model;
    const rotated = buildModel([...docs.slice(2), ...docs.slice(0, 2)]).model;
    // Documents inside a file reversed too.
    const shuffledDocs = docs.map((d) =>
      d.file.endsWith('.yaml') && !d.file.includes('list') ? { ...d, text: d.text.split(/^---$/m).reverse().join('\n---\n') } : d,
    );
    const shuffled = buildModel(shuffledDocs.reverse()).model;
    for (const m of [reversed, rotated, shuffled]) {
      expect(ipsOf(m)).toEqual(ipsOf(reference));
      expect(m.services.map((s) => s.name)).toEqual(reference.services.map((s) => s.name));
      expect(m.endpointSlices.map((s) => s.name)).toEqual(reference.endpointSlices.map((s) => s.name));
    }
    expect(ipsOf(reference)).toEqual(ipsOf(model));
  });
});

describe('manifest files', () => {
  it('walks directories recursively, sorted, skipping hidden entries and other extensions', () => {
    const { model } = loadManifests([join(FIXTURES, 'walk')]);
    expect(model.services.map((s) => `${s.name} ${s.source.file}:${s.source.line}`)).toEqual([
      `walk-a ${join(FIXTURES, 'walk/a.yaml')}:1`,
      `walk-b ${join(FIXTURES, 'walk/nested/b.yml')}:3`,
      `walk-c ${join(FIXTURES, 'walk/nested/deeper/c.json')}:1`,
    ]);
    expect(model.objectCount).toBe(3);
    expect([...model.namespaces.keys()]).toEqual(['walk']);
    expect(model.namespaces.get('walk')?.source).toBeUndefined();
  });

  it('accepts files named explicitly and mixes paths', () => {
    const { model } = loadManifests([join(FIXTURES, 'walk/nested/b.yml'), join(EXAMPLES, 'default.yaml')]);
    expect(model.services.map((s) => s.name)).toEqual(['kubernetes', 'nginx-basic', 'walk-b']);
    expect(model.objectCount).toBe(5);
  });

  it('reports a missing path', () => {
    expect(() => loadManifests([join(FIXTURES, 'does-not-exist')])).toThrow(/does-not-exist: manifest path does not exist; check the --manifests flag/);
  });

  it('reads typed lists whose items name no kind', () => {
    const text = `apiVersion: v1
kind: ServiceList
items:
- metadata: {name: one}
  spec: {ports: [{port: 1}]}
-
  metadata: {name: two}
  spec: {clusterIP: None}
`;
    const { model } = buildModel([{ file: 'list.yaml', text }]);
    expect(model.services.map((s) => [s.name, s.source.line, s.headless])).toEqual([
      ['one', 4, false],
      ['two', 7, true],
    ]);
  });

  it('reads a JSON List', () => {
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'j' } }] }, null, 2);
    const { model } = buildModel([{ file: 'x.json', text }]);
    expect(model.namespaces.get('j')?.source).toEqual({ file: 'x.json', line: 5 });
  });

  it('ignores empty documents and counts ignored kinds', () => {
    const text = `---\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: cfg}\ndata: {a: b}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "system:coredns"}\n---\n`;
    const { model } = buildModel([{ file: 'x.yaml', text }]);
    expect(model.objectCount).toBe(2);
    expect(model.services).toEqual([]);
    expect([...model.namespaces.keys()]).toEqual(['cfg']);
  });

  it('reads values as Kubernetes does for the fields that matter', () => {
    const text =
      service('quoted', 'default', '  clusterIP: "None"\n') + '\n---\n' + service('plain', 'default', '  clusterIP: None\n  publishNotReadyAddresses: true\n');
    const { model } = buildModel([{ file: 'x.yaml', text }]);
    expect(svc(model, 'default', 'quoted').headless).toBe(true);
    expect(svc(model, 'default', 'plain')).toMatchObject({ headless: true, clusterIPs: ['None'], publishNotReadyAddresses: true });
    expect(svc(model, 'default', 'plain').ports[0]!.port).toBe(80);
  });

  it('ignores same-named kinds from other API groups', () => {
    const text = `apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: Not_A_DNS_Label}\n---\napiVersion: v1\nkind: EndpointSlice\nmetadata: {name: wrong-group}\n`;
    const { model, findings } = buildModel([{ file: 'x.yaml', text }]);
    expect(model.services).toEqual([]);
    expect(model.endpointSlices).toEqual([]);
    expect(model.objectCount).toBe(2);
    // Neither group serves that kind: both are rejected as kubectl rejects them, with the kind meant.
    expect(findings.map((f) => [f.line, f.severity, f.code])).toEqual([
      [2, 'error', 'unknown-kind'], // at the kind's line
      [6, 'error', 'unknown-kind'],
    ]);
    expect(findings[1]!.message).toMatch(/no matches for kind "EndpointSlice" in version "v1"; did you mean EndpointSlice in discovery\.k8s\.io\/v1\?/);
  });
});

describe('defaults', () => {
  it('applies namespace, type, protocol and pod defaults', () => {
    const text = `apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  ports: [{port: 53, name: dns}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: q, deletionTimestamp: "2024-05-01T10:00:00Z"}
spec: {hostNetwork: true, hostname: h, subdomain: sub, containers: [{name: c, image: i}]}
status:
  phase: Succeeded
  podIPs: [{ip: 10.244.0.9}, {ip: "fd00::9"}]
`;
    const { model } = buildModel([{ file: 'x.yaml', text }], { defaultNamespace: 'team' });
    const s = svc(model, 'team', 's');
    expect(s).toMatchObject({ type: 'ClusterIP', headless: false, publishNotReadyAddresses: false, ipFamilies: ['IPv4'], externalIPs: [] });
    expect(s.ports).toEqual([{ name: 'dns', protocol: 'TCP', port: 53 }]);
    expect(s.selector).toBeUndefined();
    // A Running pod without status gets an IP per pod CIDR family (10.244.0.0/16, fd00:10:244::/56).
    expect(model.pods[0]).toMatchObject({ name: 'p', namespace: 'team', phase: 'Running', deleting: false, hostNetwork: false, ready: true });
    expect(model.pods[0]!.podIPs).toHaveLength(2);
    expect(model.pods[0]!.podIP).toBe(model.pods[0]!.podIPs[0]);
    expect(model.pods[0]!.podIPs[0]).toMatch(/^10\.244\./);
    expect(model.pods[0]!.podIPs[1]).toMatch(/^fd00:10:244::/);
    expect(model.pods[1]).toMatchObject({
      name: 'q',
      phase: 'Succeeded',
      podIP: '10.244.0.9',
      podIPs: ['10.244.0.9', 'fd00::9'],
      deleting: true,
      hostNetwork: true,
      hostname: 'h',
      subdomain: 'sub',
    });
    expect([...model.namespaces.keys()]).toEqual(['team']);
  });

  it('reads EndpointSlice v1 zone; rejects v1beta1 (removed in 1.25) naming the version to use', () => {
    const text = `apiVersion: discovery.k8s.io/v1beta1
kind: EndpointSlice
metadata: {name: old, labels: {kubernetes.io/service-name: s}}
addressType: IPv6
ports: [{name: http, port: 80}]
endpoints:
- addresses: ["FD00:0:0::5"]
  topology: {topology.kubernetes.io/zone: zone-a, kubernetes.io/hostname: node-1}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: new, labels: {multicluster.kubernetes.io/service-name: s}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.5]
  zone: zone-b
  nodeName: node-2
  conditions: {ready: false}
`;
    const { model, findings } = buildModel([{ file: 'x.yaml', text }]);
    expect(findings).toEqual([
      expect.objectContaining({
        line: 2,
        severity: 'error',
        code: 'unknown-kind',
        message: expect.stringContaining(
          'did you mean EndpointSlice in discovery.k8s.io/v1? (discovery.k8s.io/v1beta1 EndpointSlice was removed in Kubernetes 1.25)',
        ),
      }),
    ]);
    expect(model.endpointSlices.map((x) => x.name)).toEqual(['new']);
    const [n] = model.endpointSlices;
    expect(n!.endpoints).toEqual([{ addresses: ['10.0.0.5'], ready: false, zone: 'zone-b', nodeName: 'node-2' }]);
  });

  it('reads ServiceImports', () => {
    const text = `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: db, namespace: shared}
spec:
  type: ClusterSetIP
  ips: [10.110.0.5]
  ports: [{name: pg, port: 5432, protocol: TCP}]
`;
    const { model } = buildModel([{ file: 'x.yaml', text }]);
    expect(model.serviceImports).toEqual([
      {
        name: 'db',
        namespace: 'shared',
        labels: {},
        annotations: {},
        source: { file: 'x.yaml', line: 1 },
        type: 'ClusterSetIP',
        ips: ['10.110.0.5'],
        ports: [{ name: 'pg', protocol: 'TCP', port: 5432 }],
      },
    ]);
    expect(model.namespaces.has('shared')).toBe(true);
  });
});

describe('Endpoints mirroring', () => {
  const endpoints = `apiVersion: v1
kind: Endpoints
metadata:
  name: ext
  namespace: ns
  labels: {team: db}
subsets:
- addresses:
  - ip: 192.168.1.1
    hostname: primary
    nodeName: n1
    targetRef: {kind: Pod, name: db-0}
  - ip: "2001:DB8::1"
  notReadyAddresses:
  - ip: 192.168.1.2
  ports:
  - {name: sql, port: 5432}
- addresses:
  - ip: 192.168.1.3
  ports:
  - {name: other, port: 6000, protocol: UDP}
`;
  const extService = service('ext', 'ns');

  it('mirrors one slice per subset and address type', () => {
    const { model, findings } = buildModel([{ file: 'ep.yaml', text: `${extService}\n---\n${endpoints}` }]);
    expect(findings).toEqual([]);
    const slices = model.endpointSlices;
    expect(slices).toHaveLength(3);
    for (const s of slices) {
      expect(s).toMatchObject({ namespace: 'ns', serviceName: 'ext', mirrored: true, source: { file: 'ep.yaml', line: 11 } });
      expect(s.labels).toEqual({
        team: 'db',
        'kubernetes.io/service-name': 'ext',
        'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
      });
      expect(s.name).toMatch(/^ext-[0-9a-f]{5}$/);
    }
    const v4 = slices.filter((s) => s.addressType === 'IPv4');
    const v6 = slices.filter((s) => s.addressType === 'IPv6');
    expect(v6).toHaveLength(1);
    expect(v6[0]!.endpoints).toEqual([{ addresses: ['2001:db8::1'], ready: true }]);
    const first = v4.find((s) => s.ports[0]?.name === 'sql')!;
    expect(first.endpoints).toEqual([
      { addresses: ['192.168.1.1'], ready: true, hostname: 'primary', nodeName: 'n1', targetRefName: 'db-0', targetRefKind: 'Pod' },
      { addresses: ['192.168.1.2'], ready: false },
    ]);
    expect(first.ports).toEqual([{ name: 'sql', protocol: 'TCP', port: 5432 }]);
    const second = v4.find((s) => s.ports[0]?.name === 'other')!;
    expect(second.ports).toEqual([{ name: 'other', protocol: 'UDP', port: 6000 }]);
    expect(new Set(slices.map((s) => s.name)).size).toBe(3);
  });

  it('lets explicit EndpointSlices win', () => {
    const slice = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ext-abc, namespace: ns, labels: {kubernetes.io/service-name: ext}}
addressType: IPv4
endpoints: [{addresses: [10.1.1.1]}]
`;
    for (const order of [
      [extService, endpoints, slice],
      [slice, endpoints, extService],
    ]) {
      const { model } = buildModel(order.map((text, i) => ({ file: `f${i}.yaml`, text })));
      expect(model.endpointSlices.map((s) => [s.name, s.mirrored])).toEqual([['ext-abc', false]]);
    }
  });

  it('does not mirror Endpoints without a Service, with a warning', () => {
    const { model, findings } = buildModel([{ file: 'ep.yaml', text: endpoints }]);
    expect(model.endpointSlices).toEqual([]);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ file: 'ep.yaml', line: 1, severity: 'warning' });
    expect(findings[0]!.message).toMatch(/no Service "ns\/ext"/);
  });

  it('honours the skip-mirror label', () => {
    const text = `${extService}\n---\n${endpoints.replace('team: db', 'endpointslice.kubernetes.io/skip-mirror: "true"')}`;
    expect(buildModel([{ file: 'ep.yaml', text }]).model.endpointSlices).toEqual([]);
  });
});

describe('cluster IP allocation', () => {
  it('is stable and independent of order', () => {
    const docs = ['a', 'b', 'c', 'd', 'e'].map((n) => ({ file: `${n}.yaml`, text: service(`svc-${n}`) }));
    const one = ipsOf(buildModel(docs).model);
    const two = ipsOf(buildModel([...docs].reverse()).model);
    expect(two).toEqual(one);
    const all = Object.values(one).flat();
    expect(new Set(all).size).toBe(5);
  });

  it('does not move existing services when one is added', () => {
    const docs = ['a', 'b', 'c'].map((n) => ({ file: `${n}.yaml`, text: service(`svc-${n}`) }));
    const before = ipsOf(buildModel(docs).model);
    const after = ipsOf(buildModel([...docs, { file: '0.yaml', text: service('aaa-newcomer') }]).model);
    for (const [k, v] of Object.entries(before)) expect(after[k]).toEqual(v);
  });

  it('probes past an IP declared by another service', () => {
    const alone = svc(buildModel([{ file: 'a.yaml', text: service('victim') }]).model, 'default', 'victim').clusterIPs[0]!;
    const thief = service('thief', 'other', `  clusterIP: ${alone}\n`);
    const { model } = buildModel([
      { file: 'a.yaml', text: service('victim') },
      { file: 'b.yaml', text: thief },
    ]);
    expect(svc(model, 'other', 'thief').clusterIPs).toEqual([alone]);
    const moved = svc(model, 'default', 'victim').clusterIPs[0]!;
    expect(ipOffset(moved)).toBe(ipOffset(alone) + 1);
  });

  it('fills a small CIDR without collisions, keeps .1 for kubernetes, then reports it full', () => {
    const opts = { serviceCIDRs: ['10.0.0.0/29'] }; // usable .1-.6, .1 reserved
    const five = ['a', 'b', 'c', 'd', 'e'].map((n) => ({ file: `${n}.yaml`, text: service(n) }));
    const ips = Object.values(ipsOf(buildModel(five, opts).model))
      .flat()
      .sort();
    expect(ips).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    const six = failing([...five, { file: 'f.yaml', text: service('f') }], opts);
    expect(six).toHaveLength(1);
    expect(six[0]).toMatchObject({ file: 'f.yaml', line: 1, severity: 'error' });
    expect(six[0]!.message).toMatch(/10\.0\.0\.0\/29\) is full/);
  });

  it('gives the kubernetes Service the first address when it declares none', () => {
    const { model } = buildModel([
      { file: 'k.yaml', text: service('kubernetes') },
      { file: 'z.yaml', text: service('zzz') },
    ]);
    expect(svc(model, 'default', 'kubernetes').clusterIPs).toEqual(['10.96.0.1']);
    expect(svc(model, 'default', 'zzz').clusterIPs[0]).not.toBe('10.96.0.1');
  });

  it('prefers the dynamic band and never uses network or broadcast', () => {
    const opts = { serviceCIDRs: ['192.168.5.0/24'] }; // static band: first 16 addresses after the network
    const docs = Array.from({ length: 40 }, (_, i) => ({ file: `${i}.yaml`, text: service(`s${i}`) }));
    const ips = Object.values(ipsOf(buildModel(docs, opts).model)).flat();
    for (const ip of ips) {
      const last = Number(ip.split('.')[3]);
      expect(last).toBeGreaterThanOrEqual(17);
      expect(last).toBeLessThanOrEqual(254);
    }
  });

  it('rejects a declared IP outside every service CIDR, unless the object was read from a cluster', () => {
    const f = failing([{ file: 'x.yaml', text: service('far', 'default', '  clusterIP: 172.16.0.10\n') }]);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ file: 'x.yaml', line: 9, severity: 'error', code: 'cluster-ip-out-of-range' }); // the spec.clusterIP line
    expect(f[0]!.message).toMatch(/172\.16\.0\.10 is not in the valid range \(10\.96\.0\.0\/12\).*such as 172\.16\.0\.0\/16/);
    // Server-set metadata (a dump): a real API server allocated it, so it stands, with a warning.
    const dumped = service('far', 'default', '  clusterIP: 172.16.0.10\n').replace(
      '  namespace: default\n',
      '  namespace: default\n  uid: 0d1c2b3a-0000-4000-8000-000000000001\n',
    );
    const { model, findings } = buildModel([{ file: 'x.yaml', text: dumped }]);
    expect(svc(model, 'default', 'far').clusterIPs).toEqual(['172.16.0.10']);
    expect(findings).toEqual([expect.objectContaining({ file: 'x.yaml', line: 10, severity: 'warning', code: 'cluster-ip-out-of-range' })]);
    expect(findings[0]!.message).toMatch(/outside the configured service CIDRs \(10\.96\.0\.0\/12\).*server-set metadata.*--service-cidr/);
  });

  // Load speed is measured by the benchmark, not asserted here; this checks correctness at scale.
  it('loads 10,000 services with distinct IPs and exact source lines', () => {
    const parts: string[] = [];
    for (let i = 0; i < 10000; i++) {
      parts.push(`apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-${i}\n  namespace: ns-${i % 50}\nspec:\n  ports:\n  - name: http\n    port: 80\n`);
    }
    const text = parts.join('---\n');
    const { model } = buildModel([{ file: 'big.yaml', text }]);
    expect(model.services).toHaveLength(10000);
    expect(new Set(model.services.map((s) => s.clusterIPs[0])).size).toBe(10000);
    expect(model.services.find((s) => s.name === 'svc-9999')?.source.line).toBe(9999 * 10 + 1);
  });
});

describe('dual-stack', () => {
  const v4only = { serviceCIDRs: ['10.96.0.0/12'] };

  it('PreferDualStack gets one IP per family, IPv4 first', () => {
    const { model } = buildModel([{ file: 'x.yaml', text: service('d', 'default', '  ipFamilyPolicy: PreferDualStack\n') }]);
    const d = svc(model, 'default', 'd');
    expect(d.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(d.clusterIPs[0]).toMatch(/^10\./);
    expect(d.clusterIPs[1]).toMatch(/^fd00:10:96::/);
  });

  it('follows ipFamilies order', () => {
    const { model } = buildModel([{ file: 'x.yaml', text: service('d', 'default', '  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv6, IPv4]\n') }]);
    const d = svc(model, 'default', 'd');
    expect(d.ipFamilies).toEqual(['IPv6', 'IPv4']);
    expect(d.clusterIPs[0]).toMatch(/^fd00:10:96::/);
    expect(d.clusterIPs[1]).toMatch(/^10\./);
  });

  it('SingleStack IPv6', () => {
    const { model } = buildModel([{ file: 'x.yaml', text: service('s', 'default', '  ipFamilies: [IPv6]\n') }]);
    expect(svc(model, 'default', 's').clusterIPs).toHaveLength(1);
    expect(svc(model, 'default', 's').clusterIPs[0]).toMatch(/^fd00:10:96::/);
  });

  it('completes a half-declared dual-stack service', () => {
    const { model } = buildModel([{ file: 'x.yaml', text: service('h', 'default', '  ipFamilyPolicy: PreferDualStack\n  clusterIP: 10.96.3.3\n') }]);
    const h = svc(model, 'default', 'h');
    expect(h.clusterIPs[0]).toBe('10.96.3.3');
    expect(h.clusterIPs[1]).toMatch(/^fd00:10:96::/);
  });

  it('PreferDualStack degrades to single stack when the cluster has one family', () => {
    const { model } = buildModel([{ file: 'x.yaml', text: service('d', 'default', '  ipFamilyPolicy: PreferDualStack\n') }], v4only);
    expect(svc(model, 'default', 'd').ipFamilies).toEqual(['IPv4']);
    expect(svc(model, 'default', 'd').clusterIPs).toHaveLength(1);
  });

  it('RequireDualStack fails when the cluster has one family', () => {
    const f = failing([{ file: 'x.yaml', text: service('d', 'default', '  ipFamilyPolicy: RequireDualStack\n') }], v4only);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ file: 'x.yaml', line: 9 }); // the spec.ipFamilyPolicy line
    expect(f[0]!.message).toMatch(/RequireDualStack needs an IPv6 cluster IP/);
  });

  it('rejects clusterIPs that disagree with ipFamilies or policy', () => {
    const f = failing([
      {
        file: 'a.yaml',
        text: service(
          'a',
          'default',
          '  ipFamilyPolicy: PreferDualStack\n  ipFamilies: [IPv6, IPv4]\n  clusterIP: 10.96.1.1\n  clusterIPs: [10.96.1.1, "fd00:10:96::1"]\n',
        ),
      },
      { file: 'b.yaml', text: service('b', 'default', '  ipFamilyPolicy: SingleStack\n  clusterIP: 10.96.1.2\n  clusterIPs: [10.96.1.2, "fd00:10:96::2"]\n') },
      { file: 'c.yaml', text: service('c', 'default', '  ipFamilyPolicy: PreferDualStack\n  clusterIP: 10.96.1.3\n  clusterIPs: [10.96.1.3, 10.96.1.4]\n') },
      { file: 'd.yaml', text: service('d', 'default', '  clusterIP: 10.96.1.5\n  clusterIPs: [10.96.1.6]\n') },
    ]);
    expect(f.map((x) => x.file)).toEqual(['a.yaml', 'a.yaml', 'b.yaml', 'c.yaml', 'd.yaml']);
    expect(f[0]!.message).toMatch(/is IPv4 but spec.ipFamilies\[0\] is IPv6/);
    expect(f[2]!.message).toMatch(/SingleStack allows one cluster IP/);
    expect(f[3]!.message).toMatch(/at most one address per IP family/);
    expect(f[4]!.message).toMatch(/must equal spec.clusterIPs\[0\]/);
  });
});

describe('validation errors', () => {
  const at = (findings: Finding[], file: string, line: number): string[] =>
    findings.filter((f) => f.file.endsWith(file) && f.line === line).map((f) => `${f.severity}: ${f.message}`);

  it('collects every error of a directory with file and line', () => {
    const ERRORS_IN_FIXTURE = 26;
    // Each object with an error is left out, and the rest loads; --strict (strict) stops instead.
    const { model, findings: f } = loadManifests([join(FIXTURES, 'errors')]);
    const errors = f.filter((x) => x.severity === 'error');
    expect(errors).toHaveLength(ERRORS_IN_FIXTURE);
    expect(model.rejected!.length).toBeGreaterThan(0);
    let err: unknown;
    try {
      loadManifests([join(FIXTURES, 'errors')], { strict: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).message.split('\n')).toHaveLength(ERRORS_IN_FIXTURE);
    expect((err as ManifestError).message).toContain(`${join(FIXTURES, 'errors/broken.yaml')}:12: YAML syntax error at line 12`);

    // YAML syntax error, with the YAML line; the other documents of the file still load.
    expect(at(f, 'broken.yaml', 12)).toEqual([
      expect.stringMatching(/^error: YAML syntax error at line 12, column 9: Nested mappings are not allowed in compact mappings/),
    ]);
    expect(f.filter((x) => x.file.endsWith('broken.yaml'))).toHaveLength(1);

    // Duplicates name both locations; a cluster IP claimed twice names the first owner.
    // Every finding about a field is at the field's line; the others at the object's first line.
    expect(at(f, 'dup-b.yaml', 2)).toEqual([expect.stringMatching(/Service "apps\/twin": is declared twice, here and at .*dup-a\.yaml:1/)]);
    expect(at(f, 'dup-b.yaml', 16)).toEqual([
      expect.stringMatching(/"apps\/thief": cluster IP 10\.96\.7\.7 is already used by Service "apps\/twin" \(.*dup-a\.yaml:1\)/),
    ]);

    expect(at(f, 'many.yaml', 1)).toEqual([expect.stringMatching(/"no-kind": kind is missing/)]);
    expect(at(f, 'many.yaml', 5)).toEqual([expect.stringMatching(/"no-api-version": apiVersion is missing/)]);
    expect(at(f, 'many.yaml', 11)).toEqual([expect.stringMatching(/metadata\.name is missing/)]);
    expect(at(f, 'many.yaml', 17)).toEqual([expect.stringMatching(/"Bad_Name" is not a valid DNS-1035 label/)]);
    expect(at(f, 'many.yaml', 22)).toEqual([expect.stringMatching(/"1starts-with-digit" is not a valid DNS-1035 label/)]);
    expect(at(f, 'many.yaml', 27)).toEqual([expect.stringMatching(/"-bad-ns" is not a valid DNS-1123 label/)]);
    expect(at(f, 'many.yaml', 34)).toEqual([expect.stringMatching(/spec\.clusterIP "10\.96\.0\.300" is not a valid IP address/)]);
    expect(at(f, 'many.yaml', 42)).toEqual([
      expect.stringMatching(/spec\.clusterIPs must be empty when spec\.clusterIP is not set/),
      expect.stringMatching(/spec\.clusterIPs\[1\] "fd00::zz" is not a valid IP address/),
    ]);
    // Services without spec.ports, and a pod without containers, are rejected too (ValidateService, ValidatePodSpec).
    expect(f.filter((x) => x.code === 'ports-required' && x.file.endsWith('many.yaml')).map((x) => x.line)).toEqual([14, 19, 33, 40]);
    expect(at(f, 'many.yaml', 75)).toEqual([expect.stringMatching(/spec\.containers is missing/)]);
    expect(at(f, 'many.yaml', 51)).toEqual([expect.stringMatching(/spec\.ports\[0\]\.port 0 is not a valid port number/)]);
    expect(at(f, 'many.yaml', 53)).toEqual([expect.stringMatching(/spec\.ports\[1\]\.port 70000 is not a valid port number/)]);
    expect(at(f, 'many.yaml', 56)).toEqual([
      expect.stringMatching(/"default\/bad-port": spec\.ports\[2\]\.protocol must be one of "SCTP", "TCP", "UDP", got "tcp"/),
    ]);
    expect(at(f, 'many.yaml', 63)).toEqual([expect.stringMatching(/type ExternalName needs spec\.externalName/)]);
    expect(at(f, 'many.yaml', 72)).toEqual([expect.stringMatching(/endpoints\[0\]\.addresses\[0\] "10\.0\.0\.256" is not a valid IP address/)]);
    expect(at(f, 'many.yaml', 73)).toEqual([expect.stringMatching(/endpoints\[1\]\.addresses\[0\] "fd00::1" is not an IPv4 address/)]);
    expect(at(f, 'many.yaml', 80)).toEqual([expect.stringMatching(/status\.podIP "10\.244\.0\.x" is not a valid IP address/)]);
    expect(at(f, 'many.yaml', 88)).toEqual([expect.stringMatching(/^error: .*subsets\[0\]\.addresses\[0\]\.ip "not-an-ip" is not a valid IP address/)]);
    // A rejected Endpoints object is not mirrored into a slice (nor warned about: it is not there).
    expect(model.rejected!.some((r) => r.kind === 'Endpoints' && r.name === 'bad-endpoints')).toBe(true);
  });

  it('rejects names longer than 63 characters and bad namespaces', () => {
    const long = 'a'.repeat(64);
    const f = failing([
      { file: 'x.yaml', text: service(long) },
      { file: 'y.yaml', text: service('ok', 'Bad.NS') },
    ]);
    expect(f.map((x) => [x.file, x.line])).toEqual([
      ['x.yaml', 4], // metadata.name
      ['y.yaml', 5], // metadata.namespace
    ]);
    expect(f[0]!.message).toContain('not a valid DNS-1035 label');
    expect(f[1]!.message).toContain('metadata.namespace "Bad.NS" is not a valid namespace name');
    expect(buildModel([{ file: 'z.yaml', text: service('a'.repeat(63)) }]).model.services).toHaveLength(1);
  });

  it('reports syntax errors in JSON files and documents that are not mappings', () => {
    const f = failing([
      { file: 'a.json', text: '{\n  "kind": "Service",\n  "metadata": {"name": "x"\n' },
      { file: 'b.yaml', text: 'apiVersion: v1\nkind: Service\nmetadata: {name: fine}\nspec: {ports: [{port: 80}]}\n---\n- just\n- a list\n' },
    ]);
    expect(f.map((x) => [x.file, x.line])).toEqual([
      ['a.json', 3], // the '{' that is never closed
      ['b.yaml', 6],
    ]);
    expect(f[0]!.message).toMatch(/YAML syntax error/);
    expect(f[1]!.message).toMatch(/must be a mapping/);
  });

  it('reports every broken document of a file, with the file line', () => {
    const text = [
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}', // lines 1-3
      'apiVersion: v1\nkind: Service\nmetadata: {name: [unclosed}', // lines 5-7
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: "x\n  bad: 1\n', // lines 9-14
    ].join('\n---\n');
    const f = failing([{ file: 'm.yaml', text }]);
    expect(f.map((x) => x.line)).toEqual([7, 12]); // 12: where the unterminated quote opens
    expect(f.every((x) => x.file === 'm.yaml' && /YAML syntax error/.test(x.message))).toBe(true);
  });

  it('rejects a missing port number and a quoted one', () => {
    const f = failing([
      { file: 'x.yaml', text: 'apiVersion: v1\nkind: Service\nmetadata: {name: p}\nspec:\n  ports:\n  - name: a\n  - port: "80"\n    name: b\n' },
    ]);
    expect(f.map((x) => x.message)).toEqual([
      expect.stringMatching(/missing required field "port" in spec\.ports\[0\]/), // the Service schema
      expect.stringMatching(/spec\.ports\[1\]\.port must be an integer, got "80"; write it without quotes/),
    ]);
  });

  it('reports the line of a List item', () => {
    const text = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: good}
  spec: {ports: [{port: 80}]}
- apiVersion: v1
  kind: Service
  metadata: {name: BAD}
  spec: {ports: [{port: 80}]}
`;
    const f = failing([{ file: 'l.yaml', text }]);
    expect(f.map((x) => [x.file, x.line])).toEqual([['l.yaml', 10]]); // the item's metadata line
  });
});
