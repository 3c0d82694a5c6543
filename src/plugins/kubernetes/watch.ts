// Watches manifest paths by polling: portable, cheap for repository-sized trees, and immune to
// editors that replace files instead of writing them. A change is applied only once the files
// are the same (list, sizes, mtimes and contents) at two polls in a row, so a file caught
// half-written is not served; writing a temporary file and renaming it over the old one is the
// way to publish a change atomically.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { collectManifestFiles, defaultManifestLimits, readManifestFile } from '../../cluster/yaml-docs.js';
import type { Finding } from '../../cluster/model.js';

interface FileState {
  readonly size: number;
  readonly mtimeMs: number;
  /** Content hash; computed only for files whose size or mtime moved since the applied state. */
  readonly hash?: string;
}

type Snapshot = Map<string, FileState>;

/**
 * The manifest files now. Contents are hashed only for files that differ (by size or mtime) from
 * `base`, so an idle tree costs a stat per file per poll.
 */
function snapshot(paths: readonly string[], base: Snapshot | undefined, maxBytes: number): { snap: Snapshot; errors: string } {
  const found: Finding[] = [];
  const snap: Snapshot = new Map();
  for (const file of collectManifestFiles(paths, found)) {
    let st;
    try {
      st = statSync(file);
    } catch {
      continue; // gone between listing and stat: the next poll sees it gone
    }
    const prev = base?.get(file);
    let hash: string | undefined;
    if (!prev || prev.size !== st.size || prev.mtimeMs !== st.mtimeMs) {
      const ignored: Finding[] = [];
      const text = st.size <= maxBytes ? readManifestFile(file, ignored, maxBytes) : undefined;
      hash = text === undefined ? 'unreadable' : createHash('sha256').update(text).digest('hex');
    }
    snap.set(file, { size: st.size, mtimeMs: st.mtimeMs, ...(hash !== undefined ? { hash } : {}) });
  }
  return { snap, errors: found.map((f) => `${f.file}\0${f.message}`).join('\n') };
}

function key(s: { snap: Snapshot; errors: string }): string {
  const h = createHash('sha256');
  for (const [file, st] of s.snap) h.update(`${file}\0${st.size}\0${st.mtimeMs}\0${st.hash ?? ''}\n`);
  h.update(s.errors);
  return h.digest('hex');
}

/** Fingerprint of the manifest files (list, sizes, mtimes): changes when any of them does. */
export function fingerprint(paths: readonly string[]): string {
  return key(snapshot(paths, new Map(), -1));
}

export class ManifestWatcher {
  private timer: NodeJS.Timeout | undefined;
  /** The state the running data was loaded from. */
  private applied: Snapshot;
  private appliedKey: string;
  /** A changed state seen at the last poll, applied if the next poll sees it again. */
  private pending: string | undefined;

  constructor(
    private readonly paths: readonly string[],
    private readonly intervalMs: number,
    private readonly onChange: () => void,
    private readonly maxFileBytes: number = defaultManifestLimits.maxFileBytes,
  ) {
    const s = snapshot(paths, undefined, -1); // stat only: the hashes are dropped anyway
    this.applied = s.snap;
    this.appliedKey = key({ snap: this.stripHashes(s.snap), errors: s.errors });
  }

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  /** Files compared to the applied state by stat only (their hashes are not recomputed when unchanged). */
  private stripHashes(s: Snapshot): Snapshot {
    const out: Snapshot = new Map();
    for (const [f, st] of s) out.set(f, { size: st.size, mtimeMs: st.mtimeMs });
    return out;
  }

  /** One poll: calls onChange when the files changed and have stayed the same since the last poll. */
  check(): void {
    const now = snapshot(this.paths, this.applied, this.maxFileBytes);
    const k = key(now);
    if (k === this.appliedKey) {
      this.pending = undefined; // changed and changed back
      return;
    }
    if (k !== this.pending) {
      this.pending = k; // still moving, or moved just now: wait for a quiet poll
      return;
    }
    this.pending = undefined;
    this.applied = this.stripHashes(now.snap);
    this.appliedKey = key({ snap: this.applied, errors: now.errors });
    this.onChange();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
