// Model checks for `clusterdns check`: things a real cluster accepts (or that the loader only
// warns about) but that break or degrade DNS. Every finding is a warning located at the object,
// with a `code`, a message saying what breaks in DNS, and the fix.

import type { ClusterModel, ClusterOptions, EndpointSlice, Pod, Service, SourceRef } from './model/model.js';
import { type Finding, ManifestError } from './model/finding.js';
import { findPort, hasControllerSelector, isTerminal, PodIndex } from './emulate/endpoints.js';
import { parseIp } from '../pkg/ip.js';
import { closest } from '../pkg/spelling.js';
import { loadManifests } from './load.js';
import { filledStatuses, pendingStatuses } from './emulate/edge.js';
import { isDns1123Label } from './admit/validate.js';
import { parseManifestText } from './read/yaml-docs.js';
import { readManifestFile } from './read/files.js';
import type { Positions, RawObject } from './read/positions.js';

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

function sortFindings<F extends Finding>(findings: F[]): F[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (a.f.file < b.f.file ? -1 : a.f.file > b.f.file ? 1 : a.f.line - b.f.line || a.i - b.i))
    .map((x) => x.f);
}

/** The object a model check is about, for reports that name it (`clusterdns check --output json`). */
export interface FindingObject {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** A finding of the model checks: a Finding that also names its object. */
export interface ModelFinding extends Finding {
  readonly object?: FindingObject;
}

/**
 * The line of a field (`spec.selector`) of the object that starts at `src`, else of its nearest
 * written ancestor, else the object's own line. The model keeps only each object's first line,
 * so the few findings that point into an object ask for the line here.
 */
export type FieldLine = (src: SourceRef, path: string) => number;

/**
 * A FieldLine that reads each file asked about again, once (`readText`: its text, or undefined),
 * and finds the field in the object that starts at the line. Only files with such a finding are
 * read again, and only as far as the objects asked about: a clean check reads nothing twice, and
 * one finding in a large List does not parse the items after it.
 */
export function fieldLineReader(readText: (file: string) => string | undefined): FieldLine {
  const byFile = new Map<string, { seen: Map<number, Positions>; rest: Iterator<RawObject> | undefined }>();
  const positionsAt = (file: string, line: number): Positions | undefined => {
    let f = byFile.get(file);
    if (!f) {
      const text = readText(file);
      f = { seen: new Map(), rest: text === undefined ? undefined : parseManifestText(file, text, [])[Symbol.iterator]() };
      byFile.set(file, f);
    }
    while (!f.seen.has(line) && f.rest) {
      const next = f.rest.next();
      if (next.done) f.rest = undefined;
      else if (next.value.positions) f.seen.set(next.value.line, next.value.positions);
    }
    return f.seen.get(line);
  };
  return (src, path) => positionsAt(src.file, src.line)?.lineOf(path) ?? src.line;
}

type Warn = (src: SourceRef | undefined, code: CheckCode, message: string, object?: FindingObject, line?: number) => void;

const serviceObject = (s: Service): FindingObject => ({ kind: 'Service', namespace: s.namespace, name: s.name });

const svcName = (s: Service): string => `Service "${s.namespace}/${s.name}"`;

/**
 * The Service's shape: an ExternalName that is an IP, a headless Service's unnamed port. A name
 * that is no DNS label and unnamed ports of a multi-port Service are load errors (the API server
 * rejects them: readMeta in admit/objects.ts, readServicePorts in admit/services.ts), so they
 * are not repeated here.
 */
function serviceShapeWarnings(s: Service, warn: Warn): void {
  const object = serviceObject(s);
  if (s.type === 'ExternalName' && s.externalName !== undefined && parseIp(s.externalName.replace(/^\[|\]$/g, '')) !== undefined) {
    warn(
      s.source,
      'externalname-ip',
      `${svcName(s)}: spec.externalName "${s.externalName}" is an IP address; DNS answers a CNAME to the name "${s.externalName}", ` +
        'which does not resolve, so clients get no address; use a Service without selector plus an EndpointSlice (or Endpoints) ' +
        'holding the IP, or a DNS name',
      object,
    );
  }
  if (s.type !== 'ExternalName') {
    // A single unnamed port is admitted; only a headless Service's SRV records need the name.
    const unnamed = s.ports.filter((p) => p.name === '');
    if (unnamed.length > 0 && s.ports.length === 1 && s.headless) {
      const p = unnamed[0]!;
      const srv = `_<name>._${p.protocol.toLowerCase()}.${s.name}.${s.namespace}.svc`;
      warn(
        s.source,
        'unnamed-port',
        `${svcName(s)}: its port ${p.port}/${p.protocol} has no name, so there is no SRV record ${srv} for it; give the port a name`,
        object,
      );
    }
  }
}

/**
 * A controller-managed selector that selects no pods (at the selector's line), or pods lacking a
 * named targetPort (at that port's targetPort line).
 */
function selectorWarnings(s: Service, index: PodIndex, warn: Warn, fieldLine: FieldLine): void {
  const object = serviceObject(s);
  const pods = index.select(s.namespace, s.selector!).filter((p) => !isTerminal(p));
  if (pods.length === 0) {
    warn(
      s.source,
      'selector-no-pods',
      `${svcName(s)}: selector ${mapText(s.selector!)} matches no pods in namespace "${s.namespace}", so it has no endpoints: ${
        s.headless
          ? `"${s.name}.${s.namespace}.svc" has no A/AAAA records (NXDOMAIN)`
          : 'its cluster IP resolves but connections to it fail, and SRV lookups find no endpoints'
      }; make the selector match the labels of the pod template (spec.template.metadata.labels) or add the workload`,
      object,
      fieldLine(s.source, 'spec.selector'),
    );
    return;
  }
  s.ports.forEach((p, i) => {
    if (typeof p.targetPort !== 'string') return;
    const lacking = pods.filter((pod) => findPort(pod, p) === undefined);
    if (lacking.length === 0) return;
    const portName = p.name === '' ? `${p.port}/${p.protocol}` : `"${p.name}"`;
    // A name close to one the pods do declare is most likely a typo of it.
    const named = (pod: Pod): string[] => (pod.containerPorts ?? []).filter((c) => c.protocol === p.protocol && c.name !== '').map((c) => c.name);
    const declared = new Set(lacking.flatMap(named));
    const near = closest(p.targetPort, declared);
    const add = `add a container port named "${p.targetPort}" with protocol ${p.protocol}`;
    const fix =
      near !== undefined
        ? `did you mean "${near}"? The pods declare a container port named "${near}"; use that name, or ${add}`
        : `${add}, or use the port number`;
    const some = `${lacking.length} of ${pods.length} selected pods (${lacking
      .slice(0, 3)
      .map((x) => x.name)
      .join(', ')}${lacking.length > 3 ? ', ...' : ''})`;
    const srv = p.name !== '' ? ` and SRV _${p.name}._${p.protocol.toLowerCase()}.${s.name}.${s.namespace}.svc lacks them` : '';
    warn(
      s.source,
      'target-port-undeclared',
      `${svcName(s)}: targetPort "${p.targetPort}" (port ${portName}) is not declared by ` +
        `${lacking.length === pods.length ? 'any container of the selected pods' : some}, ` +
        `so those pods are left out of the endpoints for that port${srv}; ${fix}`,
      object,
      fieldLine(s.source, `spec.ports[${i}].targetPort`),
    );
  });
}

/**
 * A headless Service without ready endpoints answers NXDOMAIN. publishNotReadyAddresses is
 * advised only when it is not already set (then the pods are missing or not running at all).
 */
function headlessWarnings(s: Service, slices: readonly EndpointSlice[], warn: Warn): void {
  const anyReady = slices.some((x) => x.addressType !== 'FQDN' && x.endpoints.some((e) => e.ready !== false && e.addresses.length > 0));
  if (anyReady) return;
  const fix = !hasControllerSelector(s)
    ? 'add an EndpointSlice with ready endpoints, or a selector matching running pods'
    : s.publishNotReadyAddresses
      ? 'spec.publishNotReadyAddresses is already set, so the selected pods are missing or have no address: make the selector match running pods'
      : 'make the selected pods ready (or set spec.publishNotReadyAddresses: true)';
  const what = `${svcName(s)}: headless and without ready endpoints, so "${s.name}.${s.namespace}.svc" answers NXDOMAIN`;
  warn(s.source, 'headless-no-ready-endpoints', `${what}; ${fix}`, serviceObject(s));
}

/**
 * Pod names longer than 63: the pod's hostname is cut to 63 characters and endpoint_pod_names
 * falls back to the dashed IP. One finding per workload, or per pod written in the manifests.
 */
function longPodNameWarnings(pods: readonly Pod[], warn: Warn): void {
  const long = new Map<string, { src: Pod['source']; pods: string[]; object: FindingObject }>();
  for (const p of pods) {
    if (p.name.length <= 63 && (p.hostname === undefined || isDns1123Label(p.hostname))) continue;
    const k = p.derived ? `${p.source.file}:${p.source.line}` : `${p.namespace}/${p.name}`;
    const e = long.get(k);
    if (e) e.pods.push(p.name);
    else {
      // A derived pod's finding is about its workload, which the pod's owner names.
      const object =
        p.derived && p.owner ? { kind: p.owner.kind, namespace: p.namespace, name: p.owner.name } : { kind: 'Pod', namespace: p.namespace, name: p.name };
      long.set(k, { src: p.source, pods: [p.name], object });
    }
  }
  for (const { src, pods, object } of long.values()) {
    warn(
      src,
      'name-too-long',
      `pod name${pods.length > 1 ? 's' : ''} ${pods
        .slice(0, 3)
        .map((n) => `"${n}"`)
        .join(', ')}${pods.length > 3 ? ', ...' : ''} ` +
        `${pods.length > 1 ? 'are' : 'is'} longer than 63 characters (or not a DNS label), so it cannot be a DNS label: the pod's hostname ` +
        'is truncated and endpoint names fall back to the dashed IP; shorten the workload or pod name',
      object,
    );
  }
}

/**
 * Warnings about the model that matter for DNS, sorted by file and line. `fieldLine` places the
 * findings about one field of an object; without it they are at the object's first line.
 */
export function checkModel(model: ClusterModel, fieldLine: FieldLine = (src) => src.line): ModelFinding[] {
  const out: ModelFinding[] = [];
  const warn: Warn = (src, code, message, object, line) => {
    out.push({ file: src?.file ?? '<model>', line: line ?? src?.line ?? 0, severity: 'warning', message, code, ...(object ? { object } : {}) });
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
      const why = `namespace "${ns.name}" is not a valid DNS label, so no name under "${ns.name}.svc" can be resolved`;
      warn(ns.source, 'invalid-dns-label', `${why}; use at most 63 lower-case letters, digits and '-'`, { kind: 'Namespace', namespace: '', name: ns.name });
    }
  }
  // One Service's warnings stay together, in this order (they share its line).
  for (const s of model.services) {
    const key = `${s.namespace}/${s.name}`;
    serviceShapeWarnings(s, warn);
    if (hasControllerSelector(s) && managed.has(key)) selectorWarnings(s, index, warn, fieldLine);
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
export function checkManifests(paths: string[], options?: Partial<ClusterOptions>): { model?: ClusterModel; findings: ModelFinding[] } {
  try {
    const { model } = loadManifests(paths, options);
    return { model, findings: checkLoadedModel(model) };
  } catch (e) {
    if (e instanceof ManifestError) return { findings: [...e.findings] };
    throw e;
  }
}

/**
 * checkManifests for a model already loaded (a server's loader thread built it and handed it
 * over): the findings its load kept with it, and the model checks.
 */
export function checkLoadedModel(model: ClusterModel): ModelFinding[] {
  return sortFindings<ModelFinding>([
    ...(model.findings ?? []),
    ...checkModel(
      model,
      fieldLineReader((file) => readManifestFile(file, [])),
    ),
  ]);
}

/** "Service \"ns/name\": ..." texts of filledStatuses, read back into the object they name. */
function objectOfText(text: string): FindingObject | undefined {
  const m = /^(\w+) "([^"/]+)\/([^"]+)"/.exec(text);
  return m ? { kind: m[1]!, namespace: m[2]!, name: m[3]! } : undefined;
}

/** Infos about the model: statuses filled in as controllers would, and statuses the manifests leave pending. */
export function modelInfos(model: ClusterModel | undefined): ModelFinding[] {
  const out: ModelFinding[] = [];
  const notes = [
    ...filledStatuses(model?.edge, model?.services ?? []).map((n) => ({ ...n, code: 'status-filled' })),
    ...pendingStatuses(model?.edge, model?.services ?? []).map((n) => ({ ...n, code: 'status-pending' })),
  ];
  for (const f of notes) {
    const object = objectOfText(f.text);
    out.push({ file: f.source.file, line: f.source.line, severity: 'info', code: f.code, message: f.text, ...(object ? { object } : {}) });
  }
  return out;
}
