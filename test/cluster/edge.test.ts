// The edge part of the cluster model: the LoadBalancer pool, node ports as the API server
// allocates and validates them, ingress controllers publishing addresses, Gateway API attachment,
// removed apiVersions read as current ones, and the warnings `check` prints about them.
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildModel, ManifestError } from '../../src/cluster/load.js';
import type { Finding } from '../../src/cluster/model.js';
import { launcher, repoRoot } from '../helpers/server.js';

const doc = (text: string, file = 'm.yaml'): { file: string; text: string }[] => [{ file, text }];

function failing(text: string, options?: Parameters<typeof buildModel>[1]): Finding[] {
  try {
    buildModel(doc(text), options);
  } catch (e) {
    if (e instanceof ManifestError) return [...e.findings];
    throw e;
  }
  throw new Error('expected a ManifestError');
}

const svc = (name: string, type: string, ports: string, extra = ''): string => `---
apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  type: ${type}
${extra}  ports:
${ports}
`;

describe('node ports', () => {
  it('nodePort 0 and an absent nodePort are allocated in the range; ClusterIP Services get none', () => {
    const { model } = buildModel(doc(svc('a', 'NodePort', '    - port: 80\n      nodePort: 0\n    - port: 81\n') + svc('b', 'ClusterIP', '    - port: 80\n')));
    const a = model.services.find((s) => s.name === 'a')!;
    for (const p of a.ports) {
      expect(p.nodePort).toBeGreaterThanOrEqual(30000);
      expect(p.nodePort).toBeLessThanOrEqual(32767);
    }
    expect(a.ports[0]!.nodePort).not.toBe(a.ports[1]!.nodePort);
    expect(model.services.find((s) => s.name === 'b')!.ports[0]!.nodePort).toBeUndefined();
  });

  it('allocation does not depend on file order and follows --service-node-port-range', () => {
    const one = svc('a', 'NodePort', '    - port: 80\n');
    const two = svc('b', 'LoadBalancer', '    - port: 80\n');
    const x = buildModel([{ file: '1.yaml', text: one }, { file: '2.yaml', text: two }]).model.services.map((s) => `${s.name}:${s.ports[0]!.nodePort}`).sort();
    const y = buildModel([{ file: '1.yaml', text: two }, { file: '2.yaml', text: one }]).model.services.map((s) => `${s.name}:${s.ports[0]!.nodePort}`).sort();
    expect(x).toEqual(y);
    const ranged = buildModel(doc(one), { nodePortRange: '31000-31001' }).model.services[0]!.ports[0]!.nodePort!;
    expect([31000, 31001]).toContain(ranged);
  });

  it.each([
    ['out of range', svc('a', 'NodePort', '    - port: 80\n      nodePort: 8080\n'), /nodePort 8080: is outside the node port range 30000-32767/],
    ['on a ClusterIP Service', svc('a', 'ClusterIP', '    - port: 80\n      nodePort: 30080\n'), /nodePort 30080: may not be used when type is ClusterIP/],
    ['used by two Services', svc('a', 'NodePort', '    - port: 80\n      nodePort: 30080\n') + svc('b', 'NodePort', '    - port: 81\n      nodePort: 30080\n'), /Service "default\/b": spec.ports\[0\].nodePort 30080: is already allocated to Service "default\/a" \(m.yaml:2\)/],
    ['used twice for one protocol in a Service', svc('a', 'NodePort', '    - port: 80\n      nodePort: 30080\n    - port: 81\n      nodePort: 30080\n'), /used twice in this Service for TCP/],
  ])('a nodePort %s is an error naming file and line', (_what, text, re) => {
    const f = failing(text);
    expect(f.some((x) => x.severity === 'error' && x.file === 'm.yaml' && x.line > 0 && re.test(x.message)), JSON.stringify(f)).toBe(true);
  });

  it('the error names the nodePort field\'s line', () => {
    const text = svc('a', 'NodePort', '    - port: 80\n      nodePort: 8080\n');
    const line = text.split('\n').findIndex((l) => l.includes('nodePort: 8080')) + 1;
    expect(failing(text).find((f) => /nodePort 8080/.test(f.message))!.line).toBe(line);
  });

  it('a LoadBalancer Service with allocateLoadBalancerNodePorts: false gets none', () => {
    const { model } = buildModel(doc(svc('lb', 'LoadBalancer', '    - port: 80\n', '  allocateLoadBalancerNodePorts: false\n')));
    expect(model.services[0]!.ports[0]!.nodePort).toBeUndefined();
  });

  it('one nodePort for TCP and UDP in the same Service is accepted (DNS on 53)', () => {
    const { model } = buildModel(doc(svc('dns', 'NodePort', '    - port: 53\n      nodePort: 30053\n      protocol: UDP\n    - port: 53\n      name: tcp\n      nodePort: 30053\n')));
    expect(model.services[0]!.ports.map((p) => p.nodePort)).toEqual([30053, 30053]);
  });
});

describe('the LoadBalancer pool', () => {
  it('gives each family of a dual-stack LoadBalancer Service an address; written status and loadBalancerIP win', () => {
    const { model } = buildModel(
      doc(
        svc('dual', 'LoadBalancer', '    - port: 80\n', '  ipFamilyPolicy: PreferDualStack\n  ipFamilies: [IPv4, IPv6]\n') +
          svc('asked', 'LoadBalancer', '    - port: 80\n', '  loadBalancerIP: 172.18.255.9\n') +
          svc('written', 'LoadBalancer', '    - port: 80\n') +
          'status:\n  loadBalancer:\n    ingress:\n      - ip: 203.0.113.5\n',
      ),
    );
    const st = (n: string): string[] => model.edge!.serviceStatus.get(`default/${n}`)!.addresses.map((a) => a.ip!);
    expect(st('dual')).toHaveLength(2);
    expect(st('dual')[0]).toMatch(/^172\.18\.255\./);
    expect(st('dual')[1]).toMatch(/^fc00:f853:ccd:e793:ffff::/);
    expect(st('asked')).toEqual(['172.18.255.9']);
    expect(st('written')).toEqual(['203.0.113.5']);
    expect(model.edge!.serviceStatus.get('default/written')!.origin).toBe('manifest');
  });

  it('takes --loadbalancer-cidr; a full pool is a warning, not a crash', () => {
    const text = svc('a', 'LoadBalancer', '    - port: 80\n') + svc('b', 'LoadBalancer', '    - port: 80\n');
    const { model, findings } = buildModel(doc(text), { loadBalancerCIDRs: ['192.0.2.0/30'] });
    const ips = ['a', 'b'].map((n) => model.edge!.serviceStatus.get(`default/${n}`)!.addresses[0]?.ip);
    expect(ips.sort()).toEqual(['192.0.2.1', '192.0.2.2']);
    // Two services fill the /30 exactly: no warning yet.
    expect(findings.some((f) => f.code === 'loadbalancer-pool-exhausted')).toBe(false);
    const full = buildModel(doc(text + svc('c', 'LoadBalancer', '    - port: 80\n')), { loadBalancerCIDRs: ['192.0.2.0/30'] });
    expect(full.findings.some((f) => f.code === 'loadbalancer-pool-exhausted')).toBe(true);
  });

  it('an invalid --loadbalancer-cidr is an error', () => {
    expect(failing(svc('a', 'LoadBalancer', '    - port: 80\n'), { loadBalancerCIDRs: ['nope'] }).some((f) => /load balancer CIDR "nope"/.test(f.message))).toBe(true);
  });
});

describe('removed apiVersions', () => {
  it('an extensions/v1beta1 Deployment without selector gets pods and endpoints, with a warning at its line', () => {
    const text = `apiVersion: extensions/v1beta1
kind: Deployment
metadata:
  name: tomcat
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: tomcat}
    spec:
      containers: [{name: t, image: tomcat}]
---
apiVersion: v1
kind: Service
metadata:
  name: tomcat
spec:
  selector: {app: tomcat}
  ports: [{port: 8080}]
`;
    const { model, findings } = buildModel(doc(text));
    expect(model.pods.filter((p) => p.name.startsWith('tomcat-'))).toHaveLength(2);
    const slices = model.endpointSlices.filter((s) => s.serviceName === 'tomcat');
    expect(slices.flatMap((s) => s.endpoints)).toHaveLength(2);
    const w = findings.find((f) => f.code === 'deprecated-api-version')!;
    expect(w).toMatchObject({ file: 'm.yaml', line: 1, severity: 'warning' });
    expect(w.message).toMatch(/extensions\/v1beta1 Deployment was removed in Kubernetes 1\.16.*read as apps\/v1/);
  });

  it.each([
    ['apps/v1beta1', 'StatefulSet'],
    ['apps/v1beta2', 'DaemonSet'],
    ['extensions/v1beta1', 'ReplicaSet'],
  ])('%s %s is read as apps/v1', (apiVersion, kind) => {
    const text = `apiVersion: ${apiVersion}
kind: ${kind}
metadata:
  name: w
spec:
  serviceName: w
  replicas: 1
  selector: {matchLabels: {app: w}}
  template:
    metadata:
      labels: {app: w}
    spec:
      containers: [{name: c, image: x}]
`;
    const { model, findings } = buildModel(doc(text));
    expect(model.workloads!.map((w) => w.kind)).toEqual([kind]);
    expect(model.ignoredKinds!.size).toBe(0);
    expect(findings.filter((f) => f.code === 'deprecated-api-version')).toHaveLength(1);
  });

  it('a networking.k8s.io/v1beta1 Ingress is read with its hosts', () => {
    const text = `apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata:
  name: i
spec:
  backend: {serviceName: x, servicePort: 80}
  rules:
    - host: ingress.demo.com
      http:
        paths: [{path: /, backend: {serviceName: x, servicePort: 80}}]
`;
    const { model, findings } = buildModel(doc(text));
    expect(model.edge!.ingresses.map((i) => i.hosts)).toEqual([['ingress.demo.com']]);
    expect(findings.some((f) => f.code === 'deprecated-api-version' && /removed in Kubernetes 1\.22/.test(f.message))).toBe(true);
  });
});

describe('ingress controllers and Gateway attachment', () => {
  const fixture = path.join(repoRoot, 'test/fixtures/edge/gateway/manifests');

  it('ingress-nginx publishes its LoadBalancer Service address on every Ingress of its class', async () => {
    const { loadManifests } = await import('../../src/cluster/load.js');
    const { model } = loadManifests([fixture]);
    const lb = model.edge!.serviceStatus.get('ingress-nginx/ingress-nginx-controller')!.addresses;
    const tomcat = model.edge!.ingresses.find((i) => i.name === 'ingress-tomcat')!;
    expect(tomcat.className).toBe('nginx');
    expect(tomcat.status).toEqual({ addresses: lb, origin: 'controller' });
    expect(model.edge!.ingresses.find((i) => i.name === 'written')!.status.origin).toBe('manifest');
  });

  it('route hostnames are the intersection with the listener hostname, and only on accepting listeners', async () => {
    const { loadManifests } = await import('../../src/cluster/load.js');
    const { model, findings } = loadManifests([fixture]);
    expect(model.edge!.routeHosts.map((h) => `${h.route.name}:${h.host}@${h.gateway.name}`).sort()).toEqual(['grpc:grpc.example.com@web', 'pooled-route:pooled.example.com@pooled', 'shop:shop.example.com@web']);
    expect(findings.filter((f) => f.code?.startsWith('route-')).map((f) => `${path.basename(f.file)}:${f.line}:${f.code}`)).toEqual([
      'example-com.yaml:63:route-parent-rejects',
      'example-com.yaml:76:route-parent-missing',
    ]);
  });

  it('listener rules: TLSRoute only on TLS listeners, GRPCRoute on HTTP ones, namespace selectors, wildcard intersections', () => {
    const text = `apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {gateway-access: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  listeners:
    - name: tls
      port: 443
      protocol: TLS
      hostname: "*.secure.example.com"
      allowedRoutes: {namespaces: {from: All}}
    - name: http
      port: 80
      protocol: HTTP
      allowedRoutes:
        namespaces:
          from: Selector
          selector: {matchLabels: {gateway-access: "yes"}}
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: t, namespace: team-b}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: ["*.secure.example.com", "db.secure.example.com", "x.example.com"]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: g, namespace: team-a}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [grpc.example.com]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: h, namespace: team-b}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: http}]
  hostnames: [blocked.example.com]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: nohost, namespace: team-a}
spec:
  parentRefs: [{name: gw, namespace: infra, port: 443}]
`;
    const { model, findings } = buildModel(doc(text));
    expect(model.edge!.routeHosts.map((h) => `${h.route.kind}/${h.route.name}:${h.host}`).sort()).toEqual([
      'GRPCRoute/g:grpc.example.com',
      'TLSRoute/t:*.secure.example.com',
      'TLSRoute/t:db.secure.example.com',
    ]);
    const rejected = findings.filter((f) => f.code === 'route-parent-rejects').map((f) => f.message.split(':')[0]);
    expect(rejected).toEqual(['HTTPRoute "team-b/h"', 'HTTPRoute "team-a/nohost"']);
  });

  it('warns about hosts claimed twice and Ingresses whose class has no controller', () => {
    const ing = (name: string, host: string, cls: string): string => `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
spec:
  ingressClassName: ${cls}
  rules: [{host: ${host}}]
`;
    const { findings, model } = buildModel(doc(ing('a', 'www.example.com', 'missing') + ing('b', 'www.example.com', 'missing')));
    expect(findings.filter((f) => f.code === 'ingress-no-controller')).toHaveLength(2);
    const dup = findings.find((f) => f.code === 'host-claimed-twice')!;
    expect(dup.message).toMatch(/Ingress "default\/b": host "www.example.com" is also claimed by Ingress "default\/a" \(m.yaml:2\)/);
    // Both still get one shared address (the pool stands in for the missing controller).
    expect(new Set(model.edge!.ingresses.map((i) => i.status.addresses[0]!.ip)).size).toBe(1);
  });

  it('`clusterdns check` prints the edge warnings and lists skipped kinds once each (per file)', () => {
    let out = '';
    try {
      out = execFileSync(process.execPath, [launcher, 'check', '-m', fixture, '-c', path.join(repoRoot, 'test/fixtures/edge/gateway/Corefile')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    }
    expect(out).toMatch(/articles\.yaml:4: warning: .*extensions\/v1beta1 Deployment.* \[deprecated-api-version\]/);
    expect(out).toMatch(/example-com\.yaml:76: warning: .* \[route-parent-missing\]/);
    expect(out).toMatch(/HTTPRoute "apps\/shop": host "shop\.example\.com" is also claimed by Ingress "apps\/dup" .* \[host-claimed-twice\]/);
    expect(out).toMatch(/ingress-nginx\.yaml:20: info: Service "ingress-nginx\/ingress-nginx-controller": status\.loadBalancer 172\.18\.255\.\d+ \(LoadBalancer pool\) \[status-filled\]/);
    expect(out).toMatch(/articles\.yaml:36: info: Ingress "default\/ingress-tomcat" \(www\.ttomcat\.com\): status\.loadBalancer 172\.18\.255\.\d+ \(ingress controller\) \[status-filled\]/);
    const skip = path.join(repoRoot, 'test/fixtures/edge/skipped.yaml');
    const skipped = execFileSync(process.execPath, [launcher, 'check', '-m', skip], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    // Paths relative to the current directory; the line when the loader names one.
    const rel = path.relative(process.cwd(), skip).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const infos = skipped.split('\n').filter((l) => l.includes('[kind-unused]'));
    expect(infos).toEqual([
      expect.stringMatching(new RegExp(`^${rel}(:\\d+)?: info: .*Certificate\\.cert-manager\\.io.* \\[kind-unused\\]$`)),
      expect.stringMatching(new RegExp(`^${rel}(:\\d+)?: info: .*ConfigMap.* \\[kind-unused\\]$`)),
    ]);
    expect(skipped).toMatch(/^0 error\(s\), 0 warning\(s\), 2 info\(s\)$/m);
  });
});
