// `reload [INTERVAL] [JITTER]`: re-read the Corefile every INTERVAL (+/- JITTER/2) and reload the
// server when its content changed. Arguments as CoreDNS plugin/reload/setup.go: defaults 30s and
// 15s, INTERVAL at least 2s, JITTER 0 (none) or at least 1s, and a JITTER above half INTERVAL is
// clamped to half of it (`reload 10s` runs with 5s), not rejected.
import { createHash } from 'node:crypto';
import { readRegularFile } from '../../pkg/regular-file.js';
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import { CorefileError } from '../../chain/corefile.js';
import { parseGoDuration } from '../../pkg/duration.js';

const DEFAULT_INTERVAL_MS = 30000;
const DEFAULT_JITTER_MS = 15000;
const MIN_INTERVAL_MS = 2000;
const MIN_JITTER_MS = 1000;

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
    private readonly file: string | undefined,
    readonly intervalMs: number,
    readonly jitterMs: number,
    private readonly request: (reason: string) => void,
  ) {
    this.seen = file ? digest(file) : undefined;
  }

  start(): void {
    if (!this.file || this.timer) return;
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

export const reloadPlugin: PluginDefinition = {
  name: 'reload',
  setup(d, ctx) {
    if (d.args.length > 2) throw new CorefileError(d.file, d.line, 'reload takes at most two arguments: reload [INTERVAL] [JITTER]');
    const interval = d.args[0] === undefined ? DEFAULT_INTERVAL_MS : parseGoDuration(d.args[0]);
    if (interval === undefined) throw new CorefileError(d.file, d.line, `reload: interval "${d.args[0]}" is not a duration; write e.g. 30s or 1m`);
    if (interval < MIN_INTERVAL_MS) throw new CorefileError(d.file, d.line, `reload: interval "${d.args[0]}" must be at least 2s`);
    let jitter = d.args[1] === undefined ? DEFAULT_JITTER_MS : parseGoDuration(d.args[1]);
    if (jitter === undefined) throw new CorefileError(d.file, d.line, `reload: jitter "${d.args[1]}" is not a duration; write e.g. 0s, 1s or 15s`);
    if (jitter !== 0 && jitter < MIN_JITTER_MS) throw new CorefileError(d.file, d.line, `reload: jitter "${d.args[1]}" must be 0 or at least 1s`);
    if (jitter > interval / 2) jitter = interval / 2;
    if (!ctx.corefile) ctx.log.warn('reload has no Corefile to watch (the built-in default is in use)');
    return new ReloadPlugin(ctx.corefile, interval, jitter, ctx.requestReload);
  },
};
