// Removed API versions that tutorials still use, read as their current versions with a
// deprecation warning, instead of being skipped as unknown kinds. The shapes that changed are
// those the Kubernetes API reference documents for the old versions:
// - extensions/v1beta1 and apps/v1beta1 workloads default spec.selector to the pod template's
//   labels (apps/v1 requires it);
// - extensions/v1beta1 and networking.k8s.io/v1beta1 Ingress write backends as
//   {serviceName, servicePort} and the default backend as spec.backend.
import type { Checker, Obj } from './validate.js';
import { isObj } from './validate.js';

interface Mapping {
  readonly to: string;
  readonly removedIn: string;
  /** The old version defaulted spec.selector from the template labels. */
  readonly defaultSelector?: boolean;
}

const LEGACY: Readonly<Record<string, Readonly<Record<string, Mapping>>>> = {
  'extensions/v1beta1': {
    Deployment: { to: 'apps/v1', removedIn: '1.16', defaultSelector: true },
    DaemonSet: { to: 'apps/v1', removedIn: '1.16', defaultSelector: true },
    ReplicaSet: { to: 'apps/v1', removedIn: '1.16', defaultSelector: true },
    Ingress: { to: 'networking.k8s.io/v1', removedIn: '1.22' },
  },
  'apps/v1beta1': {
    Deployment: { to: 'apps/v1', removedIn: '1.16', defaultSelector: true },
    StatefulSet: { to: 'apps/v1', removedIn: '1.16', defaultSelector: true },
  },
  'apps/v1beta2': {
    Deployment: { to: 'apps/v1', removedIn: '1.16' },
    DaemonSet: { to: 'apps/v1', removedIn: '1.16' },
    ReplicaSet: { to: 'apps/v1', removedIn: '1.16' },
    StatefulSet: { to: 'apps/v1', removedIn: '1.16' },
  },
  'networking.k8s.io/v1beta1': {
    Ingress: { to: 'networking.k8s.io/v1', removedIn: '1.22' },
  },
};

function convertBackend(b: unknown): void {
  if (!isObj(b) || b['service'] !== undefined || b['serviceName'] === undefined) return;
  const port = b['servicePort'];
  b['service'] = { name: b['serviceName'], port: typeof port === 'number' ? { number: port } : { name: String(port ?? '') } };
  delete b['serviceName'];
  delete b['servicePort'];
}

/**
 * The apiVersion to read `o` as: the current version for a removed one (after converting the
 * object's shape in place and warning at its file and line), else `apiVersion` unchanged.
 */
export function normalizeApiVersion(kind: string, apiVersion: string, o: Obj, check: Checker): string {
  const m = LEGACY[apiVersion]?.[kind];
  if (!m) return apiVersion;
  const spec = isObj(o['spec']) ? o['spec'] : undefined;
  let extra = '';
  if (m.defaultSelector && spec && spec['selector'] === undefined) {
    const tmpl = spec['template'];
    const labels = isObj(tmpl) && isObj(tmpl['metadata']) ? tmpl['metadata']['labels'] : undefined;
    if (isObj(labels)) {
      spec['selector'] = { matchLabels: { ...labels } };
      extra = ' and add spec.selector.matchLabels (the old version defaulted it to the pod template labels)';
    }
  }
  if (kind === 'Ingress' && spec) {
    if (spec['backend'] !== undefined && spec['defaultBackend'] === undefined) {
      spec['defaultBackend'] = spec['backend'];
      delete spec['backend'];
    }
    convertBackend(spec['defaultBackend']);
    for (const r of Array.isArray(spec['rules']) ? spec['rules'] : []) {
      const http = isObj(r) ? r['http'] : undefined;
      for (const p of isObj(http) && Array.isArray(http['paths']) ? http['paths'] : []) {
        if (!isObj(p)) continue;
        convertBackend(p['backend']);
        // v1beta1 defaulted pathType to ImplementationSpecific; v1 requires it.
        if (p['pathType'] === undefined) p['pathType'] = 'ImplementationSpecific';
      }
    }
    extra = ' and write backends as service: {name, port: {number}}';
  }
  check.warn(
    `apiVersion ${apiVersion} ${kind} was removed in Kubernetes ${m.removedIn}, so a current cluster rejects this manifest; it is read as ${m.to}. Change apiVersion to ${m.to}${extra}`,
    'apiVersion',
  );
  const f = check.findings[check.findings.length - 1];
  if (f) check.findings[check.findings.length - 1] = { ...f, code: 'deprecated-api-version' };
  return m.to;
}
