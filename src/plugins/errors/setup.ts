// `errors [stdout] { stacktrace; consolidate DURATION REGEXP [LEVEL] [show_first] }` -> an
// ErrorsConfig, as CoreDNS's plugin/errors/setup.go (errorsParse, parseConsolidate,
// parseOptionalParams) reads it.
import type { PluginDefinition } from '../../chain/registry.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { compileRegex } from '../../chain/regex.js';
import { ErrorsPlugin } from './plugin.js';
import type { ConsolidatePattern, ErrorsConfig, Level } from './config.js';

// CoreDNS's names (plugin/errors/setup.go); `warn` is not one of them.
const LEVELS: Record<string, Level> = { warning: 'warn', error: 'error', info: 'info', debug: 'debug' };

/** CoreDNS's maxRegexpLen. */
const MAX_REGEXP_LEN = 10000;

function parseErrors(d: Directive): ErrorsConfig {
  const r = OptionReader.of(d);
  if (r.count > 1 || (r.count === 1 && r.arg(0) !== 'stdout')) {
    r.fail(`invalid log file "${excerpt(r.args.join(' '))}"; errors are logged to standard output: write \`errors\` or \`errors stdout\``);
  }
  const cfg: ErrorsConfig = { patterns: [], stacktrace: false };
  r.block({
    stacktrace: (o) => {
      o.noArgs();
      cfg.stacktrace = true;
    },
    consolidate: (o) => {
      cfg.patterns.push(parseConsolidate(o));
    },
  });
  return cfg;
}

/** One `consolidate DURATION REGEXP [LEVEL] [show_first]` line. */
function parseConsolidate(o: OptionReader): ConsolidatePattern {
  o.arity(2, 4, 'consolidate DURATION REGEXP [LEVEL] [show_first]', 'consolidate 5m ".* i/o timeout$" warning');
  const periodMs = o.duration(0, '', { positive: true, examples: '30s or 5m' });
  const source = o.arg(1)!;
  if (source.length > MAX_REGEXP_LEN) o.fail(`REGEXP too long: ${source.length} > ${MAX_REGEXP_LEN} characters`);
  let pattern: ConsolidatePattern['pattern'];
  try {
    // RE2 (Go's syntax and linear time, as CoreDNS): error messages carry client-chosen names.
    pattern = compileRegex(source);
  } catch (err) {
    o.fail(`bad regular expression: ${(err as Error).message}`);
  }
  const { level, showFirst } = parseOptionalParams(o);
  return { periodMs, pattern, source, level: level ?? 'error', showFirst };
}

/** CoreDNS's parseOptionalParams: a log level, then show_first, each at most once. */
function parseOptionalParams(o: OptionReader): { level?: Level; showFirst: boolean } {
  let level: Level | undefined;
  let showFirst = false;
  for (const arg of o.rest(2)) {
    const l = LEVELS[arg];
    if (l) {
      if (level) o.fail('multiple log levels specified in consolidate');
      if (showFirst) o.fail('log level must come before show_first in consolidate');
      level = l;
    } else if (arg === 'show_first') {
      showFirst = true;
    } else {
      o.fail(`unknown option in consolidate: "${excerpt(arg)}" (log levels: warning, error, info, debug; then show_first)`);
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
