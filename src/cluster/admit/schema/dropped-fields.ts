// Fields kubernetes-models' validators never read although the API declares them: its generator
// strips the schema keywords `description` and `x-kubernetes-*`, and with them the properties of
// those names. Field learning (field-shapes.ts) would call them unknown. Found by comparing each
// model's .d.ts with its validator; test/cluster/admission-schema.test.ts repeats the comparison,
// so a package upgrade that changes the list fails there. The models are JSONSchemaProps,
// ExternalDocumentation and CustomResourceColumnDefinition (in CustomResourceDefinition),
// GatewayClassSpec and MeshSpec (XMesh).

/** Models whose validators miss these properties. */
export const MODELS_MISSING_FIELDS = ['JSONSchemaProps', 'ExternalDocumentation', 'CustomResourceColumnDefinition', 'GatewayClassSpec', 'MeshSpec'] as const;

const KINDS = new Set(['CustomResourceDefinition', 'GatewayClass', 'XMesh']);

/** Whether `field` of an object of `kind` is declared though its validator never reads it. */
export function droppedField(kind: string, field: string): boolean {
  return KINDS.has(kind) && (field === 'description' || field.startsWith('x-kubernetes-'));
}
