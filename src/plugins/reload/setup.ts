// `reload [INTERVAL] [JITTER]`: re-read the Corefile every INTERVAL (+/- JITTER) and reload the
// server when its content changed (CoreDNS plugin/reload: defaults 30s and 15s, minimum 2s/1s).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import { CorefileError } from '../../chain/corefile.js';
import { parseGoDuration } from '../../chain/duration.js';

function digest(file: string): string | undefined {
  try {
    return createHash('sha512').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

class ReloadPlugin implements Plugin {
  readonly name = 'reload';
  private timer: NodeJS.Timeout | undefined;
  private readonly initial: string | undefined;

  constructor(
    private readonly file: string | undefined,
    private readonly intervalMs: number,
    private readonly jitterMs: number,
    private readonly request: (reason: string) => void,
  ) {
    this.initial = file ? digest(file) : undefined;
  }

  start(): void {
    if (!this.file) return;
    const schedule = (): void => {
      const wait = this.intervalMs + Math.round((Math.random() * 2 - 1) * this.jitterMs);
      this.timer = setTimeout(() => {
        const now = digest(this.file!);
        if (now !== undefined && now !== this.initial) this.request('Corefile changed');
        else schedule();
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
    const interval = d.args[0] === undefined ? 30000 : parseGoDuration(d.args[0]);
    const jitter = d.args[1] === undefined ? 15000 : parseGoDuration(d.args[1]);
    if (interval === undefined || interval < 2000) throw new CorefileError(d.file, d.line, `reload: interval "${d.args[0]}" must be a duration of at least 2s`);
    if (jitter === undefined || jitter < 1000) throw new CorefileError(d.file, d.line, `reload: jitter "${d.args[1]}" must be a duration of at least 1s`);
    if (jitter > interval / 2) throw new CorefileError(d.file, d.line, 'reload: jitter must be at most half the interval');
    if (!ctx.corefile) ctx.log.warn('reload has no Corefile to watch (the built-in default is in use)');
    return new ReloadPlugin(ctx.corefile, interval, jitter, ctx.requestReload);
  },
};
