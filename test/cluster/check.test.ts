import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { buildModel } from '../../src/cluster/load.js';
import { checkManifests, checkModel, fieldLineReader } from '../../src/cluster/check.js';
import type { Finding } from '../../src/cluster/model/finding.js';

const FIXTURES = 'test/fixtures/manifests';

/** The model checks of one file's text, findings about a field placed at the field's line. */
function check(text: string, options?: Parameters<typeof buildModel>[1]): Finding[] {
  return checkModel(
    buildModel([{ file: 'c.yaml', text }], options).model,
    fieldLineReader((f) => (f === 'c.yaml' ? text : undefined)),
  );
}
const codes = (f: Finding[]): (string | undefined)[] => f.map((x) => x.code);
/** The errors loading one file's text found (objects the API server would reject, left out). */
const loadErrors = (text: string): string[] =>
  buildModel([{ file: 'c.yaml', text }])
    .findings.filter((f) => f.severity === 'error')
    .map((f) => `${f.file}:${f.line}: ${f.message}`);

const workload = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c, image: i, ports: [{name: http, containerPort: 8080}]}]}
`;

describe('checkModel', () => {
  it('is quiet for a healthy chart', () => {
    const notInfo = (f: Finding[]): Finding[] => f.filter((x) => x.severity !== 'info');
    expect(notInfo(checkManifests([join(FIXTURES, 'helm')]).findings)).toEqual([]);
    expect(notInfo(checkManifests([join(FIXTURES, 'dump')]).findings)).toEqual([]);
  });

  it('warns about a selector that matches no pods', () => {
    const f = check(`${workload}---
apiVersion: v1
kind: Service
metadata: {name: typo}
spec:
  selector: {app: apii}
  ports: [{name: http, port: 80}]
`);
    expect(f).toEqual([
      {
        file: 'c.yaml',
        line: 14, // spec.selector, not the Service's first line
        severity: 'warning',
        code: 'selector-no-pods',
        message: expect.stringMatching(
          /Service "default\/typo": selector app=apii matches no pods in namespace "default".*cluster IP resolves but connections to it fail.*make the selector match/,
        ),
        object: { kind: 'Service', namespace: 'default', name: 'typo' },
      },
    ]);
    // Without a way to read the field's line, the Service's own line.
    expect(
      checkModel(
        buildModel([
          {
            file: 'c.yaml',
            text: `${workload}---\napiVersion: v1\nkind: Service\nmetadata: {name: typo}\nspec: {selector: {app: apii}, ports: [{port: 80}]}\n`,
          },
        ]).model,
      )[0],
    ).toMatchObject({ line: 10 });
  });

  it('warns about a named targetPort no container declares', () => {
    const f = check(`${workload}---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports:
  - {name: http, port: 80, targetPort: http}
  - {name: grpc, port: 9000, targetPort: grpc}
  - {name: udp, port: 81, protocol: UDP, targetPort: http}
`);
    expect(codes(f)).toEqual(['target-port-undeclared', 'target-port-undeclared']);
    expect(f.map((x) => x.line)).toEqual([17, 18]); // each port's line
    expect(f[0]).toMatchObject({ file: 'c.yaml', severity: 'warning' });
    expect(f[0]!.message).toMatch(
      /targetPort "grpc" \(port "grpc"\) is not declared by any container of the selected pods.*SRV _grpc\._tcp\.api\.default\.svc.*add a container port named "grpc" with protocol TCP/,
    );
    expect(f[1]!.message).toMatch(/targetPort "http" \(port "udp"\).*protocol UDP/);
  });

  it('suggests the declared port name a targetPort is a typo of', () => {
    const f = check(`${workload}---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports:
  - name: web
    port: 80
    targetPort: htpp
  - {name: other, port: 81, targetPort: metrics}
`);
    expect(f.map((x) => [x.line, x.code])).toEqual([
      [18, 'target-port-undeclared'],
      [19, 'target-port-undeclared'],
    ]);
    expect(f[0]!.message).toMatch(
      /targetPort "htpp" .*; did you mean "http"\? The pods declare a container port named "http"; use that name, or add a container port named "htpp"/,
    );
    expect(f[1]!.message).not.toMatch(/did you mean/);
  });

  it('reports service and namespace names that are not DNS labels (as load errors)', () => {
    const r = checkManifests([join(FIXTURES, 'errors', 'many.yaml')]);
    expect(r.model!.rejected!.length).toBeGreaterThan(0); // the rest of the file loads
    expect(r.findings.filter((f) => /not a valid DNS-10(35|123) label/.test(f.message)).map((f) => f.severity)).toEqual(['error', 'error']);
    // A namespace that only the defaultNamespace option introduces is checked by checkModel.
    const f = check('apiVersion: v1\nkind: Service\nmetadata: {name: ok}\nspec: {ports: [{name: a, port: 1}]}\n', { defaultNamespace: 'Bad_NS' });
    expect(codes(f)).toEqual(['invalid-dns-label']);
    expect(f[0]!.message).toMatch(/namespace "Bad_NS" is not a valid DNS label/);
  });

  it('warns about an ExternalName that is an IP address', () => {
    const f = check('apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec: {type: ExternalName, externalName: 10.0.0.5}\n');
    expect(f).toEqual([expect.objectContaining({ line: 1, code: 'externalname-ip', message: expect.stringMatching(/is an IP address; DNS answers a CNAME/) })]);
    // An IPv6 address is no DNS-1123 subdomain: the API server rejects it (a load error).
    expect(loadErrors('apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec: {type: ExternalName, externalName: "2001:db8::1"}\n')).toEqual([
      expect.stringMatching(/spec\.externalName "2001:db8::1" is not a valid DNS-1123 subdomain/),
    ]);
    expect(check('apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec: {type: ExternalName, externalName: db.example.com}\n')).toEqual([]);
  });

  it('warns about a headless service without ready endpoints', () => {
    const text = `${workload.replace('metadata: {labels: {app: api}}', 'metadata: {labels: {app: api}, annotations: {clusterdns.io/ready: "false"}}')}---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  clusterIP: None
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: manual}
spec:
  clusterIP: None
  ports: [{name: http, port: 80}]
`;
    const f = check(text);
    expect(f.map((x) => [x.line, x.code])).toEqual([
      [10, 'headless-no-ready-endpoints'],
      [18, 'headless-no-ready-endpoints'],
    ]);
    expect(f[0]!.message).toMatch(/"api\.default\.svc" answers NXDOMAIN; make the selected pods ready \(or set spec\.publishNotReadyAddresses: true\)/);
    expect(f[1]!.message).toMatch(/add an EndpointSlice with ready endpoints/);
    // Not-ready pods are published: then the advice to publish them would be no advice.
    const published = check(text.replace('clusterIP: None\n  selector', 'clusterIP: None\n  publishNotReadyAddresses: true\n  selector'));
    expect(published.map((x) => x.line)).toEqual([19]);
    const gone = check(text.replace('clusterIP: None\n  selector: {app: api}', 'clusterIP: None\n  publishNotReadyAddresses: true\n  selector: {app: gone}'));
    expect(gone.map((x) => [x.line, x.code])).toEqual([
      [10, 'headless-no-ready-endpoints'],
      [16, 'selector-no-pods'],
      [19, 'headless-no-ready-endpoints'],
    ]);
    expect(gone[0]!.message).toMatch(/NXDOMAIN; spec\.publishNotReadyAddresses is already set, so the selected pods are missing or have no address/);
    expect(gone[0]!.message).not.toMatch(/or set spec\.publishNotReadyAddresses/);
  });

  it('warns about the unnamed port of a headless service (unnamed ports of a multi-port one are load errors)', () => {
    expect(loadErrors('apiVersion: v1\nkind: Service\nmetadata: {name: multi}\nspec:\n  ports: [{port: 80}, {name: https, port: 443}]\n')).toEqual([
      expect.stringMatching(/^c\.yaml:5: Service "default\/multi": spec\.ports\[0\]\.name is missing; a Service with more than one port must name every port/),
    ]);
    const f = check(`apiVersion: v1
kind: Service
metadata: {name: single}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: hl}
spec:
  clusterIP: None
  ports: [{port: 53, protocol: UDP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hl-1, labels: {kubernetes.io/service-name: hl}}
addressType: IPv4
endpoints: [{addresses: [10.1.1.1]}]
`);
    expect(f.map((x) => [x.line, x.code])).toEqual([[7, 'unnamed-port']]);
    expect(f[0]!.message).toMatch(/its port 53\/UDP has no name, so there is no SRV record _<name>\._udp\.hl\.default\.svc.*give the port a name/);
  });

  it('warns about names longer than 63 characters', () => {
    const long = 's'.repeat(62);
    const f = check(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${long}}
spec:
  replicas: 2
  serviceName: svc
  selector: {matchLabels: {app: x}}
  template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: i}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: ${'p'.repeat(64)}}
spec: {containers: [{name: c, image: i}]}
`);
    expect(f.map((x) => [x.line, x.code])).toEqual([
      [1, 'name-too-long'],
      [10, 'name-too-long'],
    ]);
    expect(f[0]!.message).toMatch(new RegExp(`pod names "${long}-0", "${long}-1" are longer than 63`));
  });

  it('checkManifests merges load warnings and model checks, sorted by file and line', () => {
    const r = checkManifests([join(FIXTURES, 'check')]);
    expect(r.model).toBeDefined();
    expect(r.findings.map((f) => [f.file.split('/').pop(), f.line, f.severity, f.code ?? 'load'])).toEqual([
      ['app.yaml', 20, 'warning', 'selector-no-pods'], // the Service's spec.selector line
      ['app.yaml', 26, 'warning', 'load'], // the EndpointSlice's metadata (it has no labels)
    ]);
  });
});
