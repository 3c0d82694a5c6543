// Admission by schema (src/cluster/admission): which apiVersion/kind pairs a cluster knows, with
// kubectl's "no matches for kind" and a did-you-mean, and what the published OpenAPI schema of a
// kind says of an object: types, required fields, enums, formats and, as `kubectl apply
// --validate=strict`, unknown fields. Manifest CRDs add kinds with their own schemas.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KindRegistry, type FieldIssue, type KindLookup } from '../../src/cluster/admit/schema/index.js';
import { MODELS_MISSING_FIELDS } from '../../src/cluster/admit/schema/dropped-fields.js';
import { packageKind, packageKinds } from '../../src/cluster/admit/schema/package-kinds.js';

type Known = Extract<KindLookup, { known: true }>;

function known(reg: KindRegistry, apiVersion: string, kind: string): Known {
  const l = reg.lookup(apiVersion, kind);
  if (!l.known) throw new Error(`expected ${apiVersion} ${kind} to be known: ${l.message}`);
  return l;
}

function unknownMessage(reg: KindRegistry, apiVersion: string, kind: string): string {
  const l = reg.lookup(apiVersion, kind);
  if (l.known) throw new Error(`expected ${apiVersion} ${kind} to be unknown`);
  return l.message;
}

function validate(reg: KindRegistry, obj: Record<string, unknown>): FieldIssue[] {
  const l = known(reg, obj['apiVersion'] as string, obj['kind'] as string);
  if (!l.validate) throw new Error(`no schema for ${obj['kind']}`);
  return l.validate(obj);
}

const service = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec,
  ...extra,
});

const deployment = (container: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx', ...container }] } },
  },
});

describe('kind lookup', () => {
  const reg = KindRegistry.create();

  it('knows built-in kinds with their group, version and scope', () => {
    expect(known(reg, 'v1', 'Service')).toMatchObject({ group: '', version: 'v1', kind: 'Service', namespaced: true, source: 'builtin' });
    expect(known(reg, 'apps/v1', 'Deployment')).toMatchObject({ group: 'apps', version: 'v1', namespaced: true, source: 'builtin' });
    expect(known(reg, 'discovery.k8s.io/v1', 'EndpointSlice').namespaced).toBe(true);
    for (const [av, k] of [
      ['v1', 'Namespace'],
      ['v1', 'Node'],
      ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
      ['networking.k8s.io/v1', 'IngressClass'],
      ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
      ['storage.k8s.io/v1', 'StorageClass'],
      ['networking.k8s.io/v1', 'ServiceCIDR'],
    ] as const) {
      expect(known(reg, av, k).namespaced, `${av} ${k}`).toBe(false);
    }
    expect(known(reg, 'v1', 'Service').validate).toBeTypeOf('function');
  });

  it('knows Gateway API kinds, TLSRoute in v1 and v1alpha2; GatewayClass is cluster-scoped', () => {
    expect(known(reg, 'gateway.networking.k8s.io/v1', 'TLSRoute')).toMatchObject({ namespaced: true, source: 'known-crd' });
    expect(known(reg, 'gateway.networking.k8s.io/v1alpha2', 'TLSRoute').namespaced).toBe(true);
    expect(known(reg, 'gateway.networking.k8s.io/v1', 'HTTPRoute').validate).toBeTypeOf('function');
    expect(known(reg, 'gateway.networking.k8s.io/v1', 'GatewayClass').namespaced).toBe(false);
    expect(known(reg, 'gateway.networking.k8s.io/v1alpha2', 'TCPRoute').namespaced).toBe(true);
  });

  it('knows well-known CRDs by name, without a schema unless one is given', () => {
    const cert = known(reg, 'cert-manager.io/v1', 'Certificate');
    expect(cert).toMatchObject({ namespaced: true, source: 'known-crd' });
    expect(cert.validate).toBeUndefined();
    expect(known(reg, 'cert-manager.io/v1', 'ClusterIssuer').namespaced).toBe(false);
    expect(known(reg, 'monitoring.coreos.com/v1', 'ServiceMonitor').namespaced).toBe(true);
    expect(known(reg, 'multicluster.x-k8s.io/v1alpha1', 'ServiceImport').namespaced).toBe(true);
    expect(known(reg, 'externaldns.k8s.io/v1alpha1', 'DNSEndpoint').validate).toBeTypeOf('function');
  });

  it('says "no matches for kind" as kubectl does, with the nearest kind at its preferred version', () => {
    expect(unknownMessage(reg, 'v1', 'Sevice')).toBe('no matches for kind "Sevice" in version "v1"; did you mean Service in v1?');
    expect(unknownMessage(reg, 'apps/v1', 'Service')).toBe('no matches for kind "Service" in version "apps/v1"; did you mean Service in v1?');
    expect(unknownMessage(reg, 'v1', 'service')).toBe('no matches for kind "service" in version "v1"; did you mean Service in v1?');
    expect(unknownMessage(reg, 'apps/v1', 'Deploymnet')).toBe('no matches for kind "Deploymnet" in version "apps/v1"; did you mean Deployment in apps/v1?');
    expect(unknownMessage(reg, 'networking.k8s.io/v1', 'Ingres')).toBe(
      'no matches for kind "Ingres" in version "networking.k8s.io/v1"; did you mean Ingress in networking.k8s.io/v1?',
    );
  });

  it('treats versions Kubernetes removed as unknown, naming the current one', () => {
    expect(unknownMessage(reg, 'extensions/v1beta1', 'Ingress')).toBe(
      'no matches for kind "Ingress" in version "extensions/v1beta1"; did you mean Ingress in networking.k8s.io/v1?' +
        ' (extensions/v1beta1 Ingress was removed in Kubernetes 1.22)',
    );
    expect(unknownMessage(reg, 'apps/v1beta1', 'Deployment')).toContain('did you mean Deployment in apps/v1?');
  });

  it('advises installing the CRD when nothing is near', () => {
    expect(unknownMessage(reg, 'example.com/v1', 'Widget')).toBe(
      'no matches for kind "Widget" in version "example.com/v1";' +
        ' add its CustomResourceDefinition to the manifests, or fix the kind (kubectl: ensure CRDs are installed first)',
    );
    expect(unknownMessage(reg, 'cert-manager.io/v9', 'Certificate')).toContain('did you mean Certificate in cert-manager.io/v1?');
    expect(reg.lookup('v1/v2/v3', 'Service').known).toBe(false);
    expect(reg.lookup('../../etc', 'Passwd').known).toBe(false);
  });
});

describe('the kinds the packages ship', () => {
  it('are read from their model files: kinds, not lists or parts of kinds', () => {
    const all = packageKinds().map((k) => `${k.apiVersion} ${k.kind}`);
    expect(all.length).toBeGreaterThan(140);
    for (const k of [
      'v1 Service',
      'v1 Namespace',
      'discovery.k8s.io/v1 EndpointSlice',
      'apps/v1 Deployment',
      'networking.k8s.io/v1 Ingress',
      'gateway.networking.k8s.io/v1 TLSRoute',
      'gateway.networking.k8s.io/v1alpha2 TLSRoute',
      'gateway.networking.k8s.io/v1alpha2 UDPRoute',
    ]) {
      expect(all).toContain(k);
    }
    expect(all.filter((k) => k.endsWith('List') || k.endsWith(' ServiceSpec') || k.endsWith(' ObjectMeta'))).toEqual([]);
    expect(packageKind('', 'v1', 'Service')?.schemaFile).toMatch(/_schemas\/IoK8sApiCoreV1Service\.js$/);
    expect(packageKind('', 'v1', 'ServiceList')).toBeUndefined();
    expect(packageKind('', 'v1', 'ServiceSpec')).toBeUndefined();
    expect(packageKind('', 'v1', 'service')).toBeUndefined();
  });
});

describe('schema errors in words', () => {
  const reg = KindRegistry.create();

  it('a quoted number', () => {
    expect(validate(reg, service({ ports: [{ port: '80' }] }))).toEqual([
      { path: 'spec.ports[0].port', code: 'schema-type', message: 'spec.ports[0].port must be an integer, got "80"; write it without quotes' },
    ]);
  });

  it('a number where a string goes, a list where a mapping goes', () => {
    const issues = validate(reg, service({ ports: [{ port: 80, name: 8080 }], selector: ['app=web'] }));
    expect(issues).toEqual([
      { path: 'spec.ports[0].name', code: 'schema-type', message: 'spec.ports[0].name must be a string, got 8080; quote it' },
      { path: 'spec.selector', code: 'schema-type', message: 'spec.selector must be a mapping, got ["app=web"]; write a mapping (key: value), not a list' },
    ]);
  });

  it('a missing required field, with its path', () => {
    expect(validate(reg, service({ ports: [{ name: 'http' }] }))).toEqual([
      { path: 'spec.ports[0].port', code: 'schema-required', message: 'missing required field "port" in spec.ports[0]; add spec.ports[0].port' },
    ]);
  });

  it('a value outside an enum, with the allowed values and the likely one', () => {
    expect(validate(reg, service({ ports: [{ port: 80, protocol: 'tcp' }] }))).toEqual([
      {
        path: 'spec.ports[0].protocol',
        code: 'schema-enum',
        message: 'spec.ports[0].protocol must be one of "SCTP", "TCP", "UDP", got "tcp"; did you mean "TCP"?',
      },
    ]);
  });

  it('a format: an int32 out of range', () => {
    expect(validate(reg, service({ ports: [{ port: 80, nodePort: 3000000000 }] }))).toEqual([
      {
        path: 'spec.ports[0].nodePort',
        code: 'schema-format',
        message: 'spec.ports[0].nodePort must be an integer between -2147483648 and 2147483647, got 3000000000',
      },
    ]);
  });

  it('an IntOrString given a mapping: one message for the union', () => {
    expect(validate(reg, service({ ports: [{ port: 80, targetPort: { number: 8080 } }] }))).toEqual([
      { path: 'spec.ports[0].targetPort', code: 'schema-type', message: 'spec.ports[0].targetPort must be a string or an integer, got {"number":8080}' },
    ]);
  });

  it('null optional fields are accepted (the API server drops them), also under an enum', () => {
    expect(validate(reg, service({ ports: [{ port: 80, protocol: null, nodePort: null, name: null }], selector: null }))).toEqual([]);
  });

  it('ignores apiVersion and kind (the lookup matched them, or the loader read a legacy version as current)', () => {
    const ingress = known(reg, 'networking.k8s.io/v1', 'Ingress').validate!;
    expect(ingress({ apiVersion: 'extensions/v1beta1', kind: 'Ingress', metadata: { name: 'x' }, spec: { ingressClassName: 'nginx' } })).toEqual([]);
  });
});

describe('unknown fields (kubectl apply --validate=strict)', () => {
  const reg = KindRegistry.create();

  it('in spec, with the nearest declared field', () => {
    expect(validate(reg, service({ portz: [{ port: 80 }] }))).toEqual([
      { path: 'spec.portz', code: 'unknown-field', message: 'unknown field "spec.portz"; did you mean "ports"? (kubectl apply --validate=strict rejects it)' },
    ]);
  });

  it('in spec.ports[1], learned from an earlier object that had none', () => {
    expect(validate(reg, service({ type: 'ClusterIP' }))).toEqual([]);
    expect(validate(reg, service({ ports: [{ port: 80 }, { port: 81, nme: 'b' }] })).map((i) => i.message)).toEqual([
      'unknown field "spec.ports[1].nme"; did you mean "name"? (kubectl apply --validate=strict rejects it)',
    ]);
  });

  it('at the top, in metadata and in status', () => {
    const issues = validate(reg, service({ ports: [{ port: 80 }] }, { metdata: {}, status: { loadBalancer: { ingres: [] } } }));
    expect(issues.map((i) => i.path)).toEqual(['metdata', 'status.loadBalancer.ingres']);
    expect(validate(reg, { ...service({}), metadata: { name: 'a', lables: { a: 'b' } } }).map((i) => i.message)).toEqual([
      'unknown field "metadata.lables"; did you mean "labels"? (kubectl apply --validate=strict rejects it)',
    ]);
  });

  it('deep in a pod template: spec.template.spec.containers[0]', () => {
    const issues = validate(reg, deployment({ imagePullPolicy: 'IfNotPresent', prots: [{ containerPort: 80 }], resources: { limits: { cpu: '1' } } }));
    expect(issues).toEqual([
      {
        path: 'spec.template.spec.containers[0].prots',
        code: 'unknown-field',
        message: 'unknown field "spec.template.spec.containers[0].prots"; did you mean "ports"? (kubectl apply --validate=strict rejects it)',
      },
    ]);
    expect(validate(reg, deployment({ ports: [{ containerPort: 80, protocl: 'TCP' }] })).map((i) => i.path)).toEqual([
      'spec.template.spec.containers[0].ports[0].protocl',
    ]);
  });

  it('a field far from every declared one gets no guess', () => {
    expect(validate(reg, service({ ports: [{ port: 80 }], frobnicate: true }))[0]?.message).toBe(
      'unknown field "spec.frobnicate"; remove it or fix its indentation (kubectl apply --validate=strict rejects it)',
    );
  });

  it('maps (labels, annotations, selector, resources) and free-form values (fieldsV1) take any key', () => {
    const obj = service(
      { ports: [{ port: 80 }], selector: { 'app.kubernetes.io/name': 'web', anything: 'x' } },
      {
        metadata: {
          name: 'web',
          labels: { 'app.kubernetes.io/name': 'web', 'x.y/z': 'q' },
          annotations: { 'example.com/any': 'thing' },
          managedFields: [
            { manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:ports': { 'k:{"port":80}': { '.': {} } } } } },
          ],
        },
      },
    );
    expect(validate(reg, obj)).toEqual([]);
    expect(validate(reg, deployment({ resources: { limits: { cpu: '1', 'nvidia.com/gpu': '1' }, requests: { memory: '1Gi' } } }))).toEqual([]);
  });

  it('managedFields are not schema-checked (the API server replaces ones that do not decode); their unknown fields are', () => {
    const entry = { manager: 'm', operation: 'Sideways', time: 'yesterday', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } };
    expect(validate(reg, service({ ports: [{ port: 80 }] }, { metadata: { name: 'web', managedFields: [entry] } }))).toEqual([]);
    const misspelt = service({ ports: [{ port: 80 }] }, { metadata: { name: 'web', managedFields: [{ ...entry, managr: 'x' }] } });
    expect(validate(reg, misspelt).map((i) => i.path)).toEqual(['metadata.managedFields[0].managr']);
  });

  it('kubectl get -o yaml output (managedFields, status, nulls) passes with no issue', () => {
    const text = readFileSync('test/fixtures/admission/kubectl-get.yaml', 'utf8');
    const objs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
    expect(objs.map((o) => o['kind'])).toEqual(['Service', 'Deployment', 'EndpointSlice', 'Pod']);
    for (const o of objs) expect(validate(KindRegistry.create(), o), String(o['kind'])).toEqual([]);
    for (const o of objs) expect(validate(reg, o), String(o['kind'])).toEqual([]);
  });

  it('Gateway API: unknown fields and enums in a TLSRoute', () => {
    const route = {
      apiVersion: 'gateway.networking.k8s.io/v1alpha2',
      kind: 'TLSRoute',
      metadata: { name: 'r' },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'svc', port: 443, wieght: 1 }] }] },
    };
    expect(validate(reg, route).map((i) => i.message)).toEqual([
      'unknown field "spec.rules[0].backendRefs[0].wieght"; did you mean "weight"? (kubectl apply --validate=strict rejects it)',
    ]);
  });
});

describe('CustomResourceDefinitions in the manifests', () => {
  const crd = (schema: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      scope: 'Namespaced',
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } },
        { name: 'v1beta1', served: false, storage: false, schema: { openAPIV3Schema: schema } },
      ],
      ...extra,
    },
  });
  const widgetSchema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', minimum: 1, maximum: 10 },
          color: { type: 'string', enum: ['red', 'blue'] },
          host: { type: 'string', pattern: '^[a-z.]+$' },
          port: { 'x-kubernetes-int-or-string': true },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
          items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        },
      },
      status: { type: 'object', properties: { ready: { type: 'boolean' } } },
    },
  };
  const widget = (spec: Record<string, unknown>, apiVersion = 'example.com/v1'): Record<string, unknown> => ({
    apiVersion,
    kind: 'Widget',
    metadata: { name: 'w', labels: { a: 'b' } },
    spec,
  });

  it('registers the kind for its served versions only', () => {
    const reg = KindRegistry.create();
    expect(reg.lookup('example.com/v1', 'Widget').known).toBe(false);
    expect(reg.addCrd(crd(widgetSchema))).toEqual([]);
    expect(known(reg, 'example.com/v1', 'Widget')).toMatchObject({ group: 'example.com', version: 'v1', namespaced: true, source: 'manifest-crd' });
    expect(unknownMessage(reg, 'example.com/v1beta1', 'Widget')).toBe(
      'no matches for kind "Widget" in version "example.com/v1beta1"; did you mean Widget in example.com/v1?',
    );
    expect(unknownMessage(reg, 'example.com/v1', 'Widgte')).toContain('did you mean Widget in example.com/v1?');
    reg.addCrd(crd(widgetSchema, { scope: 'Cluster', names: { kind: 'Gadget', plural: 'gadgets' } }));
    expect(known(reg, 'example.com/v1', 'Gadget').namespaced).toBe(false);
  });

  it('enforces its schema: type, required, range, enum, pattern, int-or-string', () => {
    const reg = KindRegistry.create();
    reg.addCrd(crd(widgetSchema));
    expect(validate(reg, widget({ size: 3, color: 'red', host: 'a.b', port: 'http', items: [{ name: 'x' }] }))).toEqual([]);
    expect(validate(reg, widget({ size: '3' }))[0]?.message).toBe('spec.size must be an integer, got "3"; write it without quotes');
    expect(validate(reg, widget({}))).toEqual([
      { path: 'spec.size', code: 'schema-required', message: 'missing required field "size" in spec; add spec.size' },
    ]);
    expect(validate(reg, widget({ size: 11 }))).toEqual([{ path: 'spec.size', code: 'schema-range', message: 'spec.size must be <= 10, got 11' }]);
    expect(validate(reg, widget({ size: 1, color: 'Red' }))[0]?.message).toBe('spec.color must be one of "red", "blue", got "Red"; did you mean "red"?');
    expect(validate(reg, widget({ size: 1, host: 'A_B' }))[0]).toMatchObject({ path: 'spec.host', code: 'schema-pattern' });
    expect(validate(reg, widget({ size: 1, port: 1.5 }))[0]?.message).toBe('spec.port must be an integer or a string, got 1.5');
    expect(validate(reg, widget({ size: 1, color: null }))).toEqual([]);
  });

  it('reports unknown fields (pruned by the API server), but not under preserve-unknown-fields or in maps', () => {
    const reg = KindRegistry.create();
    reg.addCrd(crd(widgetSchema));
    expect(validate(reg, widget({ size: 1, colour: 'red', items: [{ name: 'a', nmae: 'b' }] })).map((i) => i.message)).toEqual([
      'unknown field "spec.colour"; did you mean "color"? (kubectl apply --validate=strict rejects it)',
      'unknown field "spec.items[0].nmae"; did you mean "name"? (kubectl apply --validate=strict rejects it)',
    ]);
    expect(validate(reg, widget({ size: 1, extra: { any: { thing: [1, { at: 'all' }] } }, tags: { x: 'y' } }))).toEqual([]);
    expect(validate(reg, { ...widget({ size: 1 }), status: { ready: true, phase: 'x' } }).map((i) => i.path)).toEqual(['status.phase']);
  });

  it('fills in defaults before validating, as the API server does (a oneOf on a defaulted field)', () => {
    const reg = KindRegistry.create();
    // The shape of Gateway API's spec.addresses: type defaults to IPAddress, whose value must be an IP.
    const address = {
      type: 'object',
      properties: { type: { type: 'string', default: 'IPAddress' }, value: { type: 'string' } },
      oneOf: [
        { properties: { type: { enum: ['IPAddress'] }, value: { anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] } } },
        { properties: { type: { not: { enum: ['IPAddress'] } } } },
      ],
    };
    reg.addCrd(crd({ type: 'object', properties: { spec: { type: 'object', properties: { addresses: { type: 'array', items: address } } } } }));
    expect(validate(reg, widget({ addresses: [{ value: '2001:DB8::1' }, { value: '10.0.0.1' }, { type: 'Hostname', value: 'a.example' }] }))).toEqual([]);
    expect(validate(reg, widget({ addresses: [{ value: 'a.example' }] }))[0]).toMatchObject({ path: 'spec.addresses[0]', code: 'schema-one-of' });
  });

  it('a schema with x-kubernetes-preserve-unknown-fields at the root accepts anything', () => {
    const reg = KindRegistry.create();
    reg.addCrd(crd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
    expect(validate(reg, widget({ whatever: { you: 'like' } }))).toEqual([]);
  });

  it('overrides a well-known CRD of the same group and kind', () => {
    const reg = KindRegistry.create();
    const issues = reg.addCrd({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'certificates.cert-manager.io' },
      spec: {
        group: 'cert-manager.io',
        names: { kind: 'Certificate', plural: 'certificates' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', required: ['secretName'], properties: { secretName: { type: 'string' } } } },
              },
            },
          },
        ],
      },
    });
    expect(issues).toEqual([]);
    const l = known(reg, 'cert-manager.io/v1', 'Certificate');
    expect(l.source).toBe('manifest-crd');
    expect(l.validate!({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c' }, spec: {} })[0]?.code).toBe('schema-required');
  });

  it('reports a CRD of the wrong shape or with a schema that cannot be applied', () => {
    const reg = KindRegistry.create();
    expect(reg.addCrd({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x' } })).toEqual([
      { path: 'spec', code: 'crd-invalid', message: 'spec is missing; a CustomResourceDefinition needs spec.group, spec.names, spec.scope and spec.versions' },
    ]);
    const schema = { type: 'object', properties: { spec: { type: 'map', properties: { a: { type: 'string', pattern: '([a-z' } } } } };
    const bad = reg.addCrd(crd(schema, { group: 'nodot' }));
    expect(bad.map((i) => i.path)).toEqual([
      'spec.group',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.type',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.pattern',
    ]); // the version not served (v1beta1) is not read
    expect(bad.every((i) => i.code === 'crd-invalid' || i.code === 'crd-schema')).toBe(true);
  });
});

describe('DNSEndpoint (external-dns)', () => {
  it('accepts any string target, as its CRD does, and checks the rest of its schema', () => {
    const reg = KindRegistry.create();
    const ep = (endpoint: Record<string, unknown>): Record<string, unknown> => ({
      apiVersion: 'externaldns.k8s.io/v1alpha1',
      kind: 'DNSEndpoint',
      metadata: { name: 'e', namespace: 'default' },
      spec: { endpoints: [{ dnsName: 'app.example.com', recordType: 'A', ...endpoint }] },
    });
    expect(validate(reg, ep({ targets: ['not-an-ip'], recordTTL: 60, labels: { owner: 'x' }, providerSpecific: [{ name: 'n', value: 'v' }] }))).toEqual([]);
    expect(validate(reg, ep({ targets: '1.2.3.4' }))[0]?.message).toBe(
      'spec.endpoints[0].targets must be a list, got "1.2.3.4"; write a list (items starting with "- ")',
    );
    expect(validate(reg, ep({ targets: ['1.2.3.4'], ttl: 60 }))[0]?.message).toBe(
      'unknown field "spec.endpoints[0].ttl"; remove it or fix its indentation (kubectl apply --validate=strict rejects it)',
    );
  });
});

describe('fields the packaged validators never read', () => {
  it('are only description and x-kubernetes-* of the models dropped-fields.ts names', () => {
    // Each model's .d.ts declares its properties; its validator reads each as `data.NAME` or
    // `data["NAME"]`.
    const require = createRequire(import.meta.url);
    const missing = new Set<string>();
    let models = 0;
    for (const pkg of ['kubernetes-models', '@kubernetes-models/gateway-api', '@kubernetes-models/apimachinery']) {
      const root = dirname(require.resolve(`${pkg}/package.json`));
      const walk = (dir: string, depth: number): void => {
        for (const e of readdirSync(dir, { withFileTypes: true })) {
          if (e.isDirectory() && e.name !== '_schemas' && depth < 4) walk(join(dir, e.name), depth + 1);
          if (!e.isFile() || !/^[A-Z].*\.js$/.test(e.name)) continue;
          const m = /from"([^"]*_schemas\/[A-Za-z0-9]+\.js)"/.exec(readFileSync(join(dir, e.name), 'utf8'));
          const dts = join(dir, e.name.replace(/\.js$/, '.d.ts'));
          if (!m || !existsSync(dts)) continue;
          const iface = /export interface I\w+ \{\n([\s\S]*?)\n\}/.exec(readFileSync(dts, 'utf8'));
          if (!iface) continue;
          const code = readFileSync(normalize(join(dir, m[1]!)), 'utf8');
          models++;
          for (const [, prop] of iface[1]!.matchAll(/^ {4}"([^"]+)"\??:/gm)) {
            if (!code.includes(`data.${prop}`) && !code.includes(`data["${prop}"]`)) missing.add(`${e.name.slice(0, -3)}.${prop}`);
          }
        }
      };
      walk(root, 0);
    }
    expect(models).toBeGreaterThan(500);
    expect(missing.size).toBeGreaterThan(0);
    for (const m of missing) {
      const [model, prop] = m.split('.') as [string, string];
      expect(MODELS_MISSING_FIELDS as readonly string[], m).toContain(model);
      expect(prop === 'description' || prop.startsWith('x-kubernetes-'), m).toBe(true);
    }
  });

  it('so a CRD with descriptions and x-kubernetes-* keywords, and a GatewayClass description, pass', () => {
    const reg = KindRegistry.create();
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'the size' }],
            schema: {
              openAPIV3Schema: {
                type: 'object',
                description: 'A widget.',
                externalDocs: { description: 'docs', url: 'https://example.com' },
                properties: {
                  spec: {
                    type: 'object',
                    description: 'Spec.',
                    'x-kubernetes-preserve-unknown-fields': true,
                    'x-kubernetes-validations': [{ rule: 'self.size > 0', message: 'positive' }],
                    properties: {
                      port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                      list: {
                        type: 'array',
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['name'],
                        items: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
                      },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    expect(validate(reg, crd)).toEqual([]);
    expect(validate(reg, { ...crd, spec: { ...crd.spec, descripton: 'x' } }).map((i) => i.path)).toEqual(['spec.descripton']);
    const gc = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'gc' },
      spec: { controllerName: 'example.com/gw', description: 'the class' },
    };
    expect(validate(reg, gc)).toEqual([]);
  });
});
