// Watches manifest paths by polling: portable, cheap for repository-sized trees, and immune to
// editors that replace files instead of writing them. A change is applied only once the files
// are the same (list, and per file: size, modification and change times, inode) at two polls in
// a row, so a file caught half-written is not served; writing a temporary file and renaming it
// over the old one is the way to publish a change atomically. Only stat is used: reading and
// hashing a 40 MB List on every poll of a pending change held the serving thread for about
// 140 ms, and a content hash adds nothing here (a writer changes the times with every write).
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { collectManifestFiles } from './yaml-docs.js';
import type { Finding } from './model.js';

/** The manifest files now, as one key: list, and each file's size, times and inode. */
function snapshotKey(paths: readonly string[]): string {
  const found: Finding[] = [];
  const h = createHash('sha256');
  for (const file of collectManifestFiles(paths, found)) {
    try {
      const st = statSync(file);
      h.update(`${file}\0${st.size}\0${st.mtimeMs}\0${st.ctimeMs}\0${st.ino}\n`);
    } catch {
      h.update(`${file}\0gone\n`); // gone between listing and stat: the next poll sees it gone
    }
  }
  for (const f of found) h.update(`${f.file}\0${f.message}\n`);
  return h.digest('hex');
}

/** Fingerprint of the manifest files: changes when any of them does. */
export function fingerprint(paths: readonly string[]): string {
  return snapshotKey(paths);
}

export class ManifestWatcher {
  private timer: NodeJS.Timeout | undefined;
  /** The state the running data was loaded from. */
  private appliedKey: string;
  /** A changed state seen at the last poll, applied if the next poll sees it again. */
  private pending: string | undefined;

  constructor(
    private readonly paths: readonly string[],
    private readonly intervalMs: number,
    private readonly onChange: () => void,
  ) {
    this.appliedKey = snapshotKey(paths);
  }

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  /** One poll: calls onChange when the files changed and have stayed the same since the last poll. */
  check(): void {
    const k = snapshotKey(this.paths);
    if (k === this.appliedKey) {
      this.pending = undefined; // changed and changed back
      return;
    }
    if (k !== this.pending) {
      this.pending = k; // still moving, or moved just now: wait for a quiet poll
      return;
    }
    this.pending = undefined;
    this.appliedKey = k;
    this.onChange();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
