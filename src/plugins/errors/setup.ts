// `errors [stdout] { stacktrace; consolidate DURATION REGEXP [LEVEL] [show_first] }` -> an
// ErrorsConfig, as CoreDNS's plugin/errors/setup.go (errorsParse, parseConsolidate,
// parseOptionalParams) reads it.
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt, type Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { compileRegex } from '../../chain/regex.js';
import { ErrorsPlugin } from './plugin.js';

export type Level = 'warn' | 'error' | 'info' | 'debug';

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

interface ErrorsConfig {
  /** In Corefile order: an error counts for the first pattern that matches. */
  patterns: ConsolidatePattern[];
  /** `stacktrace`: log each error with its stack, not only its message. */
  stacktrace: boolean;
}

// CoreDNS's names (plugin/errors/setup.go); `warn` is not one of them.
const LEVELS: Record<string, Level> = { warning: 'warn', error: 'error', info: 'info', debug: 'debug' };

/** CoreDNS's maxRegexpLen. */
const MAX_REGEXP_LEN = 10000;

function parseErrors(d: Directive): ErrorsConfig {
  if (d.args.length > 1 || (d.args.length === 1 && d.args[0] !== 'stdout')) {
    const hint = '(errors are logged to standard output; write `errors` or `errors stdout`)';
    throw new CorefileError(d.file, d.line, `errors: invalid log file: ${excerpt(d.args.join(' '))} ${hint}`);
  }
  const cfg: ErrorsConfig = { patterns: [], stacktrace: false };
  forEachOption(d.block, (o) => {
    if (o.name === 'stacktrace') {
      if (o.args.length > 0) throw new CorefileError(o.file, o.line, 'errors stacktrace takes no arguments');
      cfg.stacktrace = true;
      return;
    }
    if (o.name !== 'consolidate') throw new CorefileError(o.file, o.line, `unknown errors option "${excerpt(o.name)}"; valid options: stacktrace, consolidate`);
    cfg.patterns.push(parseConsolidate(o));
  });
  return cfg;
}

/** One `consolidate DURATION REGEXP [LEVEL] [show_first]` line. */
function parseConsolidate(o: Directive): ConsolidatePattern {
  const fail = (reason: string): never => {
    throw new CorefileError(o.file, o.line, reason);
  };
  if (o.args.length < 2 || o.args.length > 4) {
    fail('errors consolidate takes DURATION REGEXP [LEVEL] [show_first], e.g. `consolidate 5m ".* i/o timeout$" warning`');
  }
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
  const { level, showFirst } = parseOptionalParams(o.args.slice(2), fail);
  return { periodMs: periodMs!, pattern: pattern!, source, level: level ?? 'error', showFirst };
}

/** CoreDNS's parseOptionalParams: a log level, then show_first, each at most once. */
function parseOptionalParams(args: readonly string[], fail: (reason: string) => never): { level?: Level; showFirst: boolean } {
  let level: Level | undefined;
  let showFirst = false;
  for (const arg of args) {
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
  return { level, showFirst };
}

export const errorsPlugin: PluginDefinition = {
  name: 'errors',
  setup(d, ctx) {
    const cfg = parseErrors(d);
    return new ErrorsPlugin(cfg.patterns, ctx.log.child({ plugin: 'errors' }), cfg.stacktrace);
  },
};
