// `errors [stdout] { consolidate DURATION REGEXP [LEVEL] }`: logs the errors the plugins after it
// fail with, in CoreDNS's words (`RCODE NAME TYPE: ERROR`), and answers SERVFAIL itself.
import type { Logger } from 'pino';
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError } from '../../chain/corefile.js';
import { emptyResponse, type DnsRequest, type DnsResponse, type Next, type Plugin } from '../../chain/plugin.js';
import { Rcode } from '../../dns/records.js';
import { goDurationString, parseGoDuration, typeStringFromName } from '../../metrics/packet.js';
import { compileRegex } from '../../chain/regex.js';

type Level = 'warn' | 'error' | 'info' | 'debug';

export interface ConsolidatePattern {
  periodMs: number;
  /** Matched anywhere in the error message (Go's MatchString); RE2 from a Corefile. */
  pattern: { test(message: string): boolean };
  /** The regular expression as written, for the summary line. */
  source: string;
  level: Level;
}

interface PatternState extends ConsolidatePattern {
  count: number;
  timer: NodeJS.Timeout | undefined;
}

export class ErrorsPlugin implements Plugin {
  readonly name = 'errors';
  private readonly patterns: PatternState[];
  private stopped = false;

  constructor(
    patterns: readonly ConsolidatePattern[],
    private readonly log: Logger,
  ) {
    this.patterns = patterns.map((p) => ({ ...p, count: 0, timer: undefined }));
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    let res: DnsResponse | Promise<DnsResponse>;
    try {
      res = next(req);
    } catch (err) {
      return this.failed(req, err);
    }
    if (res instanceof Promise) return res.catch((err: unknown) => this.failed(req, err));
    return res;
  }

  /** Logs the error (or counts it for a consolidate pattern) and answers SERVFAIL. */
  private failed(req: DnsRequest, err: unknown): DnsResponse {
    const message = err instanceof Error ? err.message : String(err);
    const p = this.patterns.find((x) => x.pattern.test(message));
    if (p && !this.stopped) {
      if (++p.count === 1) {
        p.timer = setTimeout(() => this.flush(p), p.periodMs);
        p.timer.unref();
      }
    } else {
      this.log.error({ err }, `${Rcode.SERVFAIL} ${req.qname} ${typeStringFromName(req.qtype)}: ${message}`);
    }
    return emptyResponse(Rcode.SERVFAIL);
  }

  private flush(p: PatternState): void {
    const n = p.count;
    p.count = 0;
    p.timer = undefined;
    if (n > 0) this.log[p.level](`${n} errors like '${p.source}' occurred in last ${goDurationString(p.periodMs)}`);
  }

  close(): void {
    this.stopped = true;
    for (const p of this.patterns) {
      if (p.timer) clearTimeout(p.timer);
      this.flush(p);
    }
  }
}

const LEVELS: Record<string, Level> = { warning: 'warn', warn: 'warn', error: 'error', info: 'info', debug: 'debug' };

export const errorsPlugin: PluginDefinition = {
  name: 'errors',
  setup(d, ctx) {
    if (d.args.length > 1 || (d.args.length === 1 && d.args[0] !== 'stdout')) {
      throw new CorefileError(d.file, d.line, `errors: invalid log file: ${d.args.join(' ')} (errors are logged to standard output; write \`errors\` or \`errors stdout\`)`);
    }
    const patterns: ConsolidatePattern[] = [];
    for (const o of d.block ?? []) {
      if (o.name !== 'consolidate') throw new CorefileError(o.file, o.line, `unknown errors option "${o.name}"; the only option is consolidate`);
      if (o.args.length < 2 || o.args.length > 3) throw new CorefileError(o.file, o.line, 'errors consolidate takes DURATION REGEXP [LEVEL], e.g. `consolidate 5m ".* i/o timeout$" warning`');
      const periodMs = parseGoDuration(o.args[0]!);
      if (periodMs === undefined || periodMs <= 0) throw new CorefileError(o.file, o.line, `errors consolidate: "${o.args[0]}" is not a duration; write e.g. 30s or 5m`);
      let pattern: ConsolidatePattern['pattern'];
      try {
        // RE2 (Go's syntax and linear time, as CoreDNS): error messages carry client-chosen names.
        pattern = compileRegex(o.args[1]!);
      } catch (err) {
        throw new CorefileError(o.file, o.line, `errors consolidate: bad regular expression: ${(err as Error).message}`);
      }
      const levelArg = o.args[2];
      const level = levelArg === undefined ? 'error' : LEVELS[levelArg];
      if (!level) throw new CorefileError(o.file, o.line, `errors consolidate: unknown log level argument in consolidate: ${levelArg} (use warning, error, info or debug)`);
      patterns.push({ periodMs, pattern, source: o.args[1]!, level });
    }
    return new ErrorsPlugin(patterns, ctx.log.child({ plugin: 'errors' }));
  },
};
