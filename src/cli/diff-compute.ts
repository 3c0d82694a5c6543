// `clusterdns diff`, the computation: each side's served records (the same listing `records`
// prints, asked of the real query path) and `check` findings, and what changed between them.
import path from 'node:path';
import { existsSync, readdirSync, statSync, type Stats } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { buildApp, clusterModel, type App } from '../app.js';
import { rdataText } from '../dns/present.js';
import { createLogger } from './logger.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { collectServed } from './records.js';
import { ZoneListing } from './records-list.js';
import { directRdata } from './records-direct.js';
import { checkLoadedModel } from '../cluster/check.js';
import { ManifestError, type Finding } from '../cluster/model/finding.js';
import { relativePath, type FindingObject, type ReportFinding } from './findings-output.js';
import { modelInfos, reportFindings } from './check.js';
import { Provenance, type Origin } from './diff-provenance.js';
import type { ClusterModel, SourceRef } from '../cluster/model/model.js';

/** One side of a diff: the Corefile and manifests to load, and the directory its paths are shown from. */
export interface Side {
  /** What the output calls it (a path, a revision). */
  readonly label: string;
  readonly conf?: string;
  readonly manifests: readonly string[];
  /** Absolute; files under it are shown relative to it, others relative to the current directory. */
  readonly root: string;
}

/** A side read from a manifest file or directory as given on the command line. */
export function pathSide(p: string, conf: string | undefined): Side {
  if (!existsSync(p)) throw new Error(`${p}: no such file or directory`);
  const abs = path.resolve(p);
  const root = statSync(abs).isDirectory() ? abs : path.dirname(abs);
  return { label: p, ...(conf !== undefined ? { conf } : {}), manifests: [abs], root };
}

/** The records of one owner and type. */
export interface RecordSet {
  readonly zone: string;
  readonly name: string;
  readonly type: string;
  /** The smallest TTL of the set's records (what a cache keeps the set for). */
  readonly ttl: number;
  /** Presentation-form data, sorted. */
  readonly data: readonly string[];
  readonly origin: Origin;
}

export interface Snapshot {
  /** Keyed by lowercased owner and type. */
  readonly sets: ReadonlyMap<string, RecordSet>;
  readonly findings: readonly ReportFinding[];
}

export interface RecordChange {
  readonly change: 'added' | 'removed' | 'changed';
  readonly zone: string;
  readonly name: string;
  readonly type: string;
  readonly old?: { readonly ttl: number; readonly data: readonly string[] };
  readonly new?: { readonly ttl: number; readonly data: readonly string[] };
  readonly object?: FindingObject;
  /** The object's place: in the new tree, for a removed set in the old one. */
  readonly source?: SourceRef;
}

export interface NamespaceChanges {
  /** '' for records of no namespace (zone apex, Corefile-made names). */
  readonly namespace: string;
  readonly changes: readonly RecordChange[];
}

export interface DiffResult {
  readonly old: string;
  readonly new: string;
  readonly namespaces: readonly NamespaceChanges[];
  readonly findings: { readonly appeared: readonly ReportFinding[]; readonly disappeared: readonly ReportFinding[] };
  readonly summary: DiffSummary;
}

export interface DiffSummary {
  readonly added: number;
  readonly removed: number;
  readonly changed: number;
  readonly findingsAppeared: number;
  readonly findingsDisappeared: number;
}

/** A path as shown: relative to the side's root when under it, else as `check` shows paths. */
function shownPath(file: string, root: string): string {
  if (file === '' || file.startsWith('(') || file.startsWith('<')) return file;
  const abs = path.resolve(file);
  const rel = path.relative(root, abs);
  if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  return relativePath(file);
}

/**
 * The manifest findings `clusterdns check` reports (the load's, the model checks' and the
 * statuses filled in or left pending) for the side's model, paths shown from the side's root.
 * `failed`: the findings of a load that built no model. Corefile errors are not among them: a
 * Corefile that does not build fails the diff.
 */
export function sideFindings(side: Side, model: ClusterModel | undefined, failed: readonly Finding[] = []): ReportFinding[] {
  const found = [...(model ? checkLoadedModel(model) : failed), ...modelInfos(model)];
  return reportFindings(found, (file) => shownPath(file, side.root));
}

/**
 * The side's cluster model: the one the server's kubernetes block loaded on its loader thread
 * and handed over (retainModel), so that records, findings and provenance come from one load;
 * loaded here only when no block reads these manifests.
 */
function sideModel(app: App, side: Side, options: ReturnType<typeof clusterOptions>): { model?: ClusterModel; failed?: readonly Finding[] } {
  try {
    const model = clusterModel(app, side.manifests.length > 0 ? [...side.manifests] : undefined, options);
    return model ? { model } : {};
  } catch (e) {
    if (e instanceof ManifestError) return { failed: e.findings };
    throw e;
  }
}

const sideWorker = fileURLToPath(new URL('./diff-side-worker.js', import.meta.url));

/**
 * Manifests smaller than this are diffed in this thread: a thread's start (the modules loaded
 * again, about half a second of CPU) costs more than the listing it would overlap.
 */
const THREAD_BYTES = 1 << 20;

/** Whether the manifest files under `paths` hold more than `limit` bytes (the walk stops once they do). */
function largerThan(paths: readonly string[], limit: number): boolean {
  let total = 0;
  const walk = (p: string): boolean => {
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      return false;
    }
    if (st.isFile()) return (total += st.size) > limit;
    if (!st.isDirectory()) return false;
    for (const e of readdirSync(p)) if (walk(path.join(p, e))) return true;
    return false;
  };
  return paths.some(walk);
}

/**
 * Every record set the side serves, attributed to the objects that make them, and its findings:
 * on a thread of its own when the manifests are large, so that two sides asked for at once list
 * their records at once (in this thread where the compiled worker is missing, as under a
 * TypeScript runner).
 */
export function snapshot(side: Side, flags: ClusterFlags): Promise<Snapshot> {
  if (!existsSync(sideWorker) || !largerThan(side.manifests, THREAD_BYTES)) return snapshotHere(side, flags);
  return new Promise((resolve, reject) => {
    const worker = new Worker(sideWorker, { workerData: { side, flags } });
    worker.once('message', (m: { snapshot?: Snapshot; error?: string }) => {
      if (m.snapshot) resolve(m.snapshot);
      else reject(new Error(m.error ?? 'the diff thread failed'));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the diff thread exited (code ${code})`)));
  });
}

/** snapshot, in this thread. */
export async function snapshotHere(side: Side, flags: ClusterFlags): Promise<Snapshot> {
  const options = clusterOptions(flags);
  const app = await buildApp({
    conf: side.conf,
    manifests: [...side.manifests],
    port: 53,
    logger: createLogger('silent', 2),
    cluster: options,
    corefileLimits: corefileLimits(flags),
    oneShot: true,
    answerCacheBytes: 0,
  });
  let loaded: ReturnType<typeof sideModel>;
  let byZone: Map<string, ZoneListing>;
  try {
    byZone = await collectServed(app, undefined, {
      open: () => new ZoneListing(),
      add: (list, owner, rr) => list.add(owner, rr, rdataText(rr)),
      addDirect: (list, rr) => list.addDirect(rr.name, rr.type, (rr as { ttl?: number }).ttl, directRdata(rr)),
    });
    loaded = sideModel(app, side, options);
  } finally {
    await app.close();
  }
  const { model } = loaded;
  const findings = sideFindings(side, model, loaded.failed);
  const provenance = new Provenance(model, [...byZone.keys()]);
  const sets = new Map<string, { zone: string; name: string; type: string; ttl: number; data: string[] }>();
  for (const [zone, listing] of byZone) {
    for (const r of listing.order()) {
      // The SOA serial follows every change of the zone's data: only its other fields are compared.
      const data = r.type === 'SOA' ? soaWithoutSerial(r.rdata) : r.rdata;
      const key = `${r.name.toLowerCase()}|${r.type}`;
      const ttl = Number(r.ttl);
      const set = sets.get(key);
      if (set) {
        set.data.push(data);
        if (ttl < set.ttl) set.ttl = ttl;
      } else sets.set(key, { zone, name: r.name, type: r.type, ttl, data: [data] });
    }
  }
  const out = new Map<string, RecordSet>();
  // A few files hold every object: each path is made relative once.
  const shown = new Map<string, string>();
  const show = (file: string): string => {
    let p = shown.get(file);
    if (p === undefined) shown.set(file, (p = shownPath(file, side.root)));
    return p;
  };
  for (const [key, s] of sets) {
    s.data.sort();
    const origin = provenance.of(s.zone, s.name, s.type, s.data);
    const source = origin.source ? { file: show(origin.source.file), line: origin.source.line } : undefined;
    out.set(key, { ...s, origin: { ...origin, ...(source ? { source } : {}) } });
  }
  return { sets: out, findings };
}

/** SOA data with its serial (the third field) as `*`. */
function soaWithoutSerial(rdata: string): string {
  const f = rdata.split(' ');
  if (f.length === 7) f[2] = '*';
  return f.join(' ');
}

/** What identifies a finding across the two sides: not its line, which moves with unrelated edits. */
function findingKey(f: ReportFinding, withFile: boolean): string {
  const o = f.object ? `${f.object.kind}/${f.object.namespace}/${f.object.name}` : '';
  return `${withFile ? f.file : ''}\0${f.severity}\0${f.code}\0${f.message}\0${o}`;
}

const sameData = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The changes from `before` to `after`. `sameFiles`: the sides' paths name the same files (two
 * directories, two revisions), so findings are matched by file too.
 */
export function compare(before: Snapshot, after: Snapshot, labels: { old: string; new: string }, sameFiles: boolean): DiffResult {
  const byNs = new Map<string, RecordChange[]>();
  const put = (origin: Origin, c: RecordChange): void => {
    const list = byNs.get(origin.namespace);
    if (list) list.push(c);
    else byNs.set(origin.namespace, [c]);
  };
  const place = (s: RecordSet) => ({
    ...(s.origin.object ? { object: s.origin.object } : {}),
    ...(s.origin.source ? { source: s.origin.source } : {}),
  });
  let added = 0;
  let removed = 0;
  let changed = 0;
  // In the order of the new listing (zone by zone, canonical), then what only the old one has.
  for (const [key, s] of after.sets) {
    const was = before.sets.get(key);
    if (!was) {
      added++;
      put(s.origin, { change: 'added', zone: s.zone, name: s.name, type: s.type, new: { ttl: s.ttl, data: s.data }, ...place(s) });
    } else if (was.ttl !== s.ttl || !sameData(was.data, s.data)) {
      changed++;
      put(s.origin, {
        change: 'changed',
        zone: s.zone,
        name: s.name,
        type: s.type,
        old: { ttl: was.ttl, data: was.data },
        new: { ttl: s.ttl, data: s.data },
        ...place(s),
      });
    }
  }
  for (const [key, s] of before.sets) {
    if (after.sets.has(key)) continue;
    removed++;
    put(s.origin, { change: 'removed', zone: s.zone, name: s.name, type: s.type, old: { ttl: s.ttl, data: s.data }, ...place(s) });
  }
  const oldKeys = new Set(before.findings.map((f) => findingKey(f, sameFiles)));
  const newKeys = new Set(after.findings.map((f) => findingKey(f, sameFiles)));
  const appeared = after.findings.filter((f) => !oldKeys.has(findingKey(f, sameFiles)));
  const disappeared = before.findings.filter((f) => !newKeys.has(findingKey(f, sameFiles)));
  // Namespaces by name; records of none last.
  const namespaces = [...byNs.keys()]
    .sort((a, b) => Number(a === '') - Number(b === '') || (a < b ? -1 : a > b ? 1 : 0))
    .map((namespace) => ({ namespace, changes: byNs.get(namespace)!.sort(byName) }));
  return {
    old: labels.old,
    new: labels.new,
    namespaces,
    findings: { appeared, disappeared },
    summary: { added, removed, changed, findingsAppeared: appeared.length, findingsDisappeared: disappeared.length },
  };
}

/** The owner's labels right to left, lowercased: names under one parent sort together, as in a zone file. */
const nameKey = (name: string): string => name.toLowerCase().split('.').reverse().join('\0');

const TYPE_ORDER = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'DNAME', 'MX', 'SRV', 'PTR', 'TXT', 'CAA'];
const typeRank = (t: string): number => TYPE_ORDER.indexOf(t);

/** Reverse zones after the others, then by name and type. */
function byName(a: RecordChange, b: RecordChange): number {
  const ra = Number(a.zone.endsWith('arpa.'));
  const rb = Number(b.zone.endsWith('arpa.'));
  if (ra !== rb) return ra - rb;
  const ka = nameKey(a.name);
  const kb = nameKey(b.name);
  if (ka !== kb) return ka < kb ? -1 : 1;
  return typeRank(a.type) - typeRank(b.type) || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0);
}

/** Whether anything changed (what --exit-code reports). */
export function hasChanges(r: DiffResult): boolean {
  const s = r.summary;
  return s.added + s.removed + s.changed + s.findingsAppeared + s.findingsDisappeared > 0;
}
