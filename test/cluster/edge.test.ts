// The edge part of the cluster model: the LoadBalancer pool, node ports as the API server
// allocates and validates them, ingress controllers publishing addresses, Gateway API attachment,
// removed apiVersions read as current ones, and the warnings `check` prints about them.
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildModel, ManifestError } from '../../src/cluster/load.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { launcher, repoRoot } from '../helpers/server.js';

const doc = (text: string, file = 'm.yaml'): { file: string; text: string }[] => [{ file, text }];

/** The errors and warnings of a build expected to reject an object (left out, the rest loads). */
function failing(text: string, options?: Parameters<typeof buildModel>[1]): Finding[] {
  let findings: readonly Finding[];
  try {
    findings = buildModel(doc(text), options).findings;
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    findings = e.findings;
  }
  if (!findings.some((f) => f.severity === 'error')) throw new Error('expected an error');
  return findings.filter((f) => f.severity !== 'info');
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
    const { model } = buildModel(
      doc(
        svc('a', 'NodePort', '    - port: 80\n      name: a\n      nodePort: 0\n    - port: 81\n      name: b\n') + svc('b', 'ClusterIP', '    - port: 80\n'),
      ),
    );
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
    const x = buildModel([
      { file: '1.yaml', text: one },
      { file: '2.yaml', text: two },
    ])
      .model.services.map((s) => `${s.name}:${s.ports[0]!.nodePort}`)
      .sort();
    const y = buildModel([
      { file: '1.yaml', text: two },
      { file: '2.yaml', text: one },
    ])
      .model.services.map((s) => `${s.name}:${s.ports[0]!.nodePort}`)
      .sort();
    expect(x).toEqual(y);
    const ranged = buildModel(doc(one), { nodePortRange: '31000-31001' }).model.services[0]!.ports[0]!.nodePort!;
    expect([31000, 31001]).toContain(ranged);
  });

  it.each([
    [
      'out of range',
      svc('a', 'NodePort', '    - port: 80\n      nodePort: 8080\n'),
      /nodePort 8080: is not in the valid node port range 30000-32767: the API server rejects it.*--service-node-port-range 8080-32767/,
    ],
    ['on a ClusterIP Service', svc('a', 'ClusterIP', '    - port: 80\n      nodePort: 30080\n'), /nodePort 30080: may not be used when type is ClusterIP/],
    [
      'used by two Services',
      svc('a', 'NodePort', '    - port: 80\n      nodePort: 30080\n') + svc('b', 'NodePort', '    - port: 81\n      nodePort: 30080\n'),
      /Service "default\/b": spec.ports\[0\].nodePort 30080: is already allocated to Service "default\/a" \(m.yaml:2\)/,
    ],
    [
      'used twice for one protocol in a Service',
      svc('a', 'NodePort', '    - port: 80\n      name: a\n      nodePort: 30080\n    - port: 81\n      name: b\n      nodePort: 30080\n'),
      /used twice in this Service for TCP/,
    ],
  ])('a nodePort %s is an error naming file and line', (_what, text, re) => {
    const f = failing(text);
    expect(
      f.some((x) => x.severity === 'error' && x.file === 'm.yaml' && x.line > 0 && re.test(x.message)),
      JSON.stringify(f),
    ).toBe(true);
  });

  it("the error names the nodePort field's line", () => {
    const text = svc('a', 'NodePort', '    - port: 80\n      nodePort: 8080\n');
    const line = text.split('\n').findIndex((l) => l.includes('nodePort: 8080')) + 1;
    expect(failing(text).find((f) => /nodePort 8080/.test(f.message))!.line).toBe(line);
  });

  it('a nodePort outside the range stands, with a warning, on a Service dumped from a cluster', () => {
    const text = svc('a', 'NodePort', '    - port: 80\n      nodePort: 8080\n').replace('  name: a\n', '  name: a\n  resourceVersion: "4711"\n');
    const { model, findings } = buildModel(doc(text));
    expect(model.services[0]!.ports[0]!.nodePort).toBe(8080);
    const line = text.split('\n').findIndex((l) => l.includes('nodePort: 8080')) + 1;
    expect(findings).toEqual([
      expect.objectContaining({
        line,
        severity: 'warning',
        code: 'node-port-out-of-range',
        message: expect.stringMatching(/server-set metadata.*--service-node-port-range 8080-32767/),
      }),
    ]);
  });

  it('a LoadBalancer Service with allocateLoadBalancerNodePorts: false gets none', () => {
    const { model } = buildModel(doc(svc('lb', 'LoadBalancer', '    - port: 80\n', '  allocateLoadBalancerNodePorts: false\n')));
    expect(model.services[0]!.ports[0]!.nodePort).toBeUndefined();
  });

  it('one nodePort for TCP and UDP in the same Service is accepted (DNS on 53)', () => {
    const { model } = buildModel(
      doc(
        svc(
          'dns',
          'NodePort',
          '    - port: 53\n      name: udp\n      nodePort: 30053\n      protocol: UDP\n    - port: 53\n      name: tcp\n      nodePort: 30053\n',
        ),
      ),
    );
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
    expect(
      failing(svc('a', 'LoadBalancer', '    - port: 80\n'), { loadBalancerCIDRs: ['nope'] }).some((f) => /load balancer CIDR "nope"/.test(f.message)),
    ).toBe(true);
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
${kind === 'StatefulSet' ? '  serviceName: w\n' : ''}${kind === 'DaemonSet' ? '' : '  replicas: 1\n'}  selector: {matchLabels: {app: w}}
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
    expect(model.edge!.routeHosts.map((h) => `${h.route.name}:${h.host}@${h.gateway.name}`).sort()).toEqual([
      'grpc:grpc.example.com@web',
      'pooled-route:pooled.example.com@pooled',
      'shop:shop.example.com@web',
    ]);
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
  rules: [{backendRefs: [{name: db, port: 5432}]}]
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

  it('warns about hosts claimed twice; a class missing from the manifests is info (its chart installs it)', () => {
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
    const missing = findings.filter((f) => f.code === 'ingress-class-missing');
    expect(missing.map((f) => f.severity)).toEqual(['info', 'info']);
    expect(missing[0]!.message).toMatch(
      /^Ingress "default\/a": IngressClass "missing" is not in the manifests \(its controller's chart installs it\); the LoadBalancer pool address 172\.18\.255\.\d+ stands in for its controller's$/,
    );
    const dup = findings.find((f) => f.code === 'host-claimed-twice')!;
    expect(dup.message).toMatch(/Ingress "default\/b": host "www.example.com" is also claimed by Ingress "default\/a" \(m.yaml:2\)/);
    // Both still get one shared address (the pool stands in for the missing controller).
    expect(new Set(model.edge!.ingresses.map((i) => i.status.addresses[0]!.ip)).size).toBe(1);
  });

  it('`clusterdns check` prints the edge warnings and lists skipped kinds once each (per file)', () => {
    let out = '';
    try {
      out = execFileSync(process.execPath, [launcher, 'check', '-m', fixture, '-c', path.join(repoRoot, 'test/fixtures/edge/gateway/Corefile')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    }
    expect(out).toMatch(/articles\.yaml:4: warning: .*extensions\/v1beta1 Deployment.* \[deprecated-api-version\]/);
    expect(out).toMatch(/example-com\.yaml:76: warning: .* \[route-parent-missing\]/);
    expect(out).toMatch(/HTTPRoute "apps\/shop": host "shop\.example\.com" is also claimed by Ingress "apps\/dup" .* \[host-claimed-twice\]/);
    expect(out).toMatch(
      /ingress-nginx\.yaml:20: info: Service "ingress-nginx\/ingress-nginx-controller": status\.loadBalancer 172\.18\.255\.\d+ \(LoadBalancer pool\) \[status-filled\]/,
    );
    expect(out).toMatch(
      /articles\.yaml:36: info: Ingress "default\/ingress-tomcat" \(www\.ttomcat\.com\): status\.loadBalancer 172\.18\.255\.\d+ \(ingress controller\) \[status-filled\]/,
    );
    const skip = path.join(repoRoot, 'test/fixtures/edge/skipped.yaml');
    const skipped = execFileSync(process.execPath, [launcher, 'check', '-m', skip], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    // Paths relative to the current directory; the line when the loader names one.
    const rel = path.relative(process.cwd(), skip).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const infos = skipped.split('\n').filter((l) => l.includes('[kind-unused]'));
    expect(infos).toEqual([
      expect.stringMatching(new RegExp(`^${rel}:1: info: ConfigMap: 2 objects .* \\[kind-unused\\]$`)),
      expect.stringMatching(new RegExp(`^${rel}:11: info: Certificate\\.cert-manager\\.io: an object .* \\[kind-unused\\]$`)),
    ]);
    expect(skipped).toMatch(/^0 error\(s\), 0 warning\(s\), 2 info\(s\)$/m);
  });
});

/** Every finding of a build, whether the loader stops at an error (ManifestError) or serves the rest. */
function findingsOf(text: string): Finding[] {
  try {
    return [...buildModel(doc(text)).findings];
  } catch (e) {
    if (e instanceof ManifestError) return [...e.findings];
    throw e;
  }
}

const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('accepted means loaded: what the API server admits is read, the useless part skipped with a warning', () => {
  const dnsEndpoint = `apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata: {name: mixed}
spec:
  endpoints:
    - dnsName: www.example.com
      recordType: A
      targets:
        - 192.0.2.1
        - not-an-ip
    - dnsName: v6.example.com
      recordType: AAAA
      targets: [192.0.2.2, "2001:db8::1"]
    - dnsName: alias.example.com
      recordType: CNAME
      targets: [www.example.com]
    - dnsName: txt.example.com
      recordType: TXT
      targets: ["not-an-ip is fine here"]
    - recordType: A
      targets: [192.0.2.3]
`;

  it('a DNSEndpoint with a non-IP A target loads; the target is skipped with a warning at its line', () => {
    const { model, findings } = buildModel(doc(dnsEndpoint));
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    const eps = model.edge!.dnsEndpoints[0]!.endpoints;
    expect(eps.map((e) => `${e.dnsName} ${e.recordType} ${e.targets.join(',')}`)).toEqual([
      'www.example.com A 192.0.2.1',
      // k8s_gateway answers any address for its own family (lookupDNSEndpoint), with a warning.
      'v6.example.com AAAA 192.0.2.2,2001:db8::1',
      'txt.example.com TXT not-an-ip is fine here',
    ]);
    const skipped = findings.find((f) => f.code === 'dnsendpoint-target-skipped')!;
    expect(skipped).toMatchObject({ file: 'm.yaml', line: lineOf(dnsEndpoint, '- not-an-ip'), severity: 'warning' });
    expect(skipped.message).toBe(
      'DNSEndpoint "default/mixed": spec.endpoints[0].targets[1] "not-an-ip" is not an IP address, ' +
        'so this A target is skipped (k8s_gateway answers only addresses); write an IPv4 address',
    );
    const family = findings.find((f) => f.code === 'dnsendpoint-target-family');
    expect(family).toMatchObject({ line: lineOf(dnsEndpoint, 'targets: [192.0.2.2'), severity: 'warning' });
    expect(findings.filter((f) => f.code === 'dnsendpoint-skipped').map((f) => [f.line, f.severity])).toEqual([
      [lineOf(dnsEndpoint, 'recordType: CNAME'), 'warning'],
      [lineOf(dnsEndpoint, '- recordType: A'), 'warning'],
    ]);
  });

  it.each<[string, string, RegExp]>([
    [
      'targets of another type',
      'apiVersion: externaldns.k8s.io/v1alpha1\nkind: DNSEndpoint\nmetadata: {name: d}\nspec:\n' +
        '  endpoints: [{dnsName: a.example.com, recordType: A, targets: [5]}]\n',
      /spec\.endpoints\[0\]\.targets\[0\] must be a string, got 5/,
    ],
    [
      'a recordTTL that is not an integer',
      'apiVersion: externaldns.k8s.io/v1alpha1\nkind: DNSEndpoint\nmetadata: {name: d}\nspec:\n' +
        '  endpoints: [{dnsName: a.example.com, recordType: A, recordTTL: soon, targets: [192.0.2.1]}]\n',
      /spec\.endpoints\[0\]\.recordTTL must be an integer, got "soon"/, // the CRD schema
    ],
    [
      'an Ingress host with upper case (IsDNS1123Subdomain)',
      'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  rules: [{host: WWW.example.com}]\n',
      /spec\.rules\[0\]\.host "WWW\.example\.com" is not a DNS-1123 subdomain .*so the API server refuses the Ingress/,
    ],
    [
      'an Ingress host that is an IP',
      'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  rules: [{host: 192.0.2.1}]\n',
      /host "192\.0\.2\.1" is an IP address; it must be a DNS name/,
    ],
    [
      'an Ingress wildcard not leading',
      'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  rules: [{host: "www.*.example.com"}]\n',
      /is not a wildcard DNS-1123 subdomain/,
    ],
    [
      "two listeners of one name (the Gateway CRD's CEL rule)",
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n  listeners:\n' +
        '    - {name: web, port: 80, protocol: HTTP}\n    - {name: web, port: 8080, protocol: HTTP}\n',
      /spec\.listeners\[1\]\.name "web" is also spec\.listeners\[0\]'s; the Gateway CRD requires listener names unique/,
    ],
    [
      'two listeners of one port, protocol and hostname',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n  listeners:\n' +
        '    - {name: a, port: 80, protocol: HTTP}\n    - {name: b, port: 80, protocol: HTTP}\n',
      /spec\.listeners\[1\] has the port, protocol and hostname of spec\.listeners\[0\]/,
    ],
    [
      'a listener hostname outside the Hostname pattern',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n' +
        '  listeners: [{name: a, port: 80, protocol: HTTP, hostname: "Shop.example.com"}]\n',
      /spec\.listeners\[0\]\.hostname "Shop\.example\.com" does not match the pattern/, // the CRD schema
    ],
    [
      'allowedRoutes from None (not in the RouteNamespaces enum)',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n' +
        '  listeners: [{name: a, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: None}}}]\n',
      /allowedRoutes\.namespaces\.from must be one of "All", "Selector", "Same", got "None"/, // the CRD schema
    ],
    [
      'a route hostname with a trailing dot',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: g}]\n' +
        '  hostnames: ["shop.example.com."]\n',
      /spec\.hostnames\[0\] "shop\.example\.com\." does not match the pattern/, // the CRD schema
    ],
    [
      'an IP hostname of a TLSRoute v1 (its CEL rule)',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: TLSRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: g}]\n  hostnames: [192.0.2.1]\n' +
        '  rules: [{backendRefs: [{name: s, port: 443}]}]\n',
      /the TLSRoute CRD refuses IP addresses as hostnames/,
    ],
    [
      'a version no CRD serves',
      'apiVersion: gateway.networking.k8s.io/v2\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: g}]\n',
      /no matches for kind "HTTPRoute" in version "gateway\.networking\.k8s\.io\/v2"; did you mean HTTPRoute in gateway\.networking\.k8s\.io\/v1\?/,
    ],
    [
      'a GatewayClass without controllerName',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec: {}\n',
      /missing required field "controllerName" in spec/, // the CRD schema
    ],
    [
      'a spec.loadBalancerIP that is not an IP (ValidateService)',
      svc('lb', 'LoadBalancer', '    - port: 80\n', '  loadBalancerIP: somewhere\n'),
      /spec\.loadBalancerIP "somewhere" is not a valid IP address/,
    ],
  ])('an error, as the API server refuses it: %s', (_what, text, re) => {
    const errors = findingsOf(text).filter((f) => f.severity === 'error');
    expect(
      errors.some((f) => re.test(f.message)),
      JSON.stringify(errors),
    ).toBe(true);
  });

  it.each<[string, string, string, RegExp]>([
    [
      'an HTTPRoute hostname that is an IP (the Hostname pattern admits it)',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: g}]\n  hostnames: [192.0.2.1]\n',
      'route-hostname-skipped',
      /spec\.hostnames\[0\] "192\.0\.2\.1" is an IP address, which no Gateway matches as a host name; it is skipped/,
    ],
    [
      'a status ip that is not an IP (status is reset on create)',
      svc('lb', 'LoadBalancer', '    - port: 80\n') + 'status:\n  loadBalancer:\n    ingress: [{ip: 300.1.1.1}]\n',
      'status-value-skipped',
      /status\.loadBalancer\.ingress\[0\]\.ip "300\.1\.1\.1" is not an IP address, so this status entry is skipped/,
    ],
    [
      'a MetalLB annotation MetalLB cannot parse',
      svc('lb', 'LoadBalancer', '    - port: 80\n').replace('  name: lb\n', '  name: lb\n  annotations: {metallb.io/loadBalancerIPs: "192.0.2.7,nope"}\n'),
      'loadbalancer-refused',
      /MetalLB refuses its annotation metallb\.io\/loadBalancerIPs: "nope" is not an IP address, so the Service gets no LoadBalancer address/,
    ],
    [
      'a Gateway spec.addresses value that is not an IP (no CEL rule on it)',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n' +
        '  listeners: [{name: a, port: 80, protocol: HTTP}]\n  addresses: [{type: IPAddress, value: my-ip}]\n',
      'gateway-address-unusable',
      /spec\.addresses\[0\]\.value "my-ip" is not an IP address, so the Gateway controller would assign no address \(Programmed: False, AddressNotUsable\)/,
    ],
    [
      'from Selector without a selector',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n' +
        '  listeners: [{name: a, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector}}}]\n',
      'listener-no-selector',
      /selector is missing while from is Selector, so this listener admits no route/,
    ],
  ])('a warning, the object loads: %s', (_what, text, code, re) => {
    const { findings } = buildModel(doc(text));
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    const w = findings.find((f) => f.code === code)!;
    expect(w?.severity).toBe('warning');
    expect(w.message).toMatch(re);
  });

  it('an edge object with an error is consumed but not kept, so nothing of it is served', async () => {
    const { EdgeCollector } = await import('../../src/cluster/emulate/edge.js');
    const { Checker } = await import('../../src/cluster/admit/validate.js');
    const findings: Finding[] = [];
    const edge = new EdgeCollector();
    const meta = (name: string) => ({ name, namespace: 'default', labels: {}, annotations: {}, source: { file: 'm.yaml', line: 1 } });
    const read = (kind: string, group: string, o: Record<string, unknown>, name: string): boolean =>
      edge.read(kind, group, o, meta(name), new Checker(findings, { file: 'm.yaml', line: 1 }, kind));
    expect(read('Ingress', 'networking.k8s.io', { spec: { rules: [{ host: 'bad_host.example.com' }, { host: 'ok.example.com' }] } }, 'bad')).toBe(true);
    expect(read('Ingress', 'networking.k8s.io', { spec: { rules: [{ host: 'ok.example.com' }] } }, 'good')).toBe(true);
    const typed = { spec: { endpoints: [{ dnsName: 'a.example.com', recordType: 'A', targets: [1] }] } };
    expect(read('DNSEndpoint', 'externaldns.k8s.io', typed, 'typed')).toBe(true);
    const model = edge.build([], new Map(), { serviceCIDRs: ['10.96.0.0/12'], defaultNamespace: 'default' }, findings);
    expect(model.ingresses.map((i) => i.name)).toEqual(['good']);
    expect(model.dnsEndpoints).toEqual([]);
  });
});

describe('status is data: written statuses stay as written, only absent ones are filled', () => {
  const pendingSvc = svc('pending', 'LoadBalancer', '    - port: 80\n') + 'status:\n  loadBalancer: {}\n';
  const ingress = (name: string, cls: string, status = ''): string =>
    `---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ${name}}\n` +
    `spec:\n  ingressClassName: ${cls}\n  rules: [{host: ${name}.example.com}]\n${status}`;
  const gateway = (name: string, status = ''): string =>
    `---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: ${name}}\n` +
    `spec:\n  gatewayClassName: eg\n  listeners: [{name: http, port: 80, protocol: HTTP}]\n${status}`;

  it('a LoadBalancer Service dumped pending (status.loadBalancer: {}) gets no address; one without status gets a pool address', async () => {
    const { filledStatuses, pendingStatuses } = await import('../../src/cluster/emulate/edge.js');
    const text = pendingSvc + svc('fresh', 'LoadBalancer', '    - port: 80\n');
    const { model } = buildModel(doc(text));
    const pending = { addresses: [], origin: 'pending', reason: 'status.loadBalancer is written without ingress' };
    expect(model.edge!.serviceStatus.get('default/pending')).toEqual(pending);
    expect(model.services.find((s) => s.name === 'pending')!.loadBalancer).toBeUndefined();
    expect(model.edge!.serviceStatus.get('default/fresh')!.origin).toBe('pool');
    expect(pendingStatuses(model.edge, model.services)).toEqual([
      {
        source: { file: 'm.yaml', line: 2 },
        text:
          'Service "default/pending": pending, no address (status.loadBalancer is written without ingress); ' +
          'its k8s_external and k8s_gateway names resolve to nothing',
      },
    ]);
    const filled = filledStatuses(model.edge, model.services).map((n) => n.text);
    expect(filled).toEqual([expect.stringMatching(/^Service "default\/fresh": status\.loadBalancer 172\.18\.255\.\d+ \(LoadBalancer pool\)$/)]);
  });

  it('an Ingress dumped pending stays pending; so does one whose controller Service is pending', async () => {
    const { pendingStatuses } = await import('../../src/cluster/emulate/edge.js');
    const controller = `---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations: {clusterdns.io/publish-service: ingress-nginx/controller}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: v1
kind: Service
metadata: {name: controller, namespace: ingress-nginx}
spec:
  type: LoadBalancer
  ports: [{port: 80}]
status:
  loadBalancer: {}
`;
    const text = ingress('dumped', 'other', 'status:\n  loadBalancer: {}\n') + ingress('behind', 'nginx') + ingress('fresh', 'other') + controller;
    const { model, findings } = buildModel(doc(text));
    const st = (n: string) => model.edge!.ingresses.find((i) => i.name === n)!.status;
    expect(st('dumped')).toMatchObject({ addresses: [], origin: 'pending' });
    const reason = 'its controller\'s Service "ingress-nginx/controller" is pending, so the controller publishes no address';
    expect(st('behind')).toMatchObject({ addresses: [], origin: 'pending', reason });
    expect(st('fresh').origin).toBe('pool');
    const pending = pendingStatuses(model.edge, model.services).map((n) => n.text.split(':')[0]);
    expect(pending).toEqual(['Service "ingress-nginx/controller"', 'Ingress "default/behind"', 'Ingress "default/dumped"']);
    // The written-pending Ingress says nothing about its missing class; the filled one says info.
    // (at the object's first line, its apiVersion, two above its metadata)
    expect(findings.filter((f) => f.code === 'ingress-class-missing').map((f) => [f.line, f.severity])).toEqual([[lineOf(text, 'name: fresh') - 2, 'info']]);
  });

  it("a Gateway with a written status (the CRD's Pending conditions, or addresses: []) has no address; status: {} is filled", () => {
    const pendingConditions =
      'status:\n  conditions:\n' +
      '    - {type: Programmed, status: Unknown, reason: Pending, message: Waiting for controller, lastTransitionTime: "1970-01-01T00:00:00Z"}\n';
    const text = gateway('waiting', pendingConditions) + gateway('empty', 'status:\n  addresses: []\n') + gateway('blank', 'status: {}\n') + gateway('fresh');
    const { model, findings } = buildModel(doc(text));
    const st = (n: string) => model.edge!.gateways.find((g) => g.name === n)!.status;
    expect(st('waiting')).toEqual({ addresses: [], origin: 'pending', reason: 'its status is written without addresses' });
    expect(st('empty').origin).toBe('pending');
    expect(st('blank').origin).toBe('pool');
    expect(st('fresh').origin).toBe('pool');
    // A missing GatewayClass is info, and only where the pool stands in.
    const info = findings.filter((f) => f.code === 'gateway-class-missing');
    expect(info.map((f) => f.severity)).toEqual(['info', 'info']);
    expect(info[0]!.message).toMatch(
      /^Gateway "default\/blank": GatewayClass "eg" is not in the manifests \(its controller's chart installs it\); the LoadBalancer pool address 172\./,
    );
  });

  it('TLSRoute at v1, v1alpha3 and v1alpha2 attach alike', () => {
    const route = (v: string) =>
      `---\napiVersion: gateway.networking.k8s.io/${v}\nkind: TLSRoute\nmetadata: {name: r-${v}}\n` +
      `spec:\n  parentRefs: [{name: g}]\n  hostnames: [${v}.example.com]\n  rules: [{backendRefs: [{name: s, port: 443}]}]\n`;
    const gw =
      '---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  gatewayClassName: eg\n' +
      '  listeners: [{name: tls, port: 443, protocol: TLS, tls: {mode: Passthrough}}]\n';
    const { model } = buildModel(doc(gw + route('v1') + route('v1alpha3') + route('v1alpha2')));
    expect(model.edge!.routeHosts.map((h) => h.host).sort()).toEqual(['v1.example.com', 'v1alpha2.example.com', 'v1alpha3.example.com']);
  });
});
