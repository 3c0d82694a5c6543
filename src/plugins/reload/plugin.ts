// The reload plugin's poll (CoreDNS plugin/reload/reload.go): re-read the Corefile every
// INTERVAL (+/- JITTER/2) and ask the server to reload when its content changed.
import { createHash } from 'node:crypto';
import { readRegularFile } from '../../pkg/regular-file.js';
import type { Plugin } from '../../chain/plugin.js';
import type { AppMetrics } from '../../metrics/index.js';
import type { ReloadConfig } from './config.js';

function digest(file: string): string | undefined {
  try {
    return createHash('sha512').update(readRegularFile(file)).digest('hex');
  } catch {
    return undefined;
  }
}

export class ReloadPlugin implements Plugin {
  readonly name = 'reload';
  private timer: NodeJS.Timeout | undefined;
  /**
   * The content last acted on: the one this configuration was built from, then each changed
   * content a reload was asked for. A content that failed to load is not tried again until the
   * file changes once more (as CoreDNS, which keeps the failed sum), but polling goes on.
   */
  private seen: string | undefined;

  constructor(
    readonly cfg: ReloadConfig,
    /** The Corefile watched; without one (the built-in default) the plugin does nothing. */
    private readonly file: string | undefined,
    private readonly request: (reason: string) => void,
    private readonly metrics: AppMetrics,
  ) {
    this.seen = file ? digest(file) : undefined;
  }

  get intervalMs(): number {
    return this.cfg.intervalMs;
  }

  get jitterMs(): number {
    return this.cfg.jitterMs;
  }

  start(): void {
    if (!this.file || this.timer) return;
    // As CoreDNS's reload setup at startup: the Corefile serving, by its SHA-512.
    if (this.seen !== undefined) this.metrics.setReloadVersion(this.seen);
    const schedule = (): void => {
      // CoreDNS draws the jitter in [-JITTER/2, +JITTER/2).
      const wait = this.intervalMs + (this.jitterMs > 0 ? Math.round(Math.random() * this.jitterMs - this.jitterMs / 2) : 0);
      this.timer = setTimeout(() => {
        const now = digest(this.file!);
        if (now !== undefined && now !== this.seen) {
          this.seen = now;
          this.request('Corefile changed');
        }
        // A successful reload closes this plugin (close clears the timer); a failed one leaves it
        // running, so it must keep watching for the next edit.
        if (this.timer) schedule();
      }, wait);
      this.timer.unref();
    };
    schedule();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
