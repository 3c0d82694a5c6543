// Watches manifest paths. File system events (fs.watch on every directory of the tree) say that
// something moved, within milliseconds; polling at the configured interval stays underneath as
// the safety net, because events can be lost (a full inotify queue, a network file system, a
// directory created and filled before its watch was added), and is all there is when watching
// fails or the tree has more directories than the watch limit.
//
// A change is applied only once the files are the same (list, and per file: size, modification
// and change times, inode) at two looks in a row with nothing in between, so a file caught
// half-written is not served; writing a temporary file and renaming it over the old one is the
// way to publish a change atomically. Polls look once per interval. Events look after a quiet
// spell (no event for `settleMs`), then once more `settleMs` later: a writer that keeps writing
// more often than that is never applied mid-write, and one seen moving between the two looks
// doubles the quiet spell asked of it (up to the poll interval), since it writes slowly.
//
// Only stat is used: reading and hashing a 40 MB List on every poll of a pending change held the
// serving thread for about 140 ms, and a content hash adds nothing here (a writer changes the
// times with every write).
import { createHash } from 'node:crypto';
import { type FSWatcher, lstatSync, readdirSync, realpathSync, type Stats, statSync, watch as fsWatch } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** dev:ino, so that a directory reached through several paths (symlinks) is walked and watched once. */
const identity = (st: { dev: number; ino: number }): string => `${st.dev}:${st.ino}`;

/**
 * The manifest files now, as one key: the files collectManifestFiles (yaml-docs.ts) would read,
 * each with its size, modification and change times and inode, and the paths it could not read.
 * Walked here in one pass rather than listed by collectManifestFiles and stat'ed again, which
 * took twice the CPU (71 ms against 37 on 5000 files in 100 directories, bench/watch-latency.js):
 * the watcher walks the tree at every poll and twice for every change it applies. It keeps to the
 * same rules: hidden entries skipped inside directories, symlinks followed, a directory walked
 * once, a path named always read; a file reached through two links counts twice here, once there.
 */
function snapshotKey(paths: readonly string[]): string {
  const h = createHash('sha256');
  const file = (p: string, st: Stats): void => {
    h.update(`${p}\0${st.size}\0${st.mtimeMs}\0${st.ctimeMs}\0${st.ino}\n`);
  };
  const seen = new Set<string>();
  const walk = (dir: string, st: Stats): void => {
    const id = identity(st);
    if (seen.has(id)) return;
    seen.add(id);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      h.update(`${dir}\0unreadable ${(e as NodeJS.ErrnoException).code}\n`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of entries) {
      const name = ent.name;
      if (name.startsWith('.') || (ent.isFile() && !MANIFEST_EXT.test(name))) continue;
      const p = join(dir, name);
      let est;
      try {
        est = statSync(p);
      } catch {
        continue; // dangling link, or gone since the listing: the next look sees it gone
      }
      if (est.isDirectory()) walk(p, est);
      else if (MANIFEST_EXT.test(name)) {
        if (est.isFile()) file(p, est);
        else h.update(`${p}\0special\n`);
      }
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      h.update(`${p}\0missing ${(e as NodeJS.ErrnoException).code}\n`);
      continue;
    }
    if (st.isDirectory()) walk(p, st);
    else file(p, st);
  }
  return h.digest('hex');
}

/** Fingerprint of the manifest files: changes when any of them does. */
export function fingerprint(paths: readonly string[]): string {
  return snapshotKey(paths);
}

/** As collectManifestFiles reads them (yaml-docs.ts): it skips other files inside directories. */
const MANIFEST_EXT = /\.(ya?ml|json)$/i;

/** Quiet time after the last event before a look, and between the two looks of a change. */
export const DEFAULT_SETTLE_MS = 50;
/**
 * Most directories watched at once. Each costs one inotify watch (about 1 KiB of kernel memory,
 * counted against fs.inotify.max_user_watches, which the whole user shares); a tree that needs
 * more is polled only, at the watch interval.
 */
export const DEFAULT_MAX_WATCHES = 1000;

type WatchFn = (path: string, options: { persistent: boolean }, listener: (event: string, name: string | Buffer | null) => void) => FSWatcher;

export interface WatchOptions {
  /** Quiet time after the last event before the files are looked at (and between the two looks). */
  settleMs?: number;
  /** Most directories watched; beyond it the watcher polls only. 0: poll only. */
  maxWatches?: number;
  /** fs.watch; replaceable so that a test can make it fail as a full inotify table does. */
  watch?: WatchFn;
  /** Told when start() sets the mode and whenever it changes after, with the reason when polling: for the log. */
  onMode?: (mode: WatchMode, reason: string | undefined) => void;
}

/** How changes are noticed: events (and the poll beneath), the poll alone, or not at all. */
export type WatchMode = 'events' | 'polling' | 'off';

/** A directory watched, and which of its entries matter. */
interface Target {
  path: string;
  /** A directory of a manifest tree: every manifest-named entry in it counts. */
  tree: boolean;
  /** Entries that count whatever their name: files named as paths, symlinks' targets. */
  names: Set<string>;
}

interface Watched {
  /** Updated in place when a walk finds the directory again: the listener reads it. */
  target: Target;
  handle: FSWatcher;
}

/**
 * The directories to watch for `paths`, as collectManifestFiles walks them: each directory of a
 * tree (through symlinks, skipping hidden entries), the directory of each file named as a path,
 * and the directory a symlinked file resolves to (an in-place write of the target makes no event
 * where the link is). A path that does not exist is watched for in its parent.
 */
function watchTargets(paths: readonly string[]): Map<string, Target> {
  const out = new Map<string, Target>();
  const add = (dir: string, tree: boolean, name?: string): void => {
    let st;
    try {
      st = statSync(dir);
    } catch {
      return; // gone meanwhile: the event that removed it asks for another walk
    }
    if (!st.isDirectory()) return;
    const id = identity(st);
    let t = out.get(id);
    if (!t) out.set(id, (t = { path: dir, tree: false, names: new Set() }));
    if (tree) t.tree = true;
    if (name !== undefined) t.names.add(name);
  };
  const addTarget = (file: string): void => {
    let real;
    try {
      real = realpathSync(file);
    } catch {
      return; // dangling: the link's own directory is watched
    }
    add(dirname(real), false, basename(real));
  };
  const seen = new Set<string>();
  const walk = (dir: string): void => {
    let st;
    try {
      st = statSync(dir);
    } catch {
      return;
    }
    const id = identity(st);
    if (seen.has(id)) return;
    seen.add(id);
    add(dir, true);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const ent of entries) {
      if (ent.name.startsWith('.')) continue;
      const p = join(dir, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isSymbolicLink()) {
        let target;
        try {
          target = statSync(p);
        } catch {
          continue; // dangling: the directory it is in is watched, so its repair is seen
        }
        if (target.isDirectory()) walk(p);
        else if (MANIFEST_EXT.test(ent.name)) addTarget(p);
      }
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      add(dirname(p), false, basename(p));
      continue;
    }
    if (st.isDirectory()) {
      // A link to a directory may be pointed elsewhere (a mounted ConfigMap's ..data).
      if (lstatSync(p).isSymbolicLink()) add(dirname(p), false, basename(p));
      walk(p);
    } else {
      add(dirname(p), false, basename(p));
      if (lstatSync(p).isSymbolicLink()) addTarget(p);
    }
  }
  return out;
}

export class ManifestWatcher {
  private timer: NodeJS.Timeout | undefined;
  /** The state the running data was loaded from. */
  private appliedKey: string;
  /** A changed state seen at the last poll, applied if the next poll sees it again. */
  private pending: string | undefined;

  private readonly settleMs: number;
  private readonly maxWatches: number;
  private readonly watchFn: WatchFn;
  private readonly onMode: WatchOptions['onMode'];
  private started = false;
  private readonly watched = new Map<string, Watched>();
  private currentMode: WatchMode = 'off';
  private reason: string | undefined;
  /** Counts the events that mattered: a look is trusted only when none came since the one before. */
  private events = 0;
  /** The state seen at the last look after events, with the event count then. */
  private settling: { key: string; events: number } | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  /** The quiet spell asked now: doubles while a writer is seen moving, back to settleMs after. */
  private quietMs: number;
  /** An event hinted at a directory or link that came or went: walk the tree again before looking. */
  private rewalk = false;

  constructor(
    private readonly paths: readonly string[],
    private readonly intervalMs: number,
    private readonly onChange: () => void,
    options: WatchOptions = {},
  ) {
    this.appliedKey = snapshotKey(paths);
    this.settleMs = Math.max(1, options.settleMs ?? DEFAULT_SETTLE_MS);
    this.maxWatches = Math.max(0, options.maxWatches ?? DEFAULT_MAX_WATCHES);
    this.watchFn = options.watch ?? (fsWatch as WatchFn);
    this.onMode = options.onMode;
    this.quietMs = this.settleMs;
  }

  /** How changes are noticed now. */
  get mode(): WatchMode {
    return this.currentMode;
  }

  /** Why the watcher polls only, when it does. */
  get pollingReason(): string | undefined {
    return this.currentMode === 'polling' ? this.reason : undefined;
  }

  /** Directories watched with fs.watch now. */
  get watchCount(): number {
    return this.watched.size;
  }

  start(): void {
    if (this.intervalMs <= 0 || this.started) return;
    this.started = true;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
    this.syncWatches();
    // The files may have changed since the constructor took their state (a long first load):
    // one look now finds that without waiting for the first poll.
    if (this.currentMode === 'events') this.arm();
  }

  /** One poll: calls onChange when the files changed and have stayed the same since the last poll. */
  check(): void {
    const k = snapshotKey(this.paths);
    if (k === this.appliedKey) {
      this.pending = undefined; // changed and changed back
      return;
    }
    // Events missed this change, or there are none: the tree may have new directories to watch.
    if (this.started) this.syncWatches();
    if (k !== this.pending) {
      this.pending = k; // still moving, or moved just now: wait for a quiet poll
      return;
    }
    this.apply(k);
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    this.unwatchAll();
    this.currentMode = 'off';
    this.settling = undefined;
  }

  private apply(k: string): void {
    this.pending = undefined;
    this.settling = undefined;
    this.quietMs = this.settleMs;
    this.appliedKey = k;
    this.onChange();
  }

  /** (Re)starts the quiet spell: the look runs once no event came for quietMs. */
  private arm(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.look(), this.quietMs);
    this.settleTimer.unref();
  }

  /** A look after a quiet spell: applies a state seen at the look before with no event since. */
  private look(): void {
    this.settleTimer = undefined;
    if (!this.started) return;
    if (this.rewalk) {
      this.rewalk = false;
      this.syncWatches(); // before the stat walk: a write after this is an event, one before is in the key
    }
    const k = snapshotKey(this.paths);
    if (k === this.appliedKey) {
      this.settling = undefined;
      this.quietMs = this.settleMs;
      return;
    }
    const s = this.settling;
    if (s && s.key === k && s.events === this.events) {
      this.apply(k);
      return;
    }
    // Seen moving between two looks: a slow writer, so ask it for a longer quiet spell.
    if (s && s.key !== k) this.quietMs = Math.min(this.quietMs * 2, Math.max(this.settleMs, this.intervalMs));
    this.settling = { key: k, events: this.events };
    this.arm();
  }

  private onEvent(id: string, w: Watched, event: string, name: string | Buffer | null): void {
    if (!this.started) return;
    const t = w.target;
    const n = name === null ? undefined : String(name);
    if (event === 'rename' && n === basename(t.path)) {
      // The directory itself removed or moved (or an entry of the same name: watched again then).
      // Its watch is dropped now: a directory made in its place may get the same inode, which the
      // next walk would take for the one watched.
      this.drop(id, w);
      this.rewalk = true;
    } else if (n !== undefined && !this.matters(t, n)) return;
    this.events++;
    this.arm();
  }

  private drop(id: string, w: Watched): void {
    w.handle.close();
    if (this.watched.get(id) === w) this.watched.delete(id);
  }

  /**
   * Whether an event about entry `name` of a watched directory can change the manifests: a
   * regular file counts when collectManifestFiles reads it (so a log or an editor's swap file
   * written beside the manifests does not hold the quiet spell off); a directory or link counts,
   * and has the tree walked again; an entry gone counts when it was a manifest or a directory
   * watched (a temporary file renamed into place is gone by the time its event is read).
   */
  private matters(t: Target, name: string): boolean {
    const p = join(t.path, name);
    const manifest = t.names.has(name) || (t.tree && !name.startsWith('.') && MANIFEST_EXT.test(name));
    let st;
    try {
      st = lstatSync(p);
    } catch {
      if (!manifest && !this.watchedPaths().has(p)) return false;
      this.rewalk = true;
      return true;
    }
    if (st.isFile()) return manifest;
    this.rewalk = true;
    return true;
  }

  /** The paths of the directories watched now. */
  private watchedPaths(): Set<string> {
    const out = new Set<string>();
    for (const w of this.watched.values()) out.add(w.target.path);
    return out;
  }

  /** Watches the directories the paths need now, within the limit; falls back to polling when it cannot. */
  private syncWatches(): void {
    if (!this.started) return;
    const failed = this.watchAll();
    if (failed !== undefined) this.unwatchAll();
    const mode = failed === undefined ? 'events' : 'polling';
    const told = mode !== this.currentMode;
    this.currentMode = mode;
    this.reason = failed;
    if (told) this.onMode?.(mode, failed);
  }

  /** Adds and drops watches to match the tree; returns why watching cannot go on, if it cannot. */
  private watchAll(): string | undefined {
    if (this.maxWatches === 0) return 'the watch limit is 0: polling only';
    const want = watchTargets(this.paths);
    if (want.size > this.maxWatches) return `${want.size} directories to watch, more than the limit of ${this.maxWatches}: polling only`;
    for (const [id, w] of this.watched) {
      const t = want.get(id);
      if (!t) {
        w.handle.close();
        this.watched.delete(id);
      } else {
        Object.assign(w.target, t);
      }
    }
    for (const [id, t] of want) {
      if (this.watched.has(id)) continue;
      let handle;
      try {
        handle = this.watchFn(t.path, { persistent: false }, (event, name) => this.onEvent(id, w, event, name));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') {
          this.rewalk = true; // went away since the walk; the event of its removal is on its way
          continue;
        }
        return `cannot watch ${t.path}: ${(e as Error).message}: polling only`;
      }
      const w: Watched = { target: t, handle };
      // An error of a live watch (its directory gone on some systems): drop it and walk again.
      handle.on('error', () => {
        this.drop(id, w);
        this.rewalk = true;
        if (this.started) this.arm();
      });
      this.watched.set(id, w);
    }
    return undefined;
  }

  private unwatchAll(): void {
    for (const w of this.watched.values()) w.handle.close();
    this.watched.clear();
  }
}
