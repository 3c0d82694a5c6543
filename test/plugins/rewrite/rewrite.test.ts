// rewrite name: the chain answers the rewritten name, the client sees its own question and (with
// answer auto / answer name / exact) its own name in the records.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { buildApp } from '../../../src/app.js';
import { applyRule, parseRule } from '../../../src/plugins/rewrite/rules.js';
import { digQuery } from '../../helpers/clients.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const conf = path.join(repoRoot, 'test/fixtures/rewrite/Corefile');

const rows: { q: string; rcode: string; answer: string[]; why: string }[] = [
  { why: 'exact: answer mapped back automatically', q: 'www.exact.test. A', rcode: 'NOERROR', answer: ['www.exact.test. 300 IN A 192.0.2.80'] },
  { why: 'exact: other names are not rewritten', q: 'web.exact.test. A', rcode: 'SERVFAIL', answer: [] },
  {
    why: 'suffix + answer auto: owners and CNAME targets mapped back',
    q: 'www.suffix.test. A',
    rcode: 'NOERROR',
    answer: ['www.suffix.test. 300 IN CNAME web.suffix.test.', 'web.suffix.test. 300 IN A 192.0.2.80'],
  },
  {
    why: 'suffix + answer auto: SRV target mapped back',
    q: '_http._tcp.suffix.test. SRV',
    rcode: 'NOERROR',
    answer: ['_http._tcp.suffix.test. 300 IN SRV 0 5 80 web.suffix.test.'],
  },
  { why: 'suffix: NXDOMAIN of the rewritten name', q: 'nope.suffix.test. A', rcode: 'NXDOMAIN', answer: [] },
  { why: 'regex + answer name', q: 'web-v1.regex.test. A', rcode: 'NOERROR', answer: ['web-v1.regex.test. 300 IN A 192.0.2.80'] },
  { why: 'regex: case-insensitive question', q: 'WEB-v1.Regex.Test. A', rcode: 'NOERROR', answer: ['web-v1.regex.test. 300 IN A 192.0.2.80'] },
  { why: 'prefix (a whole first label) + answer auto', q: 'api.back4.test. A', rcode: 'NOERROR', answer: ['api.back4.test. 300 IN A 192.0.2.80'] },
  {
    why: 'substring without an answer rule: the answer keeps the rewritten name',
    q: 'web.substring.test. A',
    rcode: 'NOERROR',
    answer: ['web.back5.test. 300 IN A 192.0.2.80'],
  },
];

describeNeeding(['dig'], 'rewrite name through the real server (dig)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', conf]);
  });
  afterAll(async () => server?.stop());

  for (const row of rows) {
    it(`${row.why}: ${row.q}`, async () => {
      const [name, type] = row.q.split(' ') as [string, string];
      for (const tcp of [false, true]) {
        const obs = await digQuery(dig!, server.port, name, type, tcp);
        expect(obs.rcode).toBe(row.rcode);
        expect(obs.answer).toEqual(row.answer);
      }
    });
  }
});

describe('rewrite in process', () => {
  it('the question is echoed as asked', async () => {
    const app = await buildApp({ conf });
    try {
      const r = await ask(app, 'www.exact.test', 'A');
      expect(r.questions).toEqual([{ name: 'www.exact.test', type: 'A', class: 'IN' }]);
      expect(r.answers!.map((a) => a.name)).toEqual(['www.exact.test']);
    } finally {
      await app.close();
    }
  });

  it.each([
    [['name', 'a.example.org', 'b.example.org'], 'a.example.org.', 'b.example.org.'],
    [['name', 'exact', 'A.example.org.', 'b.example.org'], 'a.example.org.', 'b.example.org.'],
    [['name', 'prefix', 'foo', 'bar'], 'foo.example.org.', 'bar.example.org.'],
    [['name', 'prefix', 'foo', 'bar'], 'foobar.example.org.', undefined],
    [['name', 'suffix', '.old.test', '.new.test'], 'x.old.test.', 'x.new.test.'],
    [['name', 'substring', 'us-west', 'eu'], 'a.us-west.example.', 'a.eu.example.'],
    [['name', 'regex', '(.*)-(us-west-1)\\.example\\.org', '{1}.service.{2}.consul'], 'ftp-us-west-1.example.org.', 'ftp.service.us-west-1.consul.'],
    [['continue', 'name', 'regex', '^(.*)\\.x\\.$', '{1}.y'], 'a.x.', 'a.y.'],
    // Go's RE2 syntax: named groups (?P<n>...), inline flags, classes; a group that took no part is empty.
    [['name', 'regex', '^(?P<host>[a-z]+)\\.(?i:OLD)\\.test\\.$', '{1}.new.test'], 'web.old.test.', 'web.new.test.'],
    [['name', 'regex', '^(a)?(b+)\\.x\\.$', '{1}{2}.y'], 'bb.x.', 'bb.y.'],
    [['name', 'regex', '^([[:alpha:]]+)-\\d+\\.x\\.$', '{1}.y'], 'web-12.x.', 'web.y.'],
    // Leftmost-first, as Go: the lazy group stops at the first dash.
    [['name', 'regex', '^(.+?)-(.*)\\.x\\.$', '{2}.{1}.y'], 'a-b-c.x.', 'b-c.a.y.'],
  ])('rule %j: %s -> %s', (args, name, out) => {
    expect(applyRule(parseRule(args), name)).toBe(out);
  });

  it.each([
    [['name', 'prefix', 'a', 'b', 'answer', 'auto', 'answer', 'name', 'x', 'y'], /auto name answer rule cannot be combined/],
    [['name', 'regex', '(a', 'b'], /invalid regex/],
    // RE2 has no backreferences or lookaround; CoreDNS (Go's regexp) rejects them the same way.
    [['name', 'regex', '(a)\\1', 'b'], /invalid regex matching pattern: \(a\)\\1: .*invalid escape/],
    [['name', 'regex', 'a(?=b)', 'b'], /invalid regex matching pattern: .*Perl syntax/],
    [['name', 'regex', '(a)', '{1}{2}'], /more subexpressions/],
    [['name', 'fuzzy', 'a', 'b'], /only exact, prefix, suffix, substring, and regex/],
    [['type', 'ANY', 'HINFO'], /not supported by clusterdns yet/],
    [['name', 'a'], /too few arguments/],
  ])('rejects %j', (args, err) => {
    expect(() => parseRule(args)).toThrow(err);
  });

  it('matches in time linear in the name (RE2), not by backtracking', () => {
    const rule = parseRule(['name', 'regex', '^(([a-z0-9]+)-?)*\\.rx\\.cluster\\.local\\.$', 'x.y']);
    const t0 = process.hrtime.bigint();
    for (let n = 10; n <= 60; n += 10) expect(applyRule(rule, `${'a'.repeat(n)}!.rx.cluster.local.`)).toBeUndefined();
    // A backtracking engine needs seconds at 30 characters and far more at 60.
    expect(Number(process.hrtime.bigint() - t0) / 1e6).toBeLessThan(200);
  });

  it('an invalid name after a rewrite is SERVFAIL', async () => {
    const app = await buildApp({
      corefileText: `example.org {\n  rewrite name regex (.*)\\.example\\.org {1}..example.org\n  file ${path.join(repoRoot, 'zones/example.org.zone')}\n}\n`,
    });
    try {
      expect((await ask(app, 'web.example.org', 'A')).rcode).toBe('SERVFAIL');
    } finally {
      await app.close();
    }
  });

  it('Corefile errors carry the line', async () => {
    await expect(buildApp({ corefileText: 'example.org {\n  rewrite name regex (x y\n}\n' })).rejects.toThrow(/Corefile:2: rewrite: invalid regex/);
  });
});
