// `errors [stdout] { stacktrace; consolidate DURATION REGEXP [LEVEL] [show_first] }`: logs the errors the plugins after it
// fail with, in CoreDNS's words (`RCODE NAME TYPE: ERROR`), and answers SERVFAIL itself.
import type { Logger } from 'pino';
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { emptyResponse, type DnsRequest, type DnsResponse, type Next, type Plugin } from '../../chain/plugin.js';
import { Rcode } from '../../dns/records.js';
import { typeStringFromName } from '../../metrics/packet.js';
import { goDurationString, parseGoDuration } from '../../pkg/duration.js';
import { compileRegex } from '../../chain/regex.js';

type Level = 'warn' | 'error' | 'info' | 'debug';

export interface ConsolidatePattern {
  periodMs: number;
  /** Matched anywhere in the error message (Go's MatchString); RE2 from a Corefile. */
  pattern: { test(message: string): boolean };
  /** The regular expression as written, for the summary line. */
  source: string;
  level: Level;
  /** Log the first error of each period in full, and summarise only the ones after it. */
  showFirst?: boolean;
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
    /** `stacktrace`: log each error with its stack, not only its message. */
    private readonly stacktrace = false,
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
    let level: Level = 'error';
    if (p && !this.stopped) {
      const count = ++p.count;
      if (count === 1) {
        p.timer = setTimeout(() => this.flush(p), p.periodMs);
        p.timer.unref();
      }
      // As CoreDNS: with show_first the first error of a period is logged, at the pattern's level.
      if (count > 1 || !p.showFirst) return emptyResponse(Rcode.SERVFAIL);
      level = p.level;
    }
    this.log[level](this.stacktrace ? { err } : {}, `${Rcode.SERVFAIL} ${req.qname} ${typeStringFromName(req.qtype)}: ${message}`);
    return emptyResponse(Rcode.SERVFAIL);
  }

  private flush(p: PatternState): void {
    const n = p.count;
    p.count = 0;
    p.timer = undefined;
    if (n > 1 || (n === 1 && !p.showFirst)) this.log[p.level](`${n} errors like '${p.source}' occurred in last ${goDurationString(p.periodMs)}`);
  }

  close(): void {
    this.stopped = true;
    for (const p of this.patterns) {
      if (p.timer) clearTimeout(p.timer);
      this.flush(p);
    }
  }
}

// CoreDNS's names (plugin/errors/setup.go); `warn` is not one of them.
const LEVELS: Record<string, Level> = { warning: 'warn', error: 'error', info: 'info', debug: 'debug' };

/** CoreDNS's maxRegexpLen. */
const MAX_REGEXP_LEN = 10000;

export const errorsPlugin: PluginDefinition = {
  name: 'errors',
  setup(d, ctx) {
    if (d.args.length > 1 || (d.args.length === 1 && d.args[0] !== 'stdout')) {
      throw new CorefileError(d.file, d.line, `errors: invalid log file: ${excerpt(d.args.join(' '))} (errors are logged to standard output; write \`errors\` or \`errors stdout\`)`);
    }
    const patterns: ConsolidatePattern[] = [];
    let stacktrace = false;
    forEachOption(d.block, (o) => {
      const fail = (reason: string): never => {
        throw new CorefileError(o.file, o.line, reason);
      };
      if (o.name === 'stacktrace') {
        if (o.args.length > 0) fail('errors stacktrace takes no arguments');
        stacktrace = true;
        return;
      }
      if (o.name !== 'consolidate') fail(`unknown errors option "${excerpt(o.name)}"; valid options: stacktrace, consolidate`);
      if (o.args.length < 2 || o.args.length > 4) fail('errors consolidate takes DURATION REGEXP [LEVEL] [show_first], e.g. `consolidate 5m ".* i/o timeout$" warning`');
      const periodMs = parseGoDuration(o.args[0]!);
      if (periodMs === undefined || periodMs <= 0) fail(`errors consolidate: "${excerpt(o.args[0]!)}" is not a duration; write e.g. 30s or 5m`);
      const source = o.args[1]!;
      if (source.length > MAX_REGEXP_LEN) fail(`errors consolidate: regex pattern too long: ${source.length} > ${MAX_REGEXP_LEN}`);
      let pattern: ConsolidatePattern['pattern'];
      try {
        // RE2 (Go's syntax and linear time, as CoreDNS): error messages carry client-chosen names.
        pattern = compileRegex(source);
      } catch (err) {
        fail(`errors consolidate: bad regular expression: ${(err as Error).message}`);
      }
      // Optional: a log level, then show_first (CoreDNS's parseOptionalParams).
      let level: Level | undefined;
      let showFirst = false;
      for (const arg of o.args.slice(2)) {
        const l = LEVELS[arg];
        if (l) {
          if (level) fail('errors consolidate: multiple log levels specified in consolidate');
          if (showFirst) fail('errors consolidate: log level must come before show_first in consolidate');
          level = l;
        } else if (arg === 'show_first') {
          showFirst = true;
        } else {
          fail(`errors consolidate: unknown option in consolidate: ${excerpt(arg)} (log levels: warning, error, info, debug; then show_first)`);
        }
      }
      patterns.push({ periodMs: periodMs!, pattern: pattern!, source, level: level ?? 'error', showFirst });
    });
    return new ErrorsPlugin(patterns, ctx.log.child({ plugin: 'errors' }), stacktrace);
  },
};
