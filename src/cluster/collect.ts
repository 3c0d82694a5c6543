// One manifest object into a load's Collected: its header read (apiVersion, kind, name,
// namespace) and admitted as the API server admits it (schema, known kinds, one object per key),
// then read by its kind's reader (admit/). load.ts reads every object so and plays the control
// plane over them; feed.ts does the same a file at a time.
import type { ClusterNode, ClusterOptions, EndpointSlice, NamespaceObject, ObjectMeta, Pod, RejectedObject, ServiceImport, SourceRef } from './model/model.js';
import type { WorkloadDraft, WorkloadKind } from './admit/workloads.js';
import { toWorkload } from './admit/workloads.js';
import type { EndpointsDraft } from './admit/endpoints.js';
import type { FamilyInfo, ServiceDraft } from './admit/services.js';
import { familyOf, toService, toServiceImport } from './admit/services.js';
import { readMeta, toNamespace } from './admit/objects.js';
import { toEndpoints, toEndpointSlice } from './admit/endpoints.js';
import { toPod } from './admit/pods.js';
import { Checker, isApiServerOutput, isObj, type Obj } from './admit/validate.js';
import { EdgeCollector } from './emulate/edge.js';
import { normalizeApiVersion } from './admit/legacy-versions.js';
import type { RawObject } from './read/positions.js';
import { type Finding, jsonExcerpt } from './model/finding.js';
import { groupOf, type KindLookup, type KindRegistry, namespacedByName } from './admit/schema/index.js';

/** Kinds this module reads, with the API group they must come from. */
const KNOWN_KINDS: Readonly<Record<string, readonly string[]>> = {
  Namespace: [''],
  Service: [''],
  Endpoints: [''],
  Pod: [''],
  EndpointSlice: ['discovery.k8s.io'],
  ServiceImport: ['multicluster.x-k8s.io'],
  Node: [''],
  Deployment: ['apps'],
  ReplicaSet: ['apps'],
  StatefulSet: ['apps'],
  DaemonSet: ['apps'],
  Job: ['batch'],
  CronJob: ['batch'],
};

function readNode(o: Record<string, unknown>, name: string, labels: Readonly<Record<string, string>>, check: Checker): ClusterNode {
  const status = check.obj(o, 'status', 'status');
  const addresses: string[] = [];
  for (const a of check.arr(status, 'addresses', 'status.addresses')) {
    if (!isObj(a) || a['type'] !== 'InternalIP') continue;
    const ip = check.ip(a['address'], 'status.addresses[].address');
    if (ip !== undefined && !addresses.some((x) => familyOf(x) === familyOf(ip))) addresses.push(ip);
  }
  const zone = labels['topology.kubernetes.io/zone'] ?? labels['failure-domain.beta.kubernetes.io/zone'];
  return { name, addresses, ...(zone !== undefined ? { zone } : {}), labels };
}

/** The objects of the manifests, read and checked, before the control plane fills in the rest. */
export interface Collected {
  declaredNamespaces: Map<string, NamespaceObject>;
  /** Namespaces named by namespaced objects. */
  impliedNamespaces: Set<string>;
  serviceDrafts: ServiceDraft[];
  endpointsDrafts: EndpointsDraft[];
  slices: EndpointSlice[];
  pods: Pod[];
  imports: ServiceImport[];
  workloads: WorkloadDraft[];
  manifestNodes: ClusterNode[];
  ignoredKinds: Map<string, number>;
  /** Kinds DNS does not use, per file: the first object's line and how many (one info line each). */
  unusedKinds: Map<string, { file: string; line: number; kind: string; count: number }>;
  /** Objects the API server would reject: not served. */
  rejected: RejectedObject[];
  objectCount: number;
  edge: EdgeCollector;
  /** One string for each of the values endpoints repeat (admit/objects.ts: interner). */
  intern: (s: string) => string;
}

/** One object's kind, apiVersion and metadata, checked; undefined when it cannot be used. */
export interface Header {
  o: Obj;
  kind: string;
  apiVersion: string;
  group: string;
  known: boolean;
  /** What the API server knows of the kind: its scope and schema, or why it has no such kind. */
  lookup: KindLookup;
  namespaced: boolean;
  meta: ObjectMeta;
  check: Checker;
  source: SourceRef;
}

export function readHeader(raw: RawObject, opts: ClusterOptions, findings: Finding[], registry: KindRegistry): Header | undefined {
  const source: SourceRef = { file: raw.file, line: raw.line };
  if (!isObj(raw.obj)) {
    findings.push({ ...source, severity: 'error', message: 'a list item must be a mapping (an object with apiVersion, kind and metadata)' });
    return undefined;
  }
  const o = raw.obj;
  const kindRaw = o['kind'] ?? raw.listKind;
  const apiVersionRaw = o['apiVersion'] ?? raw.listApiVersion;
  const kind = typeof kindRaw === 'string' && kindRaw !== '' ? kindRaw : undefined;
  let apiVersion = typeof apiVersionRaw === 'string' && apiVersionRaw !== '' ? apiVersionRaw : undefined;
  const md = o['metadata'];
  const nameHint = isObj(md) && typeof md['name'] === 'string' ? ` ${jsonExcerpt(md['name'])}` : '';
  const kindText = kind === undefined ? 'object' : kind.length > 100 ? `${kind.slice(0, 100)}...` : kind; // messages echo excerpts only
  const check = new Checker(findings, source, `${kindText}${nameHint}`, raw.positions);
  if (kind === undefined) check.error('kind is missing; add e.g. "kind: Service"', 'kind');
  if (apiVersion === undefined)
    check.error(`apiVersion is missing; add e.g. "apiVersion: ${kind && KNOWN_KINDS[kind]?.[0] ? `${KNOWN_KINDS[kind]![0]}/v1` : 'v1'}"`, 'apiVersion');
  if (kind === undefined || apiVersion === undefined) {
    if (nameHint === '') check.error('metadata.name is missing; every object needs a name');
    return undefined;
  }
  check.what = kindText;
  apiVersion = normalizeApiVersion(kind, apiVersion, o, check);
  const group = groupOf(apiVersion);
  const known = KNOWN_KINDS[kind]?.includes(group) === true;
  const lookup = registry.lookup(apiVersion, kind);
  const namespaced = lookup.known ? lookup.namespaced : namespacedByName(kind);
  // The schema first, as the API server decodes before it validates: the readers' own errors on
  // a field the schema rejected are then not repeated (Checker.schemaError). A dump's object
  // passed its API server's schema check already, and that check is the larger part of
  // admission's cost on a dump of a large cluster; the hand-written rules still run.
  if (lookup.known && lookup.validate && !isApiServerOutput(o)) {
    const issues = lookup.validate(o);
    if (issues.length > 0) {
      // Named as readMeta will name the object; readMeta then names it for its own findings.
      const ns = isObj(md) && typeof md['namespace'] === 'string' && md['namespace'] !== '' ? md['namespace'] : opts.defaultNamespace;
      const name = isObj(md) && typeof md['name'] === 'string' ? md['name'] : '';
      check.what = `${kindText} ${jsonExcerpt(`${namespaced ? `${ns}/` : ''}${name}`, 120)}`;
      for (const issue of issues) check.schemaError(issue.message, issue.path === '' ? undefined : issue.path, issue.code);
      check.what = kindText;
    }
  }
  const nameRule = !known ? 'none' : kind === 'Service' ? 'dns1035' : kind === 'Namespace' ? 'dns1123label' : 'subdomain';
  const meta = readMeta(o, check, source, opts.defaultNamespace, nameRule, namespaced);
  if (!meta) return undefined;
  return { o, kind, apiVersion, group, known, lookup, namespaced, meta, check, source };
}

/**
 * Files a known kind's object where the control plane looks for it, unless reading it found an
 * error: the API server rejects such an object, so it is not served (false).
 */
function collectKnown(c: Collected, h: Header, fam: FamilyInfo): boolean {
  const { o, meta, check } = h;
  const ok = (): boolean => check.errors === 0;
  switch (h.kind) {
    case 'Namespace':
      if (ok()) c.declaredNamespaces.set(meta.name, toNamespace(meta));
      break;
    case 'Service': {
      const d = toService(o, meta, check, fam);
      if (ok()) c.serviceDrafts.push(d);
      break;
    }
    case 'Endpoints': {
      const d = toEndpoints(o, meta, check);
      if (ok()) c.endpointsDrafts.push(d);
      break;
    }
    case 'EndpointSlice': {
      const x = toEndpointSlice(o, meta, check, h.apiVersion, c.intern);
      if (ok()) c.slices.push(x);
      break;
    }
    case 'Pod': {
      const p = toPod(o, meta, check);
      if (ok()) c.pods.push(p);
      break;
    }
    case 'ServiceImport': {
      const x = toServiceImport(o, meta, check);
      if (ok()) c.imports.push(x);
      break;
    }
    case 'Node': {
      const n = readNode(o, meta.name, meta.labels, check);
      if (ok()) c.manifestNodes.push(n);
      break;
    }
    case 'Deployment':
    case 'ReplicaSet':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'Job':
    case 'CronJob': {
      const w = toWorkload(o, meta, check, h.kind as WorkloadKind);
      if (ok()) c.workloads.push(w);
      break;
    }
    default:
      break;
  }
  return ok();
}

/** An empty collection; `intern` may be shared by several (feed.ts: one per file). */
export function newCollected(intern: (s: string) => string): Collected {
  return {
    declaredNamespaces: new Map(),
    impliedNamespaces: new Set(),
    serviceDrafts: [],
    endpointsDrafts: [],
    slices: [],
    pods: [],
    imports: [],
    workloads: [],
    manifestNodes: [],
    ignoredKinds: new Map(),
    unusedKinds: new Map(),
    rejected: [],
    objectCount: 0,
    edge: new EdgeCollector(),
    intern,
  };
}

/** Whether the registry knows a raw object's kind already (else it waits for the CRDs of the rest). */
export function kindKnownNow(raw: RawObject, registry: KindRegistry): boolean {
  if (!isObj(raw.obj)) return true;
  const kind = raw.obj['kind'] ?? raw.listKind;
  const apiVersion = raw.obj['apiVersion'] ?? raw.listApiVersion;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return true; // readHeader reports it
  return registry.lookup(apiVersion, kind).known;
}

/** Objects are identified by group, kind, namespace and name, as the API server does. */
export const objectKey = (group: string, kind: string, namespace: string, name: string): string => `${group}|${kind}|${namespace}|${name}`;

function reject(c: Collected, h: Header): void {
  const { meta } = h;
  c.rejected.push({ kind: h.kind, apiVersion: h.apiVersion, namespace: meta.namespace, name: meta.name, ...h.source });
}

/** Files one object; true when it is an admitted Service (whose checker findings use after reading). */
export function readObject(c: Collected, h: Header, seen: Map<string, SourceRef>, fam: FamilyInfo, registry: KindRegistry): boolean {
  const { kind, group, meta, check, lookup } = h;
  const key = objectKey(group, kind, meta.namespace, meta.name);
  const prev = seen.get(key);
  if (prev) {
    check.error(
      `is declared twice, here and at ${prev.file}:${prev.line}; remove one of them (objects are identified by kind, namespace and name)`,
      undefined,
      'duplicate-object',
    );
  }
  if (!lookup.known) {
    check.error(lookup.message, 'kind', 'unknown-kind');
    reject(c, h);
    return false;
  }
  if (kind === 'CustomResourceDefinition' && group === 'apiextensions.k8s.io' && check.errors === 0) {
    for (const issue of registry.addCrd(h.o)) {
      // A schema over the size clusterdns applies is no fault of the CRD: its kind goes unchecked.
      if (issue.code === 'crd-schema-size') check.warn(issue.message, issue.path === '' ? undefined : issue.path, issue.code);
      else check.error(issue.message, issue.path === '' ? undefined : issue.path, issue.code);
    }
  }
  // An object with an error is still read to the end, so that every error of it is reported at
  // once (as the API server lists every invalid field); it is filed nowhere.
  if (c.edge.read(kind, group, h.o, meta, check)) {
    if (check.errors > 0) reject(c, h);
    else admitted(c, h, seen, key);
    return false;
  }
  if (!h.known) {
    if (check.errors > 0) {
      reject(c, h);
      return false;
    }
    const label = group === '' ? kind : `${kind}.${group}`;
    c.ignoredKinds.set(label, (c.ignoredKinds.get(label) ?? 0) + 1);
    const perFile = `${h.source.file}|${label}`;
    const had = c.unusedKinds.get(perFile);
    if (had) had.count++;
    else c.unusedKinds.set(perFile, { file: h.source.file, line: h.source.line, kind: label, count: 1 });
    admitted(c, h, seen, key);
    return false;
  }
  if (!collectKnown(c, h, fam)) {
    reject(c, h);
    return false;
  }
  admitted(c, h, seen, key);
  return kind === 'Service';
}

function admitted(c: Collected, h: Header, seen: Map<string, SourceRef>, key: string): void {
  seen.set(key, h.source);
  if (h.namespaced) c.impliedNamespaces.add(h.meta.namespace);
}
