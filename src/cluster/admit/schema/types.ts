// The admission contract: what the loader asks of one manifest object and what it gets back.

export interface FieldIssue {
  /** The field in Positions form ('spec.ports[0].port', 'metadata.labels'; '' for the object itself). */
  readonly path: string;
  /** What is wrong and the fix, without the object's name (the caller prefixes it). */
  readonly message: string;
  /** Stable id: 'schema-type', 'schema-required', 'schema-enum', 'schema-format', 'unknown-field', ... */
  readonly code: string;
}

export type KindSource = 'builtin' | 'known-crd' | 'manifest-crd';

export type KindLookup =
  | {
      readonly known: true;
      readonly group: string;
      readonly version: string;
      readonly kind: string;
      readonly namespaced: boolean;
      readonly source: KindSource;
      /** undefined when no schema is available (a known CRD we only know by name) */
      readonly validate?: (obj: unknown) => FieldIssue[];
    }
  | { readonly known: false; readonly message: string };

/** An ajv validate function as the precompiled and the compiled validators both are. */
export interface AjvValidate {
  (data: unknown): boolean;
  errors?: readonly AjvError[] | null;
}

/** The fields of an ajv error this module reads. */
export interface AjvError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly message?: string;
}

export const groupOf = (apiVersion: string): string => {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
};

export const versionOf = (apiVersion: string): string => apiVersion.slice(apiVersion.indexOf('/') + 1);

export const apiVersionOf = (group: string, version: string): string => (group === '' ? version : `${group}/${version}`);
