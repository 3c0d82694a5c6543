// A manifest feed: loads a tree of manifest files once, then, on each reload, reads again only
// the files whose version changed and plays the control plane over every file's objects, so the
// model and findings equal a full load's (test/cluster/feed-differential.test.ts).
//
// What a file's objects become depends on other files in three ways, each handled so that a
// kept read is used only when it is what a full load would read now:
// - CustomResourceDefinitions: a CRD registered by one file validates (and decides the scope of)
//   objects in the files after it, and the deferred objects of every file. A change to a file
//   that holds or held a CRD reads every file again. Otherwise the CRDs of the kept files are
//   registered again in file order, so a file read again meets the registry a full load gives it.
// - Duplicates: the first object of a key (in reading order) is admitted, the later ones are
//   rejected naming it. Each kept file notes, per object, the key, who held it before and
//   whether it took it; a kept file is replayed against this pass's keys, and any difference
//   reads every file again (duplicates across files are errors, rare in a tree that loads).
// - Deferred kinds (a kind no API knows when its object is met, which a CRD further on may
//   define): read after every file, as a full load does; a file's deferred objects are a second
//   part of its read, merged after every file's first part.
// The admission history (admit/history.ts) is written in file order within its byte budget, from
// the kept deflated texts (the history's own bytes, nothing more), reading a file again when the
// budget now covers a text it skipped before.
import { createHash } from 'node:crypto';
import { isObj, type Obj } from './admit/validate.js';
import type { ClusterOptions, SourceRef } from './model/model.js';
import type { Finding } from './model/finding.js';
import { collectManifestFiles, type FileVersion, readManifestFile, sameVersion, versionOf } from './read/files.js';
import type { RawObject } from './read/positions.js';
import { readManifestObjects } from './read/yaml-docs.js';
import { interner } from './admit/objects.js';
import { EdgeCollector } from './emulate/edge.js';
import type { AdmissionHistory } from './admit/history.js';
import { type Collected, kindKnownNow, newCollected, objectKey, readHeader, readObject } from './collect.js';
import { emulate, LATER_SERVICE_FIELDS, loadContext, type LoadContext, type LoadResult, type ReadProgress } from './load.js';
import { pushAll } from '../pkg/arrays.js';
import { EmulationCache, rebind } from './emulate/emulate-cache.js';

/**
 * A file modified this recently before it was read may change again within the same
 * modification time (file systems with 1 s or 2 s times): its text is hashed, and the hash
 * compared at the next reload when size and time are the same.
 */
export const RACY_WINDOW_NS = 2_000_000_000n;

/** A file as the last load read it: what a persisted image (feed-image.ts) checks on start. */
export interface FileState {
  readonly file: string;
  readonly version: FileVersion | undefined;
  /** sha1 of the text read (base64), while its version alone cannot vouch for it (RACY_WINDOW_NS). */
  readonly hash: string | undefined;
}

/** What one phase of reading a file gave: its objects met in order, or deferred to after every file. */
interface PhaseRead {
  readonly part: Collected;
  readonly findings: Finding[];
  /** Per object that reached readObject, in order: its key. */
  readonly keys: string[];
  /** "file:line" of the object that held the key before it ('' none): a duplicate's message names it. */
  readonly before: string[];
  /** Its line when it took the key (admitted), else -1. */
  readonly took: number[];
}

/** One file's read, kept for the next reload while its version stays. */
interface FileRead {
  readonly version: FileVersion | undefined;
  /**
   * sha1 of the text read, when the file was modified within RACY_WINDOW_NS of the read; gone
   * once a reload found the same text after that window.
   */
  hash: string | undefined;
  readonly main: PhaseRead;
  readonly late: PhaseRead;
  readonly unreadable: boolean;
  /** Any object of kind CustomResourceDefinition (registered or not). */
  readonly hasCrd: boolean;
  /** The CRD objects it registered, in order (copies: no view into the text). */
  readonly crds: Obj[];
  /** The text's length, for the history's budget; undefined when no text was read. */
  readonly textLength: number | undefined;
  /** The history's deflated text, when it was kept. */
  deflated: Uint8Array | undefined;
}

export interface FeedOptions {
  readonly cluster?: Partial<ClusterOptions>;
  readonly progress?: ReadProgress;
  /**
   * Keep an admission history across loads (what the kubernetes plugin's loads do): each load
   * is given the previous one's, as loadManifests' HistoryRequest.previous.
   */
  readonly history?: { readonly budgetBytes?: number; readonly previous?: AdmissionHistory };
}

export interface FeedResult extends LoadResult {
  /** Files read in this load (every file on a full load). */
  reread: string[];
  /** Whether every file was read (the first load, or a change a kept read cannot stand for). */
  full: boolean;
  /** Where the time went, in ms (bench/feed.js). */
  timings: FeedTimings;
}

export interface FeedTimings {
  /** Listing the files, their versions, kept files' CRDs and keys: what an unchanged file costs. */
  check: number;
  /** Reading the files that changed (parse and admission), deferred objects included. */
  read: number;
  /** Putting every file's objects together. */
  merge: number;
  /** The control plane over every object (emulate): cluster IPs, pods, endpoints, edge. */
  emulate: number;
}

/** A reason the kept reads cannot stand for a full load: the pass starts again reading everything. */
class ReadEverything extends Error {}

export const hashText = (text: string): string => createHash('sha1').update(text).digest('base64');
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
/** The later of its two times: a version vouches for the text only once both are older than the window. */
export function changedNs(v: FileVersion): bigint {
  if (v.mtimeNs > v.ctimeNs) return v.mtimeNs; // set ahead (touch -d): a time to come
  return v.ctimeNs;
}

function isCrdRaw(raw: RawObject): boolean {
  return isObj(raw.obj) && (raw.obj['kind'] ?? raw.listKind) === 'CustomResourceDefinition';
}

function newPhase(intern: (s: string) => string): PhaseRead {
  return { part: newCollected(intern), findings: [], keys: [], before: [], took: [] };
}

/**
 * One Collected of the parts, in order, as one reader would have filled it. Drafts get checkers
 * bound to `findings` (the control plane reports through them); the kept parts are not changed.
 * Workload drafts are left as read, for `emulation` to bind those it derives pods of again.
 */
function merge(parts: readonly Collected[], findings: Finding[], emulation: EmulationCache): Collected {
  const c = newCollected((s) => s);
  for (const p of parts) {
    for (const [k, v] of p.declaredNamespaces) c.declaredNamespaces.set(k, v);
    for (const n of p.impliedNamespaces) c.impliedNamespaces.add(n);
    for (const d of p.serviceDrafts) c.serviceDrafts.push({ ...d, check: rebind(d.check, findings) });
    for (const d of p.endpointsDrafts) c.endpointsDrafts.push({ ...d, check: rebind(d.check, findings) });
    for (const d of p.workloads) c.workloads.push(d);
    emulation.bindLater(p.workloads);
    pushAll(c.slices, p.slices);
    pushAll(c.pods, p.pods);
    pushAll(c.imports, p.imports);
    pushAll(c.manifestNodes, p.manifestNodes);
    for (const [k, n] of p.ignoredKinds) c.ignoredKinds.set(k, (c.ignoredKinds.get(k) ?? 0) + n);
    for (const [k, u] of p.unusedKinds) {
      const had = c.unusedKinds.get(k);
      if (had) had.count += u.count;
      else c.unusedKinds.set(k, { ...u });
    }
    pushAll(c.rejected, p.rejected);
    c.objectCount += p.objectCount;
  }
  c.edge = EdgeCollector.merged(parts.map((p) => p.edge));
  return c;
}

/** This pass's shared state: what a full load's reader holds across files. */
interface Pass {
  readonly ctx: LoadContext;
  readonly seen: Map<string, SourceRef>;
  readonly intern: (s: string) => string;
  objects: number;
}

/**
 * Manifests loaded once and then again by file: `load()` reads every file; `reload()` reads the
 * files whose version (device, inode, size, modification time; a hash of the text when that
 * time is too close to the read) changed, and gives the same model and findings as a full load
 * of the tree as it is now. Not safe for concurrent use: one load at a time.
 */
export class ManifestFeed {
  private files = new Map<string, FileRead>();
  private history: AdmissionHistory | undefined;
  private loaded = false;
  /** The control plane's pods and slices of the last load, reused where nothing they depend on changed. */
  private readonly emulation = new EmulationCache();

  constructor(
    readonly paths: readonly string[],
    private readonly options: FeedOptions = {},
  ) {
    this.history = options.history?.previous;
  }

  /** Every file of the last load, in reading order (none before the first). */
  fileStates(): FileState[] {
    return [...this.files].map(([file, r]) => ({ file, version: r.version, hash: r.hash }));
  }

  /** Reads every file. Throws ManifestError as loadManifests does. */
  load(): FeedResult {
    return this.pass(false);
  }

  /** Reads the files that changed since the last load (every file before the first). */
  reload(): FeedResult {
    if (!this.loaded) return this.pass(false);
    try {
      return this.pass(true);
    } catch (e) {
      if (e instanceof ReadEverything) return this.pass(false);
      throw e;
    }
  }

  private pass(useKept: boolean): FeedResult {
    const t0 = performance.now();
    let readMs = 0;
    const findings: Finding[] = [];
    const list = collectManifestFiles([...this.paths], findings);
    const request = this.options.history ? { budgetBytes: this.options.history.budgetBytes, previous: this.history } : undefined;
    const ctx = loadContext(this.options.cluster, findings, request);
    const pass: Pass = { ctx, seen: new Map(), intern: interner(), objects: 0 };
    const kept = useKept ? this.files : new Map<string, FileRead>();
    if (useKept) {
      const listed = new Set(list);
      for (const [file, r] of kept) if (!listed.has(file) && r.hasCrd) throw new ReadEverything('a file with a CRD is gone');
    }
    const next = new Map<string, FileRead>();
    const deferred = new Map<string, RawObject[]>();
    const reread: string[] = [];
    for (const file of list) {
      const old = kept.get(file);
      const version = versionOf(file);
      const changed = !(old && sameVersion(old.version, version) && this.sameText(file, old));
      let r = changed ? undefined : old;
      if (r && ctx.writer && r.textLength !== undefined) {
        if (!ctx.writer.fits(r.textLength)) {
          ctx.writer.skip(file);
          r.deflated = undefined;
        } else if (r.deflated) ctx.writer.keep(file, r.textLength, r.deflated);
        else r = undefined; // skipped by the budget before, kept now: its text is needed
      }
      if (r) {
        for (const crd of r.crds) ctx.registry.addCrd(crd);
        replay(r.main, file, pass.seen);
      } else {
        const r0 = performance.now();
        const fresh = this.readFile(file, version, pass, deferred);
        readMs += performance.now() - r0;
        if (useKept && changed && (fresh.hasCrd || old?.hasCrd === true)) {
          throw new ReadEverything('a file with a CRD changed');
        }
        r = fresh;
        reread.push(file);
      }
      next.set(file, r);
    }
    // Objects of kinds unknown where they were met, after every file, as a full load reads them.
    for (const [file, r] of next) {
      const raws = deferred.get(file);
      if (raws === undefined) replay(r.late, file, pass.seen);
      else {
        const r0 = performance.now();
        for (const raw of raws) readOne(raw, r.late, pass, undefined);
        readMs += performance.now() - r0;
      }
    }
    deferred.clear();
    this.files = next;
    this.loaded = true;
    const unreadable = new Set<string>();
    const parts: Collected[] = [];
    for (const [file, r] of next) {
      pushAll(findings, r.main.findings);
      parts.push(r.main.part);
      if (r.unreadable) unreadable.add(file);
    }
    for (const r of next.values()) {
      pushAll(findings, r.late.findings);
      parts.push(r.late.part);
    }
    const t1 = performance.now();
    this.emulation.bindLater(undefined);
    const c = merge(parts, findings, this.emulation);
    const t2 = performance.now();
    const result = emulate(ctx, c, pass.seen, unreadable, findings, request, false, this.emulation);
    const t3 = performance.now();
    if (result.history) this.history = result.history;
    return { ...result, reread, full: !useKept, timings: { check: t1 - t0 - readMs, read: readMs, merge: t2 - t1, emulate: t3 - t2 } };
  }

  /** Whether a file whose version is the same has the same text (only asked when it was racy). */
  private sameText(file: string, r: FileRead): boolean {
    if (r.hash === undefined) return true;
    const text = readManifestFile(file, [], this.options.cluster?.manifestLimits?.maxFileBytes);
    if (text === undefined || hashText(text) !== r.hash) return false;
    // The text is the one read, and a write from now on gets another time: no hash needed after.
    if (r.version && nowNs() - changedNs(r.version) >= RACY_WINDOW_NS) r.hash = undefined;
    return true;
  }

  private readFile(file: string, version: FileVersion | undefined, pass: Pass, deferred: Map<string, RawObject[]>): FileRead {
    const { ctx } = pass;
    const main = newPhase(pass.intern);
    const crds: Obj[] = [];
    const racy = version === undefined || nowNs() - changedNs(version) < RACY_WINDOW_NS;
    let hash: string | undefined;
    let textLength: number | undefined;
    let deflated: Uint8Array | undefined;
    const onText = (text: string): void => {
      textLength = text.length;
      if (racy) hash = hashText(text);
      deflated = ctx.writer?.text(file, text);
    };
    const progress = this.options.progress;
    let hasCrd = false;
    let objectErrors = 0;
    const waiting: RawObject[] = [];
    for (const raw of readManifestObjects(file, main.findings, ctx.opts.manifestLimits, progress?.onTextGone, onText)) {
      main.part.objectCount++;
      if (progress && progress.every > 0 && ++pass.objects % progress.every === 0) progress.onObjects();
      if (isCrdRaw(raw)) hasCrd = true;
      if (!kindKnownNow(raw, ctx.registry)) {
        waiting.push(raw);
        continue;
      }
      objectErrors += readOne(raw, main, pass, crds);
    }
    if (waiting.length > 0) deferred.set(file, waiting);
    let errors = 0;
    for (const f of main.findings) if (f.severity === 'error') errors++;
    // A racy file whose text could not be read is compared by a hash of nothing: read again.
    if (racy && hash === undefined) hash = '';
    return { version, hash, main, late: newPhase(pass.intern), unreadable: errors > objectErrors, hasCrd, crds, textLength, deflated };
  }
}

/** Reads one object as load.ts does, noting its key's history; the error findings it added. */
function readOne(raw: RawObject, phase: PhaseRead, pass: Pass, crds: Obj[] | undefined): number {
  const { ctx, seen } = pass;
  const h = readHeader(raw, ctx.opts, phase.findings, ctx.registry);
  if (!h) {
    phase.part.rejected.push({ kind: '', apiVersion: '', namespace: '', name: '', file: raw.file, line: raw.line });
    return 0;
  }
  const key = objectKey(h.group, h.kind, h.meta.namespace, h.meta.name);
  const prev = seen.get(key);
  // As readObject decides to register a CRD: known, no error so far, not a duplicate.
  if (crds && h.kind === 'CustomResourceDefinition' && h.group === 'apiextensions.k8s.io' && h.lookup.known && h.check.errors === 0 && !prev) {
    crds.push(structuredClone(h.o));
  }
  const service = readObject(phase.part, h, seen, ctx.fam, ctx.registry);
  raw.positions?.settle(service ? LATER_SERVICE_FIELDS : undefined);
  phase.keys.push(key);
  phase.before.push(prev ? `${prev.file}:${prev.line}` : '');
  phase.took.push(seen.get(key) === h.source ? h.source.line : -1);
  return h.check.reported;
}

/** A kept phase's effect on the keys seen, checked against what it met when read. */
function replay(phase: PhaseRead, file: string, seen: Map<string, SourceRef>): void {
  for (let i = 0; i < phase.keys.length; i++) {
    const key = phase.keys[i]!;
    const prev = seen.get(key);
    if ((prev ? `${prev.file}:${prev.line}` : '') !== phase.before[i]) throw new ReadEverything(`${key} is held by another object now`);
    const line = phase.took[i]!;
    if (line >= 0) seen.set(key, { file, line });
  }
}
