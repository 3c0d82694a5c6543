// Typed reading of the object kinds clusterdns cares about, with Kubernetes defaults and
// validation: here the metadata every kind has and what every reader shares; each kind's own
// reader beside it (services.ts, endpoints.ts, pods.ts, workloads.ts, edge.ts).

import type { NamespaceObject, ObjectMeta, SourceRef } from '../model/model.js';
import { type Checker, isDns1035Label, isDns1123Label, isDns1123Subdomain, type Obj } from './validate.js';
import { jsonExcerpt } from '../model/finding.js';

/** Reads metadata; undefined when the name is missing (an error has been recorded). */
export function readMeta(
  o: Obj,
  check: Checker,
  source: SourceRef,
  defaultNamespace: string,
  nameRule: 'dns1035' | 'dns1123label' | 'subdomain' | 'none',
  namespaced: boolean,
): ObjectMeta | undefined {
  const md = check.obj(o, 'metadata', 'metadata');
  const name = check.str(md, 'name', 'metadata.name');
  const nsWritten = check.str(md, 'namespace', 'metadata.namespace');
  const namespace = namespaced ? (nsWritten === undefined || nsWritten === '' ? defaultNamespace : nsWritten) : '';
  if (name === undefined || name === '') {
    check.error('metadata.name is missing; every object needs a name', 'metadata');
    return undefined;
  }
  check.what = `${check.what} ${jsonExcerpt(`${namespaced ? `${namespace}/` : ''}${name}`, 120)}`;
  // ValidateObjectMeta with the kind's name rule: ValidateServiceName (NameIsDNS1035Label),
  // ValidateNamespaceName (NameIsDNSLabel), and NameIsDNSSubdomain for the other kinds read here.
  if (nameRule === 'dns1035' && !isDns1035Label(name)) {
    check.error(
      `name ${jsonExcerpt(name)} is not a valid DNS-1035 label; use at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit`,
      'metadata.name',
      'invalid-name',
    );
  } else if (nameRule === 'dns1123label' && !isDns1123Label(name)) {
    check.error(
      `name ${jsonExcerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit`,
      'metadata.name',
      'invalid-name',
    );
  } else if (nameRule === 'subdomain' && !isDns1123Subdomain(name)) {
    check.error(
      `name ${jsonExcerpt(name)} is not a valid DNS-1123 subdomain; use lower-case letters, digits, '-' and '.', at most 253 characters`,
      'metadata.name',
      'invalid-name',
    );
  }
  if (namespaced && nsWritten !== undefined && nsWritten !== '' && !isDns1123Label(nsWritten)) {
    check.error(
      `metadata.namespace ${jsonExcerpt(nsWritten)} is not a valid namespace name (DNS-1123 label: lower-case letters, digits and '-', at most 63)`,
      'metadata.namespace',
      'invalid-namespace',
    );
  }
  return {
    name,
    namespace,
    // ValidateObjectMeta: metav1validation ValidateLabels and ValidateAnnotations.
    labels: check.labels(md, 'labels', 'metadata.labels'),
    annotations: check.annotations(md, 'annotations', 'metadata.annotations'),
    source,
  };
}

export function toNamespace(meta: ObjectMeta): NamespaceObject {
  // The API server labels every namespace with its own name (Kubernetes >= 1.21).
  return { name: meta.name, labels: { ...meta.labels, 'kubernetes.io/metadata.name': meta.name }, source: meta.source };
}

/**
 * An array with no room to spare. One grown by push keeps room for at least 17 elements: 128
 * bytes of nothing behind each one-address endpoint, 13 MiB on 100k endpoints.
 */
export function tight<T>(xs: T[]): T[] {
  return xs.length === 0 ? xs : xs.slice();
}

/**
 * One string per distinct value, for the few fields every endpoint of a cluster repeats (node
 * names, zones, target kinds): JSON.parse makes a new string of each value longer than 10
 * characters (shorter ones it shares already), and 100k endpoints on nodes named in 30
 * characters would keep 100k copies of a few names. One per load.
 */
export function interner(): (s: string) => string {
  const seen = new Map<string, string>();
  return (s) => {
    if (s.length <= 10) return s;
    const had = seen.get(s);
    if (had !== undefined) return had;
    seen.set(s, s);
    return s;
  };
}
