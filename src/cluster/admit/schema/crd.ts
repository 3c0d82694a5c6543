// A CustomResourceDefinition (apiextensions.k8s.io/v1) read for the kinds it adds: group, kind,
// scope, the served versions and each one's schema. The fields and rules are those of
// apiextensions/v1 CustomResourceDefinitionSpec (k8s.io/apiextensions-apiserver
// pkg/apis/apiextensions/validation: ValidateCustomResourceDefinitionSpec), reduced to what
// decides which objects are admitted.

import { CrdSchema, type CrdSchemaLimits } from './crd-schema.js';
import type { FieldIssue } from './types.js';
import { pushAll } from '../../../pkg/arrays.js';

const isRec = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface CrdVersion {
  readonly name: string;
  /** The prepared schema; undefined when the version has none or it cannot be applied. */
  readonly schema?: CrdSchema;
}

export interface CrdKind {
  readonly group: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Served versions only, in the order written. */
  readonly versions: readonly CrdVersion[];
}

const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;
const VERSION = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const bad = (path: string, message: string): FieldIssue => ({ path, message, code: 'crd-invalid' });

/** The kind a CRD object defines, or the issues that keep it from defining one. */
export function readCrd(obj: unknown, limits?: CrdSchemaLimits): { crd?: CrdKind; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  if (!isRec(obj)) return { issues: [bad('', 'a CustomResourceDefinition must be a mapping')] };
  const spec = obj['spec'];
  if (!isRec(spec)) return { issues: [bad('spec', 'spec is missing; a CustomResourceDefinition needs spec.group, spec.names, spec.scope and spec.versions')] };
  const group = spec['group'];
  if (typeof group !== 'string' || !GROUP.test(group) || group.length > 253) {
    issues.push(bad('spec.group', 'spec.group must be a DNS subdomain with at least one dot, such as example.com'));
  }
  const names = isRec(spec['names']) ? spec['names'] : undefined;
  const kind = names?.['kind'];
  if (typeof kind !== 'string' || !KIND.test(kind)) issues.push(bad('spec.names.kind', 'spec.names.kind must be a CamelCase kind name such as MyResource'));
  const scope = spec['scope'];
  if (scope !== 'Namespaced' && scope !== 'Cluster') issues.push(bad('spec.scope', 'spec.scope must be "Namespaced" or "Cluster"'));
  if (spec['preserveUnknownFields'] === true) {
    const fix = 'set x-kubernetes-preserve-unknown-fields: true in the schema instead';
    issues.push(bad('spec.preserveUnknownFields', `spec.preserveUnknownFields: true is not allowed in apiextensions.k8s.io/v1; ${fix}`));
  }
  const list = spec['versions'];
  if (!Array.isArray(list) || list.length === 0) {
    issues.push(bad('spec.versions', 'spec.versions must list at least one version'));
    return { issues };
  }
  const versions: CrdVersion[] = [];
  let storage = 0;
  list.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (!isRec(v) || typeof v['name'] !== 'string' || !VERSION.test(v['name'])) {
      issues.push(bad(`${at}.name`, `${at}.name must be a version name such as v1 or v1alpha1`));
      return;
    }
    if (v['storage'] === true) storage++;
    if (v['served'] !== true) return;
    const sch = isRec(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
    if (sch === undefined) {
      issues.push(bad(`${at}.schema.openAPIV3Schema`, `${at}.schema.openAPIV3Schema is required in apiextensions.k8s.io/v1; add the version's schema`));
      versions.push({ name: v['name'] });
      return;
    }
    const prepared = CrdSchema.prepare(sch, `${at}.schema.openAPIV3Schema`, limits);
    pushAll(issues, prepared.issues);
    versions.push({ name: v['name'], ...(prepared.schema ? { schema: prepared.schema } : {}) });
  });
  if (storage !== 1) issues.push(bad('spec.versions', 'exactly one of spec.versions must have storage: true'));
  if (typeof group !== 'string' || typeof kind !== 'string' || (scope !== 'Namespaced' && scope !== 'Cluster') || versions.length === 0) return { issues };
  if (!GROUP.test(group) || !KIND.test(kind)) return { issues };
  return { crd: { group, kind, namespaced: scope === 'Namespaced', versions }, issues };
}
