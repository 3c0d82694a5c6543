import { describe, it, expect } from 'vitest';
import { buildModel } from '../../src/cluster/load.js';

const withAnchors = `# Shared labels via an anchor
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels: &labels
    app: api
    tier: backend
spec:
  replicas: 2
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels  # the same map again
    spec:
      containers:
      - &container
        name: api
        image: api:1
        ports: [{name: http, containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api, tier: backend}  # anchors do not cross '---'
  ports:
  - name: http   # named, so SRV works
    port: 80
    targetPort: http
`;

describe('YAML inputs', () => {
  it('resolves anchors and aliases, ignores comments', () => {
    const { model, findings } = buildModel([{ file: 'a.yaml', text: withAnchors }]);
    expect(findings).toEqual([]);
    expect(model.pods).toHaveLength(2);
    for (const p of model.pods) expect(p.labels).toMatchObject({ app: 'api', tier: 'backend' });
    const svc = model.services[0]!;
    expect(svc.selector).toEqual({ app: 'api', tier: 'backend' });
    expect(svc.source.line).toBe(23);
    expect(model.endpointSlices[0]!.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
  });

  it('supports merge keys inside a document, and reports an alias to another document', () => {
    const text = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: base
    labels: &common {team: a}
  spec: &spec
    ports: [{name: http, port: 80}]
- apiVersion: v1
  kind: Service
  metadata:
    name: derived
    labels:
      <<: *common
      extra: "yes"
  spec: *spec
`;
    const { model } = buildModel([{ file: 'm.yaml', text }]);
    expect(model.services.find((s) => s.name === 'derived')!.labels).toEqual({ team: 'a', extra: 'yes' });
    expect(model.services.find((s) => s.name === 'derived')!.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80 }]);
    expect(model.services.find((s) => s.name === 'derived')!.source.line).toBe(11);
    const across =
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: &l {x: y}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b, labels: *l}\n';
    const acrossLoad = buildModel([{ file: 'x.yaml', text: across }]);
    expect(acrossLoad.findings.filter((f) => f.severity === 'error').map((f) => `${f.file}:${f.line}: ${f.message}`)).toEqual([
      expect.stringMatching(/^x\.yaml:7: YAML syntax error at line 7.*unknown alias "\*l"/),
    ]);
    expect([...acrossLoad.model.namespaces.keys()]).toEqual(['a']); // the other document still loads
  });

  it('reads Windows line endings with the right lines', () => {
    const crlf = withAnchors.replace(/\n/g, '\r\n');
    const { model, findings } = buildModel([{ file: 'w.yaml', text: crlf }]);
    expect(findings).toEqual([]);
    expect(model.services[0]!.source).toEqual({ file: 'w.yaml', line: 23 });
    expect(model.services[0]!.name).toBe('api');
    expect(model.pods).toHaveLength(2);
    expect(model.workloads![0]!.source.line).toBe(2);
    // Errors in a CRLF file are reported at the right line too.
    const bad =
      'apiVersion: v1\r\nkind: Service\r\nmetadata: {name: ok}\r\nspec: {ports: [{port: 80}]}\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata: {name: Bad_Name}\r\nspec: {ports: [{port: 80}]}\r\n';
    expect(buildModel([{ file: 'b.yaml', text: bad }]).findings.map((f) => [f.line, f.severity])).toEqual([[8, 'error']]); // the metadata line
    // A syntax error after a CRLF '---' is located as well.
    const broken = 'apiVersion: v1\r\nkind: Namespace\r\nmetadata: {name: ok}\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata: {name: [x}\r\n';
    expect(buildModel([{ file: 'c.yaml', text: broken }]).findings.map((f) => f.line)).toEqual([7]);
  });

  it('skips empty documents, comment-only documents and trailing separators', () => {
    const text = `---\n# nothing here\n---\n\n---\n${withAnchors}---\n---\n# end\n`;
    const { model } = buildModel([{ file: 'e.yaml', text }]);
    expect(model.services.map((s) => [s.name, s.source.line])).toEqual([['api', 28]]);
    expect(model.objectCount).toBe(2);
    expect(buildModel([{ file: 'empty.yaml', text: '' }]).model.objectCount).toBe(0);
    expect(buildModel([{ file: 'c.yaml', text: '# just a comment\r\n' }]).model.objectCount).toBe(0);
  });

  it('collects ignored kinds with counts (unknown kinds, CRDs, other API groups)', () => {
    const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: kn}
`;
    const { model, findings } = buildModel([{ file: 'k.yaml', text }]);
    // Ingress is read (src/cluster/edge.ts), so it is not listed; a CRD without a spec, a kind
    // no CRD defines (Widget: its CRD was rejected) and a Service of a group no API serves are
    // errors, as kubectl apply reports them.
    expect([...model.ignoredKinds!]).toEqual([['ConfigMap', 2]]);
    expect(findings.filter((f) => f.severity === 'error').map((f) => [f.line, f.code])).toEqual([
      [13, 'schema-required'],
      [18, 'unknown-kind'],
      [22, 'unknown-kind'],
    ]);
    expect(model.services).toEqual([]);
  });
});
