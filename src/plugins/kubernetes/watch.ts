// Watches manifest paths by polling a fingerprint (file list, sizes, mtimes): portable, cheap for
// repository-sized trees, and immune to editors that replace files instead of writing them.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { collectManifestFiles } from '../../cluster/yaml-docs.js';
import type { Finding } from '../../cluster/model.js';

export function fingerprint(paths: readonly string[]): string {
  const h = createHash('sha256');
  const ignored: Finding[] = [];
  for (const file of collectManifestFiles(paths, ignored)) {
    try {
      const st = statSync(file);
      h.update(`${file}\0${st.size}\0${st.mtimeMs}\n`);
    } catch {
      h.update(`${file}\0gone\n`);
    }
  }
  for (const f of ignored) h.update(`${f.file}\0${f.message}\n`);
  return h.digest('hex');
}

export class ManifestWatcher {
  private timer: NodeJS.Timeout | undefined;
  private last: string;

  constructor(
    private readonly paths: readonly string[],
    private readonly intervalMs: number,
    private readonly onChange: () => void,
  ) {
    this.last = fingerprint(paths);
  }

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref();
  }

  /** Compares the fingerprint now; calls onChange when it moved. */
  check(): void {
    const now = fingerprint(this.paths);
    if (now === this.last) return;
    this.last = now;
    this.onChange();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
