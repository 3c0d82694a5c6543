// Manifests -> ClusterModel: reads files, validates, applies control-plane defaults
// (cluster IP allocation, Endpoints mirroring), plays the controllers (workloads -> pods, pod IPs,
// the EndpointSlice controller) and collects every finding. Model checks for `clusterdns check`
// are in check.ts. Each object is read into the load by collect.ts; feed.ts reads by file with
// the same pieces (collect.ts's readHeader and readObject, emulate here) and keeps each file's
// read for the next load.

import type { ClusterModel, ClusterOptions, NamespaceObject, Pod, SourceRef, WorkloadInfo } from './model/model.js';
import { defaultClusterOptions, defaultNodes } from './model/model.js';
import { generateEndpointSlices, PodIndex } from './emulate/endpoints.js';
import { assignPodIPs, parsePodCidrs } from './emulate/podips.js';
import { deriveWorkloadPods } from './emulate/workloads.js';
import type { EmulationCache } from './emulate/emulate-cache.js';
import { type AllocationMemo, allocateClusterIPs, familyInfo, parseServiceCidrs } from './emulate/allocate.js';
import { mirrorEndpoints } from './emulate/mirror.js';
import type { FamilyInfo, ServiceDraft } from './admit/services.js';
import type { Service } from './model/model.js';
import { interner } from './admit/objects.js';
import { isObj } from './admit/validate.js';
import { withLoadBalancerStatus } from './emulate/edge.js';
import { assignNodePorts, nodePortLines } from './emulate/nodeports.js';
import { collectManifestFiles } from './read/files.js';
import { parseManifestText, readManifestObjects } from './read/yaml-docs.js';
import type { RawObject } from './read/positions.js';
import { type Finding, ManifestError } from './model/finding.js';
import type { ManifestLimits } from './model/limits.js';
import { type FieldTree, fieldTree } from './read/json-scan.js';
import { globMatch } from '../pkg/glob.js';
import { defaultCrdSchemaLimits, groupOf, KindRegistry, namespacedByName } from './admit/schema/index.js';
import { type AdmissionHistory, DEFAULT_HISTORY_BYTES, HistoryReader, HistoryWriter } from './admit/history.js';
import { type Collected, kindKnownNow, newCollected, objectKey, readHeader, readObject } from './collect.js';

export { ManifestError } from './model/finding.js';

/** "ns/name" patterns with '*' (any characters) and '?' (one); a pattern without '/' matches the name in any namespace. */
function notReadyMatcher(patterns: readonly string[]): (p: Pod) => boolean {
  if (patterns.length === 0) return () => false;
  return (p) => {
    const k = `${p.namespace}/${p.name}`;
    return patterns.some((pat) => (pat.includes('/') ? globMatch(pat, k) : globMatch(pat, p.name)));
  };
}

const byNsName = <T extends { namespace: string; name: string }>(a: T, b: T): number =>
  a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/**
 * A callback every `every` objects read (none when 0): a loader thread that reloads beside a
 * serving store collects its parse garbage there, so its peak stays near what it keeps. With
 * `onTextGone`, a JSON List's text goes before its objects are read, which are read again from
 * its file (read/yaml-docs.ts readManifestObjects), and `onTextGone` is told the text's size then:
 * collected at that moment, its memory returns while little else is alive.
 */
export interface ReadProgress {
  every: number;
  onObjects: () => void;
  onTextGone?: (bytes: number) => void;
}

/**
 * The fields of a Service that findings raised after reading name (emulate/allocate.ts: spec.clusterIPs
 * or spec.clusterIP; emulate/nodeports.ts: spec.ports[i].nodePort), with their ancestors, whose lines
 * stand in when a field is not written. Every other object is asked for its own line only, once
 * read, so it keeps no field lines and no text (Positions.settle).
 */
export const LATER_SERVICE_FIELDS: FieldTree = fieldTree(['spec.clusterIPs', 'spec.clusterIP', 'spec.ports[].nodePort']);

/** One manifest file's objects, read when the reader reaches the file. */
interface ObjectSource {
  readonly file: string;
  read(
    findings: Finding[],
    limits: Partial<ManifestLimits> | undefined,
    onTextGone?: (bytes: number) => void,
    onText?: (text: string) => void,
  ): Iterable<RawObject>;
}

/**
 * Reads every object of every document, a file at a time: each file's text goes once its objects
 * are read. Notes the files with a document that could not be read as an object (a syntax error,
 * no kind or name): the previous version of their objects may stand (restorePrevious).
 */
function readObjects(
  sources: Iterable<ObjectSource>,
  opts: ClusterOptions,
  fam: FamilyInfo,
  findings: Finding[],
  progress: ReadProgress | undefined,
  history: HistoryWriter | undefined,
  registry: KindRegistry,
): { c: Collected; seen: Map<string, SourceRef>; unreadable: Set<string> } {
  const c = newCollected(interner());
  const seen = new Map<string, SourceRef>();
  const unreadable = new Set<string>();
  const deferred: RawObject[] = [];
  /** Reads one object; the error findings it added (a file's others are about its documents). */
  const readOne = (raw: RawObject): number => {
    const h = readHeader(raw, opts, findings, registry);
    if (!h) {
      c.rejected.push({ kind: '', apiVersion: '', namespace: '', name: '', file: raw.file, line: raw.line });
      return 0;
    }
    const service = readObject(c, h, seen, fam, registry);
    raw.positions?.settle(service ? LATER_SERVICE_FIELDS : undefined);
    return h.check.reported;
  };
  for (const source of sources) {
    const before = findings.length;
    let objectErrors = 0;
    const onText = history ? (text: string) => history.text(source.file, text) : undefined;
    for (const raw of source.read(findings, opts.manifestLimits, progress?.onTextGone, onText)) {
      c.objectCount++;
      if (progress && progress.every > 0 && c.objectCount % progress.every === 0) progress.onObjects();
      // A kind no API defines yet may be defined by a CustomResourceDefinition further on.
      if (!kindKnownNow(raw, registry)) {
        deferred.push(raw);
        continue;
      }
      objectErrors += readOne(raw);
    }
    let errors = 0;
    for (let i = before; i < findings.length; i++) if (findings[i]!.severity === 'error') errors++;
    if (errors > objectErrors) unreadable.add(source.file);
  }
  for (const raw of deferred) readOne(raw);
  return { c, seen, unreadable };
}

/** Findings by file and line, in the order found within a line. */
function sortFindings(findings: readonly Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (a.f.file < b.f.file ? -1 : a.f.file > b.f.file ? 1 : a.f.line - b.f.line || a.i - b.i))
    .map((x) => x.f);
}

/** What a load is given of the previous load, and asked to keep for the next (admit/history.ts). */
export interface HistoryRequest {
  readonly previous?: AdmissionHistory;
  /** Bytes of manifest text to keep; default DEFAULT_HISTORY_BYTES. */
  readonly budgetBytes?: number;
}

export interface LoadResult {
  model: ClusterModel;
  findings: Finding[];
  /** What this load read, for the next one; only when a HistoryRequest was given. */
  history?: AdmissionHistory;
}

/** Plays the control plane over what the manifests hold: cluster IPs, node ports, pods, endpoints, namespaces, edge statuses. */
function build(
  sources: Iterable<ObjectSource>,
  options: Partial<ClusterOptions> | undefined,
  findings: Finding[],
  progress?: ReadProgress,
  historyRequest?: HistoryRequest,
): LoadResult {
  const ctx = loadContext(options, findings, historyRequest);
  const { c, seen, unreadable } = readObjects(sources, ctx.opts, ctx.fam, findings, progress, ctx.writer, ctx.registry);
  return emulate(ctx, c, seen, unreadable, findings, historyRequest, true);
}

/** What every load sets up before it reads: options, service CIDRs, the kind registry, the history it writes. */
export interface LoadContext {
  readonly opts: ClusterOptions;
  readonly cidrs: ReturnType<typeof parseServiceCidrs>;
  readonly fam: FamilyInfo;
  readonly writer: HistoryWriter | undefined;
  readonly registry: KindRegistry;
}

export function loadContext(options: Partial<ClusterOptions> | undefined, findings: Finding[], historyRequest: HistoryRequest | undefined): LoadContext {
  const opts: ClusterOptions = { ...defaultClusterOptions, ...options };
  const cidrs = parseServiceCidrs(opts.serviceCIDRs, findings);
  return {
    opts,
    cidrs,
    fam: familyInfo(cidrs),
    writer: historyRequest ? new HistoryWriter(historyRequest.budgetBytes ?? DEFAULT_HISTORY_BYTES) : undefined,
    registry: KindRegistry.create(opts.maxCrdSchemaNodes !== undefined ? { ...defaultCrdSchemaLimits, maxNodes: opts.maxCrdSchemaNodes } : undefined),
  };
}

/**
 * Everything after reading: the previous versions a failed apply leaves (restorePrevious), then
 * the control plane over every object read. `ownsPods`: the pods in `c` are held nowhere else
 * (a one-shot load), so they get their addresses in place; a feed keeps them for the next load.
 * `cache`: a feed's (emulate/emulate-cache.ts), which keeps the pods, addresses, slices and cluster IPs
 * of the last load and gives the same model doing again only what changed; the workload drafts'
 * checkers may then still be their read's (cache.bound binds them to `findings`).
 */
export function emulate(
  ctx: LoadContext,
  c: Collected,
  seen: Map<string, SourceRef>,
  unreadable: ReadonlySet<string>,
  findings: Finding[],
  historyRequest: HistoryRequest | undefined,
  ownsPods: boolean,
  cache?: EmulationCache,
): LoadResult {
  const { opts, cidrs, fam, writer, registry } = ctx;
  if (historyRequest?.previous && writer)
    restorePrevious(c, seen, unreadable, new HistoryReader(historyRequest.previous), writer, opts, fam, findings, registry);
  const { serviceDrafts, endpointsDrafts, slices, edge } = c;

  const services = admittedServices(serviceDrafts, cidrs, opts, findings, c, cache?.allocation);
  const explicit = new Set<string>();
  for (const s of slices) if (s.serviceName !== undefined) explicit.add(`${s.namespace}/${s.serviceName}`);
  const serviceKeys = new Set(services.map((s) => `${s.namespace}/${s.name}`));
  const mirrored = mirrorEndpoints(endpointsDrafts, explicit, serviceKeys);

  // Nodes: the manifests' Node objects when there are any, else the configured (or default) nodes.
  const nodes = (c.manifestNodes.length > 0 ? c.manifestNodes : [...(opts.nodes ?? defaultNodes)]).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const nodeMap = new Map(nodes.map((n) => [n.name, n]));
  const isNotReady = notReadyMatcher(opts.notReady ?? []);
  // A feed's cache (emulate/emulate-cache.ts) gives what the steps below give, doing again only what changed.
  const podCidrs = cache ? parsePodCidrs(opts.podCIDRs ?? defaultClusterOptions.podCIDRs ?? [], findings) : undefined;
  const cached = cache && podCidrs ? cache.pods(c.workloads, c.pods, nodes, nodeMap, podCidrs, opts.notReady ?? [], isNotReady, findings) : undefined;
  let finalPods: Pod[];
  let infos: WorkloadInfo[];
  if (cached) {
    finalPods = cached.pods;
    infos = cached.infos;
    c.workloads = [];
  } else {
    const pods = ownsPods ? c.pods : c.pods.map((p) => ({ ...p }));
    const derived = deriveWorkloadPods(cache ? c.workloads.map((w) => cache.bound(w, findings)) : c.workloads, pods, nodes);
    infos = derived.infos;
    // Nothing reads the workload drafts past here: their templates and checkers (~25 MiB at 10k
    // workloads) go before the pods get addresses and slices, where the load peaks.
    c.workloads = [];
    const allPods = [...pods, ...derived.pods].map((p) => (isNotReady(p) ? { ...p, ready: false } : p));
    const podRanges = podCidrs ?? parsePodCidrs(opts.podCIDRs ?? defaultClusterOptions.podCIDRs ?? [], findings);
    // Every pod here was read or derived just now and is held nowhere else: addresses in place.
    finalPods = assignPodIPs(allPods, podRanges, nodeMap, findings, true).sort(byNsName);
  }

  // The endpoints controller, for selector Services without slices or Endpoints in the manifests.
  const claimed = new Set(explicit);
  for (const e of endpointsDrafts) claimed.add(`${e.meta.namespace}/${e.meta.name}`);
  const takenSliceNames = new Set([...slices, ...mirrored].map((s) => `${s.namespace}/${s.name}`));
  const generated = cached
    ? cache!.slices(services, nodeMap, claimed, takenSliceNames)
    : generateEndpointSlices(services, PodIndex.forServices(finalPods, services), nodeMap, claimed, takenSliceNames);
  const allSlices = [...slices, ...mirrored, ...generated.slices];
  const endpointSlices = cache ? cache.sortedSlices(allSlices, byNsName) : allSlices.sort(byNsName);

  const namespaces = new Map<string, NamespaceObject>();
  const nsNames = [...new Set([...c.declaredNamespaces.keys(), ...c.impliedNamespaces])].sort();
  for (const n of nsNames) {
    namespaces.set(n, c.declaredNamespaces.get(n) ?? { name: n, labels: { 'kubernetes.io/metadata.name': n } });
  }

  const edgeModel = edge.build(services, namespaces, opts, findings);
  const built: Omit<ClusterModel, 'findings'> = {
    namespaces,
    services: withLoadBalancerStatus(services, edgeModel),
    endpointSlices,
    pods: finalPods,
    serviceImports: c.imports.sort(byNsName),
    objectCount: c.objectCount,
    ignoredKinds: new Map([...c.ignoredKinds.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))),
    rejected: c.rejected.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line)),
    nodes,
    workloads: infos,
    controllerServices: generated.managed,
    edge: edgeModel,
  };
  for (const u of c.unusedKinds.values()) {
    findings.push({
      file: u.file,
      line: u.line,
      severity: 'info',
      code: 'kind-unused',
      message: `${u.kind}: ${u.count === 1 ? 'an object' : `${u.count} objects`} of a kind DNS does not use (accepted, not served)`,
    });
  }
  const sorted = sortFindings(findings);
  const model: ClusterModel = { ...built, findings: sorted };
  const history = writer?.done();
  // Errors no object owns (an option, a path that cannot be read: line 0) stop the load; an
  // object's or a document's own errors leave that one out, unless the caller asks for
  // strictness (--strict): the API server rejects one object of an apply, not the cluster.
  if (sorted.some((f) => f.severity === 'error' && (opts.strict === true || f.file === '<options>' || f.line === 0))) {
    throw new ManifestError(sorted);
  }
  return history ? { model, findings: sorted, history } : { model, findings: sorted };
}

/**
 * Allocates cluster IPs and node ports, then leaves out the Services whose allocation failed (an
 * IP another Service holds, a full range): the API server refuses to create those.
 */
function admittedServices(
  drafts: ServiceDraft[],
  cidrs: ReturnType<typeof parseServiceCidrs>,
  opts: ClusterOptions,
  findings: Finding[],
  c: Collected,
  memo: AllocationMemo | undefined,
): Service[] {
  const all = assignNodePorts(allocateClusterIPs(drafts, cidrs, memo), opts.nodePortRange, findings, nodePortLines(drafts), c.edge.withoutNodePorts);
  // Both report through each Service's checker, so its errors say whether it was refused.
  const refused = new Set<string>();
  for (const d of drafts) if (d.check.errors > 0) refused.add(`${d.meta.namespace}/${d.meta.name}`);
  if (refused.size === 0) return all;
  const kept: Service[] = [];
  for (const s of all) {
    if (!refused.has(`${s.namespace}/${s.name}`)) kept.push(s);
    else c.rejected.push({ kind: 'Service', apiVersion: 'v1', namespace: s.namespace, name: s.name, ...s.source });
  }
  return kept;
}

/**
 * Builds the model from in-memory manifest texts (`file` is used for messages and to detect JSON).
 * Objects with errors are left out (`model.rejected`) and the findings returned; throws
 * ManifestError carrying every finding when an error belongs to no object (an option, an unreadable
 * path) or, with `strict`, when any finding is an error.
 */
export function buildModel(docs: { file: string; text: string }[], options?: Partial<ClusterOptions>, history?: HistoryRequest): LoadResult {
  return build(
    docs.map(
      ({ file, text }): ObjectSource => ({
        file,
        read: (findings, limits, _onTextGone, onText) => {
          onText?.(text);
          return parseManifestText(file, text, findings, limits);
        },
      }),
    ),
    options,
    [],
    undefined,
    history,
  );
}

/**
 * Loads manifests from files and directories (walked recursively: *.yaml, *.yml, *.json, sorted,
 * hidden entries skipped). Errors as buildModel.
 */
export function loadManifests(paths: string[], options?: Partial<ClusterOptions>, progress?: ReadProgress, history?: HistoryRequest): LoadResult {
  const findings: Finding[] = [];
  const files = collectManifestFiles(paths, findings);
  // Each file is read when the reader reaches it, and its text goes once its objects are read.
  const sources = files.map(
    (file): ObjectSource => ({ file, read: (found, limits, onTextGone, onText) => readManifestObjects(file, found, limits, onTextGone, onText) }),
  );
  return build(sources, options, findings, progress, history);
}

/**
 * What the API server would still hold after a failed apply: for each object rejected now, the
 * version the previous load admitted; for each file with a document that could not be read now,
 * the previous load's objects of that file that this load has not met. Each is read again as
 * then (its findings were reported then) and noted in the new history, so a later load keeps it
 * too while the new version stays rejected.
 */
function restorePrevious(
  c: Collected,
  seen: Map<string, SourceRef>,
  unreadable: ReadonlySet<string>,
  prev: HistoryReader,
  writer: HistoryWriter,
  opts: ClusterOptions,
  fam: FamilyInfo,
  findings: Finding[],
  registry: KindRegistry,
): void {
  const oldByFile = new Map<string, Map<string, RawObject>>();
  const oldObjects = (file: string): Map<string, RawObject> => {
    let m = oldByFile.get(file);
    if (m) return m;
    m = new Map();
    oldByFile.set(file, m);
    const text = prev.text(file);
    if (text === undefined) return m;
    for (const raw of parseManifestText(file, text, [], opts.manifestLimits)) {
      const key = rawKey(raw, opts, registry);
      if (key !== undefined && !m.has(key)) m.set(key, raw);
    }
    return m;
  };
  const restore = (key: string, raw: RawObject, at: SourceRef, why: string): void => {
    const scratch: Finding[] = [];
    const h = readHeader(raw, opts, scratch, registry);
    if (!h) return;
    const rejectedBefore = c.rejected.length;
    readObject(c, h, seen, fam, registry);
    raw.positions?.settle(undefined);
    if (c.rejected.length > rejectedBefore) {
      c.rejected.length = rejectedBefore; // not admitted under today's options either: nothing to keep
      return;
    }
    writer.carry(key, raw.file, raw.line, raw.obj);
    findings.push({ file: at.file, line: at.line, severity: 'warning', code: 'previous-version-served', message: `${h.check.what}: ${why}` });
  };
  const rejectedKeys = new Set<string>();
  for (const r of [...c.rejected]) {
    if (r.kind === '') continue;
    const key = objectKey(groupOf(r.apiVersion), r.kind, r.namespace, r.name);
    rejectedKeys.add(key);
    if (seen.has(key)) continue;
    const carried = prev.carriedObject(key);
    const raw = carried ? { file: carried.file, line: carried.line, obj: carried.obj } : oldObjects(r.file).get(key);
    if (raw) {
      restore(
        key,
        raw,
        r,
        `the version the previous load admitted (${raw.file}:${raw.line} then) keeps being served, as the API server keeps the old object when an apply fails; fix the errors to apply this one`,
      );
    } else if (prev.wasSkipped(r.file)) {
      findings.push({
        ...r,
        severity: 'warning',
        code: 'previous-version-not-kept',
        message: `${r.kind} "${r.namespace === '' ? '' : `${r.namespace}/`}${r.name}": its previous version is not served either: ${r.file} was larger than the admission history keeps (--manifest-history-bytes)`,
      });
    }
  }
  for (const file of unreadable) {
    for (const [key, raw] of oldObjects(file)) {
      if (seen.has(key) || rejectedKeys.has(key)) continue;
      restore(
        key,
        raw,
        { file, line: raw.line },
        `a document of ${file} cannot be read now, so this object keeps its previous version (line ${raw.line} then), as a failed apply leaves the cluster as it was; fix the file's errors`,
      );
    }
  }
}

/** The identity of a raw object, when it has one. */
function rawKey(raw: RawObject, opts: ClusterOptions, registry: KindRegistry): string | undefined {
  if (!isObj(raw.obj)) return undefined;
  const kind = raw.obj['kind'] ?? raw.listKind;
  const apiVersion = raw.obj['apiVersion'] ?? raw.listApiVersion;
  const md = raw.obj['metadata'];
  if (typeof kind !== 'string' || typeof apiVersion !== 'string' || !isObj(md) || typeof md['name'] !== 'string') return undefined;
  const ns = md['namespace'];
  const lookup = registry.lookup(apiVersion, kind);
  const namespaced = lookup.known ? lookup.namespaced : namespacedByName(kind);
  const namespace = namespaced ? (typeof ns === 'string' && ns !== '' ? ns : opts.defaultNamespace) : '';
  return objectKey(groupOf(apiVersion), kind, namespace, md['name']);
}
