// CoreDNS plugin/errors/setup_test.go (TestErrorsParse, TestShowFirstOption, large regex), ported:
// the same Corefile lines are accepted (with the config they give) or rejected (with the exact
// `line: reason`).
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { ConsolidatePattern } from '../../../src/plugins/errors/config.js';

type Parsed = { patterns: ConsolidatePattern[]; stacktrace: boolean };

/** The parsed config of an accepted block, without the compiled regular expressions. */
async function cfgOf(body: string) {
  const p = await setupPlugin<Parsed>(body, 'errors');
  const patterns = p.patterns.map(({ periodMs, source, level, showFirst }) => ({ periodMs, source, level, showFirst }));
  return { patterns, stacktrace: p.stacktrace };
}
const errorsOf = async (body: string) => (await setupBlock(body)).errors;
const consolidate = (periodMs: number, source: string, level = 'error', showFirst = false) => ({ periodMs, source, level, showFirst });

const accepted: [string, ReturnType<typeof consolidate>[], boolean][] = [
  ['errors', [], false],
  ['errors stdout', [], false],
  ['errors {\n  stacktrace\n}', [], true],
  ['errors {\n  stacktrace\n  consolidate 1m ^exact$\n}', [consolidate(60000, '^exact$')], true],
  ['errors {\n  consolidate 1m ^exact$\n}', [consolidate(60000, '^exact$')], false],
  ['errors {\n  consolidate 1m error\n}', [consolidate(60000, 'error')], false],
  ['errors {\n  consolidate 1m "format error"\n}', [consolidate(60000, 'format error')], false],
  ['errors {\n  consolidate 1m error1\n  consolidate 5s error2\n}', [consolidate(60000, 'error1'), consolidate(5000, 'error2')], false],
  ['errors {\n  consolidate 1m error show_first\n}', [consolidate(60000, 'error', 'error', true)], false],
  ['errors {\n  consolidate 1m error warning show_first\n}', [consolidate(60000, 'error', 'warn', true)], false],
  [`errors {\n  consolidate 1m ${'a'.repeat(10000)}\n}`, [consolidate(60000, 'a'.repeat(10000))], false],
];

const INVALID_FILE = 'errors are logged to standard output: write `errors` or `errors stdout`';
const ARGS = (n: number) =>
  `errors consolidate: wrong number of arguments: ${n} given, 2 to 4 expected; usage \`consolidate DURATION REGEXP [LEVEL] [show_first]\`, e.g. \`consolidate 5m ".* i/o timeout$" warning\``;
const UNKNOWN = (arg: string) => `errors consolidate: unknown option in consolidate: "${arg}" (log levels: warning, error, info, debug; then show_first)`;

const rejected: [string, string[]][] = [
  ['errors errors.txt', [`2: errors: invalid log file "errors.txt"; ${INVALID_FILE}`]],
  ['errors visible', [`2: errors: invalid log file "visible"; ${INVALID_FILE}`]],
  ['errors a b', [`2: errors: invalid log file "a b"; ${INVALID_FILE}`]],
  ['errors stdout stdout', [`2: errors: invalid log file "stdout stdout"; ${INVALID_FILE}`]],
  ['errors { log visible }', ['2: unknown errors option "log"; valid options: stacktrace, consolidate']],
  ['errors {\n  stacktrace yes\n}', ['3: errors stacktrace takes no arguments, got "yes"']],
  ['errors {\n  consolidate\n}', [`3: ${ARGS(0)}`]],
  ['errors {\n  consolidate 1m\n}', [`3: ${ARGS(1)}`]],
  ['errors {\n  consolidate 1m .* error show_first extra\n}', [`3: ${ARGS(5)}`]],
  ['errors {\n  consolidate abc .*\n}', ['3: errors consolidate: "abc" is not a duration; write e.g. 30s or 5m']],
  ['errors {\n  consolidate 1 .*\n}', ['3: errors consolidate: "1" is not a duration; write e.g. 30s or 5m']],
  ['errors {\n  consolidate 0s .*\n}', ['3: errors consolidate: "0s" must be more than 0; write e.g. 30s or 5m']],
  [`errors {\n  consolidate 1m ${'a'.repeat(10001)}\n}`, ['3: errors consolidate: REGEXP too long: 10001 > 10000 characters']],
  ['errors {\n  consolidate 1m ())\n}', ['3: errors consolidate: bad regular expression: error parsing regexp: unexpected ): `())`']],
  ['errors {\n  consolidate 1m error invalid_option\n}', [`3: ${UNKNOWN('invalid_option')}`]],
  ['errors {\n  consolidate 1m error warning error\n}', ['3: errors consolidate: multiple log levels specified in consolidate']],
  ['errors {\n  consolidate 1m error info debug\n}', ['3: errors consolidate: multiple log levels specified in consolidate']],
  ['errors {\n  consolidate 1m error show_first warning\n}', ['3: errors consolidate: log level must come before show_first in consolidate']],
  ['errors {\n  consolidate 1m error show_first info\n}', ['3: errors consolidate: log level must come before show_first in consolidate']],
  // Only CoreDNS's level names: `warn` is not one.
  ['errors {\n  consolidate 1m .* warn\n}', [`3: ${UNKNOWN('warn')}`]],
  // Every bad option line is reported in one run.
  [
    'errors {\n  nosuch\n  stacktrace x\n  consolidate 1m\n}',
    ['3: unknown errors option "nosuch"; valid options: stacktrace, consolidate', '4: errors stacktrace takes no arguments, got "x"', `5: ${ARGS(1)}`],
  ],
];

describe('errors setup (CoreDNS setup_test.go)', () => {
  it.each(accepted)('accepts %j', async (body, patterns, stacktrace) => {
    expect(await cfgOf(body)).toEqual({ patterns, stacktrace });
  });

  it.each(rejected)('rejects %j', async (body, want) => {
    expect(await errorsOf(body)).toEqual(want);
  });

  it('allows one errors per server block', async () => {
    expect(await errorsOf('errors\nerrors')).toEqual(['3: plugin "errors" appears twice in this server block (first at line 2); merge the two']);
  });

  it('reads the log level and show_first (TestShowFirstOption)', async () => {
    const cases: [string, string, boolean][] = [
      ['.* show_first', 'error', true],
      ['.* warning show_first', 'warn', true],
      ['.* error show_first', 'error', true],
      ['.*', 'error', false],
      ['.* info', 'info', false],
      ['.* debug', 'debug', false],
    ];
    for (const [args, level, showFirst] of cases) {
      const { patterns } = await cfgOf(`errors {\n  consolidate 1m ${args}\n}`);
      expect([patterns[0]!.level, patterns[0]!.showFirst]).toEqual([level, showFirst]);
    }
  });
});
