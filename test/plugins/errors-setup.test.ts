// CoreDNS plugin/errors/setup_test.go (TestErrorsParse, TestShowFirstOption, large regex), ported:
// the same Corefile lines are accepted or rejected here.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../helpers/setup.js';

type Patterns = { patterns: { level: string; showFirst?: boolean }[]; stacktrace: boolean };

const accepted: [string, number, boolean][] = [
  ['errors', 0, false],
  ['errors stdout', 0, false],
  ['errors {\n  stacktrace\n}', 0, true],
  ['errors {\n  stacktrace\n  consolidate 1m ^exact$\n}', 1, true],
  ['errors {\n  consolidate 1m ^exact$\n}', 1, false],
  ['errors {\n  consolidate 1m error\n}', 1, false],
  ['errors {\n  consolidate 1m "format error"\n}', 1, false],
  ['errors {\n  consolidate 1m error1\n  consolidate 5s error2\n}', 2, false],
  ['errors {\n  consolidate 1m error show_first\n}', 1, false],
  ['errors {\n  consolidate 1m error warning show_first\n}', 1, false],
];

const rejected: [string, RegExp][] = [
  ['errors errors.txt', /invalid log file: errors.txt/],
  ['errors visible', /invalid log file: visible/],
  ['errors { log visible }', /unknown errors option "log"/],
  ['errors\nerrors', /appears twice/],
  ['errors a b', /invalid log file/],
  ['errors {\n  consolidate\n}', /takes DURATION REGEXP/],
  ['errors {\n  consolidate 1m\n}', /takes DURATION REGEXP/],
  ['errors {\n  consolidate abc .*\n}', /"abc" is not a duration/],
  ['errors {\n  consolidate 1 .*\n}', /"1" is not a duration/],
  ['errors {\n  consolidate 1m ())\n}', /bad regular expression/],
  ['errors {\n  consolidate 1m error invalid_option\n}', /unknown option in consolidate: invalid_option/],
  ['errors {\n  consolidate 1m error warning error\n}', /multiple log levels specified in consolidate/],
  ['errors {\n  consolidate 1m error info debug\n}', /multiple log levels/],
  ['errors {\n  consolidate 1m error show_first warning\n}', /log level must come before show_first/],
  ['errors {\n  consolidate 1m error show_first info\n}', /log level must come before show_first/],
  [`errors {\n  consolidate 1m ${'a'.repeat(10001)}\n}`, /regex pattern too long: 10001 > 10000/],
  // Only CoreDNS's level names: `warn` is not one.
  ['errors {\n  consolidate 1m .* warn\n}', /unknown option in consolidate: warn/],
];

describe('errors setup (CoreDNS setup_test.go)', () => {
  it.each(accepted)('accepts %j', async (body, count, stacktrace) => {
    const p = await setupPlugin<Patterns>(body, 'errors');
    expect(p.patterns).toHaveLength(count);
    expect(p.stacktrace).toBe(stacktrace);
  });

  it.each(rejected)('rejects %j', async (body, reason) => {
    const r = await setupBlock(body);
    expect(r.errors.join('\n')).toMatch(reason);
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
      const p = await setupPlugin<Patterns>(`errors {\n  consolidate 1m ${args}\n}`, 'errors');
      expect([p.patterns[0]!.level, p.patterns[0]!.showFirst]).toEqual([level, showFirst]);
    }
  });
});
