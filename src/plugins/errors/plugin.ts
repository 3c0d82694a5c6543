// The errors plugin's chain step (CoreDNS plugin/errors/errors.go): logs the errors the plugins
// after it fail with, in CoreDNS's words (`RCODE NAME TYPE: ERROR`), counts those a consolidate
// pattern matches into one line per period, and answers SERVFAIL itself.
import type { Logger } from 'pino';
import { emptyResponse, type DnsRequest, type DnsResponse, type Next, type Plugin } from '../../chain/plugin.js';
import { Rcode } from '../../dns/records.js';
import { typeStringFromName } from '../../metrics/packet.js';
import { goDurationString } from '../../pkg/duration.js';
import type { ConsolidatePattern, Level } from './config.js';

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
