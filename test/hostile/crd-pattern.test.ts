// A CustomResourceDefinition in the manifests brings its own schema patterns. The API server
// matches them with Go's RE2, in linear time; so does clusterdns (RE2JS), so a catastrophic
// pattern and a crafted value cannot stall a load (a backtracking RegExp takes minutes here).
import { expect, it } from 'vitest';
import { buildModel } from '../../src/cluster/load.js';

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                name: {type: string, pattern: '^(a+)+$'}
`;

it('matches a manifest CRD pattern in linear time', () => {
  const value = `${'a'.repeat(5000)}b`;
  const t0 = performance.now();
  const { findings } = buildModel([
    { file: 'w.yaml', text: `${crd}---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {name: ${value}}\n` },
  ]);
  expect(performance.now() - t0).toBeLessThan(5000);
  expect(findings.filter((f) => f.severity === 'error').map((f) => f.code)).toEqual(['schema-pattern']);
});

it('applies no CRD schema larger than maxCrdSchemaNodes (--max-crd-schema-nodes): its kind is accepted unchecked, with a finding', () => {
  const text = `${crd}---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {name: b}\n`;
  const { model, findings } = buildModel([{ file: 'w.yaml', text }], { maxCrdSchemaNodes: 2 });
  expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
  expect(findings.some((f) => f.code === 'crd-schema-size' && f.message.includes('--max-crd-schema-nodes'))).toBe(true);
  expect(model.ignoredKinds?.get('Widget.example.com')).toBe(1);
});
