// What the page shows, computed by the commands' own code: the records `clusterdns records` lists
// (servedRecords), the findings `clusterdns check` reports (of the App's own model), and the cluster
// model the resolver commands read, grouped by namespace and by the object each record comes from.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { clusterModel, type App } from '../app.js';
import { isClusterDataProvider } from '../chain/cluster-data.js';
import { reportFindings } from '../cli/check.js';
import { checkLoadedModel, modelInfos } from '../cluster/check.js';
import { relativePath, summarize } from '../cli/findings-output.js';
import { clusterOptions, type ClusterFlags } from '../cli/options.js';
import { servedRecords } from '../cli/records.js';
import type { ClusterModel, SourceRef } from '../cluster/model/model.js';
import { collectManifestFiles } from '../cluster/read/files.js';
import { canonicalCompare } from '../dns/canonical.js';
import { rdataText } from '../dns/present.js';
import { isReverse } from '../pkg/names.js';
import { Provenance } from '../cli/diff-provenance.js';
import type { RecordsResponse, UiFinding, UiNamespace, UiObject, UiRecord, UiSource } from './types.js';

/** The manifest paths the App reads: the command line's and those of the Corefile's kubernetes blocks. */
export function manifestPaths(app: App, flags: ClusterFlags): string[] {
  const paths = new Set<string>(flags.manifests ?? []);
  for (const plugin of app.chains.flatMap((c) => c.plugins)) {
    if (isClusterDataProvider(plugin)) for (const p of plugin.manifestPaths) paths.add(p);
  }
  return [...paths];
}

/**
 * The manifest files the loader reads for `paths` (the same walk), by real path, each with the
 * name the page shows: only these are ever served by /api/manifest.
 */
export function manifestFiles(paths: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of collectManifestFiles(paths, [])) {
    try {
      out.set(realpathSync(file), relativePath(file));
    } catch {
      // Gone since the walk: not served.
    }
  }
  return out;
}

/** The model the resolver commands read for these flags (the kubernetes plugin's when it has the same paths). */
export function modelOf(app: App, flags: ClusterFlags): ClusterModel | undefined {
  return clusterModel(app, flags.manifests, clusterOptions(flags));
}

interface CheckJson {
  findings: (UiFinding & { object?: { kind: string; namespace: string; name: string } })[];
  summary: RecordsResponse['summary'];
}

/**
 * What `clusterdns check` reports of the manifests (the load's findings, the model checks, the
 * statuses filled in or left pending), from the model the App already loaded: no second load.
 * Corefile errors have none to report here: the App was built from the Corefile.
 */
export function modelFindings(model: ClusterModel | undefined): CheckJson {
  const findings = reportFindings([...(model ? checkLoadedModel(model) : []), ...modelInfos(model)], relativePath);
  return { findings, summary: summarize(findings) };
}

const sourceOf = (s: SourceRef | undefined): UiSource | undefined => (s ? { file: relativePath(s.file), line: s.line } : undefined);

/** The key of an object: kind, namespace, name. */
const keyOf = (kind: string, namespace: string, name: string): string => `${kind}\0${namespace}\0${name}`;

interface MutableObject {
  kind: string;
  name: string;
  source?: UiSource;
  records: UiRecord[];
  findings: UiFinding[];
}

const finding = (f: UiFinding): UiFinding => ({ file: f.file, line: f.line, severity: f.severity, code: f.code, message: f.message });

/** GET /api/records: every served record, by namespace and object, with the findings beside them. */
export async function recordsView(app: App, flags: ClusterFlags, generation: number): Promise<RecordsResponse> {
  const model = modelOf(app, flags);
  const checked = modelFindings(model);
  const byZone = await servedRecords(app);
  const zones = [...byZone.keys()].sort((a, b) => Number(isReverse(a)) - Number(isReverse(b)) || canonicalCompare(a, b));
  const provenance = new Provenance(model, zones);
  const namespaces = new Map<string, { source?: UiSource; objects: Map<string, MutableObject> }>();
  const nsOf = (name: string): { source?: UiSource; objects: Map<string, MutableObject> } => {
    let ns = namespaces.get(name);
    if (!ns) {
      const src = sourceOf(model?.namespaces.get(name)?.source);
      namespaces.set(name, (ns = { ...(src ? { source: src } : {}), objects: new Map() }));
    }
    return ns;
  };
  const objectOf = (kind: string, namespace: string, name: string, source: SourceRef | undefined): MutableObject => {
    const objects = nsOf(namespace).objects;
    const key = keyOf(kind, namespace, name);
    let o = objects.get(key);
    if (!o) {
      const src = sourceOf(source);
      objects.set(key, (o = { kind, name, ...(src ? { source: src } : {}), records: [], findings: [] }));
    }
    return o;
  };
  // Every Service, manifest pod and workload is shown, with records or without.
  for (const ns of model?.namespaces.keys() ?? []) nsOf(ns);
  for (const s of model?.services ?? []) objectOf('Service', s.namespace, s.name, s.source);
  for (const w of model?.workloads ?? []) objectOf(w.kind, w.namespace, w.name, w.source);
  for (const p of model?.pods ?? []) if (!p.derived) objectOf('Pod', p.namespace, p.name, p.source);
  // What the API server would refuse is shown too, with the findings that say why.
  for (const r of model?.rejected ?? []) objectOf(r.kind || 'object', r.namespace, r.name || `(line ${r.line})`, r);
  let recordCount = 0;
  for (const zone of zones) {
    const records = [...byZone.get(zone)!.values()].map((rr) => ({
      name: rr.name.toLowerCase().endsWith('.') ? rr.name.toLowerCase() : `${rr.name.toLowerCase()}.`,
      ttl: (rr as { ttl?: number }).ttl ?? 0,
      type: rr.type,
      data: rdataText(rr),
      zone,
    }));
    records.sort((a, b) => canonicalCompare(a.name, b.name) || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) || (a.data < b.data ? -1 : 1));
    for (const r of records) {
      const origin = provenance.of(zone, r.name, r.type, [r.data]);
      const o = origin.object
        ? objectOf(origin.object.kind, origin.object.namespace, origin.object.name, origin.source)
        : objectOf('Zone', origin.namespace, zone, undefined);
      o.records.push(r);
      recordCount++;
    }
  }
  // Findings go beside the object they name, else the object written around their line: the
  // last one of their file starting at or before it.
  const starts = new Map<string, { line: number; o: MutableObject }[]>();
  for (const ns of namespaces.values()) {
    for (const o of ns.objects.values()) {
      if (!o.source) continue;
      const file = path.resolve(o.source.file);
      const list = starts.get(file) ?? [];
      list.push({ line: o.source.line, o });
      starts.set(file, list);
    }
  }
  for (const list of starts.values()) list.sort((a, b) => a.line - b.line);
  const around = (file: string, line: number): MutableObject | undefined => {
    if (line <= 0) return undefined;
    let found: MutableObject | undefined;
    for (const s of starts.get(path.resolve(file)) ?? []) {
      if (s.line > line) break;
      found = s.o;
    }
    return found;
  };
  const loose: UiFinding[] = [];
  for (const f of checked.findings) {
    const named = f.object ? namespaces.get(f.object.namespace)?.objects.get(keyOf(f.object.kind, f.object.namespace, f.object.name)) : undefined;
    const o = named ?? around(f.file, f.line);
    if (o) o.findings.push(finding(f));
    else loose.push(finding(f));
  }
  const nsList: UiNamespace[] = [...namespaces.entries()]
    .sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([name, ns]) => ({
      name,
      ...(ns.source ? { source: ns.source } : {}),
      objects: [...ns.objects.values()].sort(compareObjects) as UiObject[],
    }));
  return { generation, zones, namespaces: nsList, findings: loose, summary: checked.summary, recordCount };
}

/** Services first, then pods, then the rest by kind; by name within a kind. */
const KIND_RANK: Record<string, number> = { Service: 0, Pod: 1 };
function compareObjects(a: MutableObject, b: MutableObject): number {
  const ra = KIND_RANK[a.kind] ?? 2;
  const rb = KIND_RANK[b.kind] ?? 2;
  if (ra !== rb) return ra - rb;
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
