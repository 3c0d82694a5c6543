// `clusterdns diff`, the computation: each side's served records (the same listing `records`
// prints, asked of the real query path) and `check` findings, and what changed between them.
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { buildApp, runtimeClusterOptions, type App } from '../app.js';
import { rdataText } from '../dns/present.js';
import { createLogger } from './logger.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { collectServed } from './records.js';
import { ZoneListing } from './records-list.js';
import { directRdata } from './records-direct.js';
import type { ModelFinding } from '../cluster/check.js';
import { sharedFeed } from '../cluster/feed-thread.js';
import { ManifestError } from '../cluster/model/finding.js';
import { relativePath, type FindingObject, type ReportFinding } from './findings-output.js';
import { reportFindings } from './check.js';
import { Provenance, provenanceIndex, type Origin } from './diff-provenance.js';
import { type DiffView, diffView } from './diff-view.js';
import type { ClusterOptions, SourceRef } from '../cluster/model/model.js';

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
export function shownPath(file: string, root: string): string {
  if (file === '' || file.startsWith('(') || file.startsWith('<')) return file;
  const abs = path.resolve(file);
  const rel = path.relative(root, abs);
  if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  return relativePath(file);
}

/**
 * The manifest findings `clusterdns check` reports (the load's, the model checks' and the
 * statuses filled in or left pending), paths shown from the side's root. Corefile errors are not
 * among them: a Corefile that does not build fails the diff.
 */
function sideFindings(side: Side, found: readonly ModelFinding[]): ReportFinding[] {
  return reportFindings(found, (file) => shownPath(file, side.root));
}

/** A side's DiffView, kept subscribed: each load of its manifests (a reload) builds it again. */
export interface SideViews {
  /** The view of the manifests as the last load found them. */
  current(): Promise<DiffView>;
  close(): void;
}

const NO_VIEW: DiffView = { findings: [], index: provenanceIndex(undefined) };

/**
 * The side's findings and the index that places its records, built in the loader thread of the
 * manifest feed the server's kubernetes block opened (the same paths and options give the same
 * feed, so nothing is loaded again); a feed of its own when no block reads these manifests.
 */
export function openSideViews(app: App, side: Side, options: Partial<ClusterOptions> | undefined): SideViews {
  if (side.manifests.length === 0) return { current: () => Promise.resolve(NO_VIEW), close: () => undefined };
  const feed = sharedFeed((key, create) => app.share(key, create), [...side.manifests], runtimeClusterOptions(options), { oneShot: true });
  let subscription: ReturnType<typeof feed.value.subscribe<DiffView>>;
  try {
    subscription = feed.value.subscribe(diffView(), { onView: () => undefined });
  } catch (e) {
    feed.release();
    throw e;
  }
  return {
    current: async () => {
      try {
        await feed.value.refresh();
        return (await subscription.current()).value;
      } catch (e) {
        if (e instanceof ManifestError) return { findings: e.findings, index: provenanceIndex(undefined) };
        throw e;
      }
    },
    close: () => {
      subscription.close();
      feed.release();
    },
  };
}

/** A record set without its place. */
export interface SetData {
  readonly zone: string;
  readonly name: string;
  readonly type: string;
  readonly ttl: number;
  readonly data: readonly string[];
}

/**
 * A side's record sets as plain strings, cheap to hand between threads: for each set its key,
 * JSON [zone, name, type] and JSON [ttl, ...data] (sorted data, so equal bodies are equal sets).
 */
export interface SideListing {
  readonly rows: readonly string[];
  readonly findings: readonly ReportFinding[];
}

/** A side listed: its listing, and the places of any of its sets (from the side's model, kept until asked). */
export interface ListedSide {
  readonly listing: SideListing;
  /** The origins of the sets `keys` (keys of the listing). */
  originsOf(keys: readonly string[]): Origin[] | Promise<Origin[]>;
}

/** A side listed in this thread. */
export interface LoadedSide extends ListedSide {
  originsOf(keys: readonly string[]): Origin[];
}

/** The set a listing row holds. */
export function rowSet(head: string, body: string): SetData {
  const [zone, name, type] = JSON.parse(head) as [string, string, string];
  const [ttl, ...data] = JSON.parse(body) as [number, ...string[]];
  return { zone, name, type, ttl, data };
}

/** A server built from the side, read once and never listening, with the cluster `options`. */
export function sideApp(side: Side, options: Partial<ClusterOptions> | undefined, flags: ClusterFlags): Promise<App> {
  return buildApp({
    conf: side.conf,
    manifests: [...side.manifests],
    port: 53,
    logger: createLogger('silent', 2),
    cluster: options,
    corefileLimits: corefileLimits(flags),
    oneShot: true,
    answerCacheBytes: 0,
    // The model stays in the loader thread: what diff needs of it comes as a view (diff-view.ts).
    retainModel: false,
  });
}

/** Loads the side's manifests into a server, lists every record set it serves, and keeps what places them. */
export async function loadSide(side: Side, flags: ClusterFlags): Promise<LoadedSide> {
  const options = clusterOptions(flags);
  const app = await sideApp(side, options, flags);
  try {
    return await listSide(app, side, options);
  } finally {
    await app.close();
  }
}

/**
 * Every record set `app` serves (built from the side, with the cluster `options`), with the
 * side's findings and what places its sets: the listing `records` makes. `views`: the side's
 * views, subscribed by the caller (kept over a reload), else subscribed here for this listing.
 */
export async function listSide(app: App, side: Side, options: Partial<ClusterOptions> | undefined, views?: SideViews): Promise<LoadedSide> {
  // Asked for first: the loader thread builds it while this one lists the records.
  const own = views === undefined ? openSideViews(app, side, options) : undefined;
  const viewPending = (views ?? own!).current();
  viewPending.catch(() => undefined);
  const byZone = await collectServed(app, undefined, {
    open: () => new ZoneListing(),
    add: (list, owner, rr) => list.add(owner, rr, rdataText(rr)),
    addDirect: (list, rr) => list.addDirect(rr.name, rr.type, (rr as { ttl?: number }).ttl, directRdata(rr)),
  });
  let view: DiffView;
  try {
    view = await viewPending;
  } finally {
    own?.close();
  }
  const findings = sideFindings(side, view.findings);
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
  const rows: string[] = [];
  for (const [key, s] of sets) {
    s.data.sort();
    rows.push(key, JSON.stringify([s.zone, s.name, s.type]), JSON.stringify([s.ttl, ...s.data]));
  }
  const zones = [...byZone.keys()];
  // Made when first asked: a diff asks for the places of the sets that changed, not of all.
  let provenance: Provenance | undefined;
  // A few files hold every object: each path is made relative once.
  const shown = new Map<string, string>();
  const show = (file: string): string => {
    let p = shown.get(file);
    if (p === undefined) shown.set(file, (p = shownPath(file, side.root)));
    return p;
  };
  return {
    listing: { rows, findings },
    originsOf(keys) {
      provenance ??= new Provenance(view.index, zones);
      return keys.map((key) => {
        const s = sets.get(key);
        if (!s) throw new Error(`no record set ${key} on this side`);
        const origin = provenance!.of(s.zone, s.name, s.type, s.data);
        return origin.source ? { ...origin, source: { file: show(origin.source.file), line: origin.source.line } } : origin;
      });
    },
  };
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

/** Which record sets differ, by key: in the order of the new listing (zone by zone, canonical), then what only the old one has. */
export interface Delta {
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

export function deltaOf<T>(before: ReadonlyMap<string, T>, after: ReadonlyMap<string, T>, same: (was: T, now: T) => boolean): Delta {
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [key, s] of after) {
    const was = before.get(key);
    if (was === undefined) added.push(key);
    else if (!same(was, s)) changed.push(key);
  }
  for (const key of before.keys()) if (!after.has(key)) removed.push(key);
  return { added, changed, removed };
}

/** A set with its place, as a DiffResult shows it. */
export type PlacedSet = SetData & { readonly origin: Origin };

/**
 * The diff of `delta`, each set read with `set` (old: a removed set or a changed set's old data;
 * new: an added set or a changed one, whose place is the new one). `sameFiles`: the sides' paths
 * name the same files (two directories, two revisions), so findings are matched by file too.
 */
export function resultOf(
  delta: Delta,
  set: (side: 'old' | 'new', key: string) => PlacedSet,
  findings: { readonly old: readonly ReportFinding[]; readonly new: readonly ReportFinding[] },
  labels: { old: string; new: string },
  sameFiles: boolean,
): DiffResult {
  const byNs = new Map<string, RecordChange[]>();
  const put = (origin: Origin, c: RecordChange): void => {
    const list = byNs.get(origin.namespace);
    if (list) list.push(c);
    else byNs.set(origin.namespace, [c]);
  };
  const place = (s: PlacedSet) => ({
    ...(s.origin.object ? { object: s.origin.object } : {}),
    ...(s.origin.source ? { source: s.origin.source } : {}),
  });
  for (const key of delta.added) {
    const s = set('new', key);
    put(s.origin, { change: 'added', zone: s.zone, name: s.name, type: s.type, new: { ttl: s.ttl, data: s.data }, ...place(s) });
  }
  for (const key of delta.changed) {
    const was = set('old', key);
    const s = set('new', key);
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
  for (const key of delta.removed) {
    const s = set('old', key);
    put(s.origin, { change: 'removed', zone: s.zone, name: s.name, type: s.type, old: { ttl: s.ttl, data: s.data }, ...place(s) });
  }
  const oldKeys = new Set(findings.old.map((f) => findingKey(f, sameFiles)));
  const newKeys = new Set(findings.new.map((f) => findingKey(f, sameFiles)));
  const appeared = findings.new.filter((f) => !oldKeys.has(findingKey(f, sameFiles)));
  const disappeared = findings.old.filter((f) => !newKeys.has(findingKey(f, sameFiles)));
  // Namespaces by name; records of none last.
  const namespaces = [...byNs.keys()]
    .sort((a, b) => Number(a === '') - Number(b === '') || (a < b ? -1 : a > b ? 1 : 0))
    .map((namespace) => ({ namespace, changes: byNs.get(namespace)!.sort(byName) }));
  const { added, changed, removed } = delta;
  return {
    old: labels.old,
    new: labels.new,
    namespaces,
    findings: { appeared, disappeared },
    summary: {
      added: added.length,
      removed: removed.length,
      changed: changed.length,
      findingsAppeared: appeared.length,
      findingsDisappeared: disappeared.length,
    },
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
