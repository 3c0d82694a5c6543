// CoreDNS plugin/log/setup_test.go (TestLogParse), ported: the same `log` lines give the same
// rules (name scope, format, classes) or are rejected with the exact `line: reason`.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import { COMBINED_LOG_FORMAT, COMMON_LOG_FORMAT } from '../../../src/plugins/log/format.js';
import type { LogRule } from '../../../src/plugins/log/config.js';

const rule = (nameScope: string, format: string, classes: string[] = ['all']) => ({ nameScope, format, classes: [...classes].sort() });
const rulesOf = async (body: string) => (await setupPlugin<{ rules: LogRule[] }>(body, 'log')).rules.map((r) => ({ ...r, classes: [...r.classes].sort() }));

describe('log setup (CoreDNS setup_test.go)', () => {
  const cases: [string, ReturnType<typeof rule>[]][] = [
    ['log', [rule('.', COMMON_LOG_FORMAT)]],
    ['log example.org', [rule('example.org.', COMMON_LOG_FORMAT)]],
    ['log example.org. {common}', [rule('example.org.', COMMON_LOG_FORMAT)]],
    ['log example.org {combined}', [rule('example.org.', COMBINED_LOG_FORMAT)]],
    ['log example.org.\nlog example.net {combined}', [rule('example.org.', COMMON_LOG_FORMAT), rule('example.net.', COMBINED_LOG_FORMAT)]],
    ['log example.org {host}\nlog example.org {when}', [rule('example.org.', '{host}'), rule('example.org.', '{when}')]],
    ['log example.org example.net', [rule('example.org.', COMMON_LOG_FORMAT), rule('example.net.', COMMON_LOG_FORMAT)]],
    ['log example.org example.net {host}', [rule('example.org.', '{host}'), rule('example.net.', '{host}')]],
    ['log example.org example.net {when} {\n  class denial\n}', [rule('example.org.', '{when}', ['denial']), rule('example.net.', '{when}', ['denial'])]],
    ['log example.org {\n  class all\n}', [rule('example.org.', COMMON_LOG_FORMAT, ['all'])]],
    ['log example.org {\n  class denial\n}', [rule('example.org.', COMMON_LOG_FORMAT, ['denial'])]],
    ['log {\n  class denial\n}', [rule('.', COMMON_LOG_FORMAT, ['denial'])]],
    ['log {\n  class denial error\n}', [rule('.', COMMON_LOG_FORMAT, ['denial', 'error'])]],
    ['log {\n  class denial\n  class error\n}', [rule('.', COMMON_LOG_FORMAT, ['denial', 'error'])]],
    ['log example.org "{combined} {/forward/upstream}"', [rule('example.org.', `${COMBINED_LOG_FORMAT} {/forward/upstream}`)]],
    ['log example.org "{common} {/forward/upstream}"', [rule('example.org.', `${COMMON_LOG_FORMAT} {/forward/upstream}`)]],
    ['log example.org "{when} {combined} {/forward/upstream}"', [rule('example.org.', `{when} ${COMBINED_LOG_FORMAT} {/forward/upstream}`)]],
    ['log example.org "{when} {common} {/forward/upstream}"', [rule('example.org.', `{when} ${COMMON_LOG_FORMAT} {/forward/upstream}`)]],
  ];

  it.each(cases)('accepts %j', async (body, want) => {
    expect(await rulesOf(body)).toEqual(want);
  });

  it.each<[string, string[]]>([
    ['log {\n  class abracadabra\n}', ['3: log class: class "abracadabra" is not one of success, denial, error or all']],
    ['log {\n  class denial abracadabra\n}', ['3: log class: class "abracadabra" is not one of success, denial, error or all']],
    ['log {\n  class\n}', ['3: log class: wrong number of arguments: 0 given, at least 1 expected; usage `class success|denial|error|all...`']],
    ['log {\n  unknown\n}', ['3: unknown log option "unknown"; the only option is class']],
    // Every log line of a block is read: a later line's error carries its own line.
    ['log\nlog example.org {\n  class x\n}', ['4: log class: class "x" is not one of success, denial, error or all']],
  ])('rejects %j', async (body, want) => {
    expect((await setupBlock(body)).errors).toEqual(want);
  });
});
