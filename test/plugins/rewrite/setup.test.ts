// rewrite's Corefile lines (CoreDNS plugin/rewrite/setup_test.go, for the name rules clusterdns
// implements): accepted rules as the plugin holds them, and every setup error word for word.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { NameRule } from '../../../src/plugins/rewrite/rules.js';

const rulesOf = async (body: string) => (await setupPlugin<{ rules: readonly NameRule[] }>(body, 'rewrite')).rules;

describe('rewrite setup', () => {
  it.each([
    ['rewrite name a.example b.example', 'stop', 'exact', 'a.example.', 'b.example.'],
    ['rewrite continue name a.example b.example', 'continue', 'exact', 'a.example.', 'b.example.'],
    ['rewrite stop name prefix api svc', 'stop', 'prefix', 'api.', 'svc.'],
    ['rewrite name suffix .A.example .b.example answer auto', 'stop', 'suffix', '.a.example.', '.b.example.'],
    ['rewrite name substring web back', 'stop', 'substring', 'web.', 'back.'],
    ['rewrite name regex (.*)\\.a\\.example {1}.b.example', 'stop', 'regex', '(.*)\\.a\\.example', '{1}.b.example.'],
    // Fewer than two arguments on the line: the block's lines are joined into one rule.
    [
      'rewrite continue {\n  name regex (.*)\\.a\\.example {1}.b.example\n  answer name (.*)\\.b\\.example {1}.a.example\n}',
      'continue',
      'regex',
      '(.*)\\.a\\.example',
      '{1}.b.example.',
    ],
  ])('accepts %j', async (body, mode, match, from, to) => {
    const [rule, ...rest] = await rulesOf(body);
    expect(rest).toEqual([]);
    expect([rule!.mode, rule!.match, rule!.from, rule!.to]).toEqual([mode, match, from, to]);
  });

  it('keeps several rewrite lines of a block as one list, in order', async () => {
    const rules = await rulesOf('rewrite name a.example b.example\nrewrite name c.example d.example');
    expect(rules.map((r) => r.from)).toEqual(['a.example.', 'c.example.']);
  });

  it.each([
    ['rewrite', '2: rewrite: no rule type specified for rewrite (clusterdns supports: name)'],
    ['rewrite name', '2: rewrite: too few arguments for a name rule: name [exact|prefix|suffix|substring|regex] FROM TO'],
    ['rewrite name a.example {\n  b.example\n}', '2: rewrite: a rule is written on the line or in the block, not both'],
    ['rewrite answer name a b', '2: rewrite: response rewrites must begin with a name rule'],
    ['rewrite type ANY HINFO', '2: rewrite: rule type "type" is not supported by clusterdns yet (supported: name)'],
    ['rewrite name fuzzy a b', '2: rewrite: name rule supports only exact, prefix, suffix, substring, and regex name matching, received: fuzzy'],
    ['rewrite name regex (a b', '2: rewrite: invalid regex matching pattern: (a: error parsing regexp: missing closing ): `(a`'],
    [
      'rewrite name regex (a) {1}{2}',
      '2: rewrite: the rewrite regex pattern ({1}{2}) uses more subexpressions than its corresponding matching regex pattern ((a))',
    ],
    ['rewrite name prefix a b answer', '2: rewrite: invalid arguments for prefix rule: expected answer auto, answer name FROM TO or answer value FROM TO'],
    ['rewrite name prefix a b extra x', '2: rewrite: unexpected "extra" after the prefix rule; answer rules start with "answer"'],
    ['rewrite name prefix a b answer auto answer', '2: rewrite: type missing for answer rule for prefix rule (auto, name or value)'],
    ['rewrite name prefix a b answer bogus x y', '2: rewrite: invalid type "bogus" for answer rule for prefix rule (auto, name or value)'],
    ['rewrite name prefix a b answer name x', '2: rewrite: name answer rule for prefix rule: 2 arguments required'],
    ['rewrite name prefix a b answer auto answer name x y', '2: rewrite: auto name answer rule cannot be combined with explicit name answer rules'],
    ['rewrite name regex (a).b {1}.c answer value (x y', '2: rewrite: invalid regex matching pattern: (x: error parsing regexp: missing closing ): `(x`'],
    [
      'rewrite name regex (a).b {1}.c answer name (x) {1}{2}',
      '2: rewrite: the rewrite regex pattern ({1}{2}) uses more subexpressions than its corresponding matching regex pattern ((x))',
    ],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('reports a bad rule at its own line when a block has several', async () => {
    expect((await setupBlock('rewrite name a.example b.example\nrewrite name fuzzy a b')).errors).toEqual([
      '3: rewrite: name rule supports only exact, prefix, suffix, substring, and regex name matching, received: fuzzy',
    ]);
  });
});
