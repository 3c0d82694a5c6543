// Model checks for `clusterdns check`: things a real cluster accepts (or that the loader only
// warns about) but that break or degrade DNS. Every finding is a warning located at the object,
// with a `code`, a message saying what breaks in DNS, and the fix.

import type { ClusterModel, ClusterOptions, EndpointSlice, Finding, Pod, Service } from './model.js';
import { ManifestError } from './model.js';
import { findPort, hasControllerSelector, isTerminal, PodIndex } from './endpoints.js';
import { parseIp } from '../pkg/ip.js';
import { loadManifests } from './load.js';
import { isDns1123Label } from './validate.js';

export type CheckCode =
  | 'selector-no-pods'
  | 'target-port-undeclared'
  | 'invalid-dns-label'
  | 'externalname-ip'
  | 'headless-no-ready-endpoints'
  | 'unnamed-port'
  | 'name-too-long';

/** A selector as k=v,k=v, cut short: messages never echo more than an excerpt of the input. */
const mapText = (m: Readonly<Record<string, string>>): string => {
  const t = Object.entries(m)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return t.length > 120 ? `${t.slice(0, 120)}...` : t;
};

function sortFindings(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (a.f.file < b.f.file ? -1 : a.f.file > b.f.file ? 1 : a.f.line - b.f.line || a.i - b.i))
    .map((x) => x.f);
}

type Warn = (src: { file: string; line: number } | undefined, code: CheckCode, message: string) => void;

const svcName = (s: Service): string => `Service "${s.namespace}/${s.name}"`;

/**
 * The Service's shape: an ExternalName that is an IP, a headless Service's unnamed port. A name
 * that is no DNS label and unnamed ports of a multi-port Service are load errors (the API server
 * rejects them: readMeta, readServicePorts in objects.ts), so they are not repeated here.
 */
function serviceShapeWarnings(s: Service, warn: Warn): void {
  if (s.type === 'ExternalName' && s.externalName !== undefined && parseIp(s.externalName.replace(/^\[|\]$/g, '')) !== undefined) {
    warn(
      s.source,
      'externalname-ip',
      `${svcName(s)}: spec.externalName "${s.externalName}" is an IP address; DNS answers a CNAME to the name "${s.externalName}", which does not resolve, so clients get no address; use a Service without selector plus an EndpointSlice (or Endpoints) holding the IP, or a DNS name`,
    );
  }
  if (s.type !== 'ExternalName') {
    // A single unnamed port is admitted; only a headless Service's SRV records need the name.
    const unnamed = s.ports.filter((p) => p.name === '');
    if (unnamed.length > 0 && s.ports.length === 1 && s.headless) {
      warn(
        s.source,
        'unnamed-port',
        `${svcName(s)}: its port ${unnamed[0]!.port}/${unnamed[0]!.protocol} has no name, so there is no SRV record _<name>._${unnamed[0]!.protocol.toLowerCase()}.${s.name}.${s.namespace}.svc for it; give the port a name`,
      );
    }
  }
}

/** A controller-managed selector that selects no pods, or pods lacking a named targetPort. */
function selectorWarnings(s: Service, index: PodIndex, warn: Warn): void {
  const pods = index.select(s.namespace, s.selector!).filter((p) => !isTerminal(p));
  if (pods.length === 0) {
    warn(
      s.source,
      'selector-no-pods',
      `${svcName(s)}: selector ${mapText(s.selector!)} matches no pods in namespace "${s.namespace}", so it has no endpoints: ${
        s.headless ? `"${s.name}.${s.namespace}.svc" has no A/AAAA records (NXDOMAIN)` : 'its cluster IP resolves but connections to it fail, and SRV lookups find no endpoints'
      }; make the selector match the labels of the pod template (spec.template.metadata.labels) or add the workload`,
    );
  } else {
    for (const p of s.ports) {
      if (typeof p.targetPort !== 'string') continue;
      const lacking = pods.filter((pod) => findPort(pod, p) === undefined);
      if (lacking.length === 0) continue;
      const portName = p.name === '' ? `${p.port}/${p.protocol}` : `"${p.name}"`;
      warn(
        s.source,
        'target-port-undeclared',
        `${svcName(s)}: targetPort "${p.targetPort}" (port ${portName}) is not declared by ${
          lacking.length === pods.length ? 'any container of the selected pods' : `${lacking.length} of ${pods.length} selected pods (${lacking.slice(0, 3).map((x) => x.name).join(', ')}${lacking.length > 3 ? ', ...' : ''})`
        }, so those pods are left out of the endpoints for that port${p.name !== '' ? ` and SRV _${p.name}._${p.protocol.toLowerCase()}.${s.name}.${s.namespace}.svc lacks them` : ''}; add a container port named "${p.targetPort}" with protocol ${p.protocol}, or use the port number`,
      );
    }
  }
}

/** A headless Service without ready endpoints answers NXDOMAIN. */
function headlessWarnings(s: Service, slices: readonly EndpointSlice[], warn: Warn): void {
  const anyReady = slices.some((x) => x.addressType !== 'FQDN' && x.endpoints.some((e) => e.ready !== false && e.addresses.length > 0));
  if (!anyReady) {
    warn(
      s.source,
      'headless-no-ready-endpoints',
      `${svcName(s)}: headless and without ready endpoints, so "${s.name}.${s.namespace}.svc" answers NXDOMAIN; ${
        hasControllerSelector(s) ? 'make the selected pods ready (or set spec.publishNotReadyAddresses: true)' : 'add an EndpointSlice with ready endpoints, or a selector matching running pods'
      }`,
    );
  }
}

/**
 * Pod names longer than 63: the pod's hostname is cut to 63 characters and endpoint_pod_names
 * falls back to the dashed IP. One finding per workload, or per pod written in the manifests.
 */
function longPodNameWarnings(pods: readonly Pod[], warn: Warn): void {
  const long = new Map<string, { src: Pod['source']; pods: string[] }>();
  for (const p of pods) {
    if (p.name.length <= 63 && (p.hostname === undefined || isDns1123Label(p.hostname))) continue;
    const k = p.derived ? `${p.source.file}:${p.source.line}` : `${p.namespace}/${p.name}`;
    const e = long.get(k);
    if (e) e.pods.push(p.name);
    else long.set(k, { src: p.source, pods: [p.name] });
  }
  for (const { src, pods } of long.values()) {
    warn(
      src,
      'name-too-long',
      `pod name${pods.length > 1 ? 's' : ''} ${pods.slice(0, 3).map((n) => `"${n}"`).join(', ')}${pods.length > 3 ? ', ...' : ''} ${pods.length > 1 ? 'are' : 'is'} longer than 63 characters (or not a DNS label), so it cannot be a DNS label: the pod's hostname is truncated and endpoint names fall back to the dashed IP; shorten the workload or pod name`,
    );
  }
}

/** Warnings about the model that matter for DNS, sorted by file and line. */
export function checkModel(model: ClusterModel): Finding[] {
  const out: Finding[] = [];
  const warn: Warn = (src, code, message) => {
    out.push({ file: src?.file ?? '<model>', line: src?.line ?? 0, severity: 'warning', message, code });
  };
  const index = new PodIndex(model.pods);
  const managed = model.controllerServices ?? new Set<string>();
  const slicesBySvc = new Map<string, EndpointSlice[]>();
  for (const x of model.endpointSlices) {
    if (x.serviceName === undefined) continue;
    const k = `${x.namespace}/${x.serviceName}`;
    const l = slicesBySvc.get(k);
    if (l) l.push(x);
    else slicesBySvc.set(k, [x]);
  }

  // Namespaces (declared or implied) must be DNS labels: the namespace is a label of every name.
  for (const ns of model.namespaces.values()) {
    if (!isDns1123Label(ns.name)) {
      warn(ns.source, 'invalid-dns-label', `namespace "${ns.name}" is not a valid DNS label, so no name under "${ns.name}.svc" can be resolved; use at most 63 lower-case letters, digits and '-'`);
    }
  }
  // One Service's warnings stay together, in this order (they share its line).
  for (const s of model.services) {
    const key = `${s.namespace}/${s.name}`;
    serviceShapeWarnings(s, warn);
    if (hasControllerSelector(s) && managed.has(key)) selectorWarnings(s, index, warn);
    if (s.headless && s.type !== 'ExternalName') headlessWarnings(s, slicesBySvc.get(key) ?? [], warn);
  }
  longPodNameWarnings(model.pods, warn);
  return sortFindings(out);
}

/**
 * Everything `clusterdns check` reports for a set of manifests: load errors and warnings and, when
 * the manifests load, the model checks; sorted by file and line. `model` is undefined when a
 * load error prevented building it.
 */
export function checkManifests(paths: string[], options?: Partial<ClusterOptions>): { model?: ClusterModel; findings: Finding[] } {
  try {
    const { model, findings } = loadManifests(paths, options);
    return { model, findings: sortFindings([...findings, ...checkModel(model)]) };
  } catch (e) {
    if (e instanceof ManifestError) return { findings: [...e.findings] };
    throw e;
  }
}
