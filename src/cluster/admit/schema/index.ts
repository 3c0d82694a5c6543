// Admission by schema: whether the API server would know an object's apiVersion and kind, and
// whether the object passes its kind's published OpenAPI schema, unknown fields included.

export { KindRegistry, namespacedByName } from './registry.js';
export type { FieldIssue, KindLookup, KindSource } from './types.js';
export { type CrdSchemaLimits, defaultCrdSchemaLimits } from './crd-schema.js';
export { groupOf } from './types.js';
