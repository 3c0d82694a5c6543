// hosts: an /etc/hosts-style file plus inline entries, through the real server with dig.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { buildApp } from '../../../src/app.js';
import { parseHosts } from '../../../src/plugins/hosts/hostsfile.js';
import { digQuery } from '../../helpers/clients.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';
import { holdsWithin } from '../../helpers/wait.js';

const dig = which('dig');
const fixtures = path.join(repoRoot, 'test/fixtures/hosts');

interface Row {
  q: string;
  rcode: string;
  answer: string[];
  aa?: boolean;
}

const rows: Row[] = [
  { q: 'web.hosts.test. A', rcode: 'NOERROR', answer: ['web.hosts.test. 60 IN A 10.0.0.1'], aa: true },
  { q: 'alias.hosts.test. A', rcode: 'NOERROR', answer: ['alias.hosts.test. 60 IN A 10.0.0.1'] },
  { q: 'db.hosts.test. AAAA', rcode: 'NOERROR', answer: ['db.hosts.test. 60 IN AAAA fd00::2'] },
  { q: 'db.hosts.test. A', rcode: 'NOERROR', answer: ['db.hosts.test. 60 IN A 10.0.0.2'] },
  // The name exists: other types are NODATA (authoritative, no SOA), never a fallthrough.
  { q: 'web.hosts.test. AAAA', rcode: 'NOERROR', answer: [], aa: true },
  { q: 'db.hosts.test. MX', rcode: 'NOERROR', answer: [] },
  // ANY (RFC 8482 4.1): one RRset, A before AAAA, never an empty answer for a known name.
  { q: 'db.hosts.test. ANY', rcode: 'NOERROR', answer: ['db.hosts.test. 60 IN A 10.0.0.2'], aa: true },
  // Inline entries from the Corefile block.
  { q: 'inline.hosts.test. A', rcode: 'NOERROR', answer: ['inline.hosts.test. 60 IN A 10.0.0.9'] },
  // Unknown names fall through to the file plugin.
  { q: 'fromfile.hosts.test. A', rcode: 'NOERROR', answer: ['fromfile.hosts.test. 120 IN A 10.0.0.99'] },
  { q: 'nope.hosts.test. A', rcode: 'NXDOMAIN', answer: [] },
  // A line whose first field is not an IP is skipped.
  { q: 'broken.hosts.test. A', rcode: 'NXDOMAIN', answer: [] },
  // PTR from the same entries, in file order; inline entries too.
  {
    q: '1.0.0.10.in-addr.arpa. PTR',
    rcode: 'NOERROR',
    answer: ['1.0.0.10.in-addr.arpa. 60 IN PTR web.hosts.test.', '1.0.0.10.in-addr.arpa. 60 IN PTR alias.hosts.test.'],
  },
  { q: '9.0.0.10.in-addr.arpa. PTR', rcode: 'NOERROR', answer: ['9.0.0.10.in-addr.arpa. 60 IN PTR inline.hosts.test.'] },
  // An address hosts does not know always goes on: nothing after hosts serves it -> SERVFAIL.
  { q: '77.0.0.10.in-addr.arpa. PTR', rcode: 'SERVFAIL', answer: [] },
  // Second block: default TTL 3600, no fallthrough.
  { q: 'a.strict.test. A', rcode: 'NOERROR', answer: ['a.strict.test. 3600 IN A 10.0.0.3'] },
  { q: 'nope.strict.test. A', rcode: 'SERVFAIL', answer: [] },
];

describeNeeding(['dig'], 'hosts through the real server (dig)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(fixtures, 'Corefile')]);
  });
  afterAll(async () => server?.stop());

  for (const row of rows) {
    it(`${row.q} -> ${row.rcode} ${row.answer.length}`, async () => {
      const [name, type] = row.q.split(' ') as [string, string];
      for (const tcp of [false, true]) {
        const obs = await digQuery(dig!, server.port, name, type, tcp);
        expect(obs.rcode).toBe(row.rcode);
        expect(obs.answer).toEqual(row.answer);
        if (row.aa !== undefined) expect(obs.flags).toContain('aa');
      }
    });
  }
});

describe('hosts in process', () => {
  it('parses comments, zones and families like CoreDNS', () => {
    const m = parseHosts('10.0.0.1 a.example. b.other. # c.example.\nfe80::1%eth0 a.example.\n::ffff:1.2.3.4 m.example.\n', ['example.'], true);
    expect(m.name4.get('a.example.')).toEqual(['10.0.0.1']);
    expect(m.name4.has('b.other.')).toBe(false);
    expect(m.name4.has('c.example.')).toBe(false);
    expect(m.name6.get('a.example.')).toEqual(['fe80::1']);
    expect(m.addr.get('10.0.0.1')).toEqual(['a.example.']);
    expect(parseHosts('10.0.0.1 a.example.\n', ['example.'], false).addr.size).toBe(0);
  });

  it('no_reverse: no PTR from the entries', async () => {
    const app = await buildApp({
      corefileText: `example.test 0.0.10.in-addr.arpa {\n  hosts /nonexistent {\n    10.0.0.1 a.example.test\n    no_reverse\n  }\n}\n`,
    });
    try {
      expect((await ask(app, 'a.example.test', 'A')).answers!.map((a) => a.data)).toEqual(['10.0.0.1']);
      expect((await ask(app, '1.0.0.10.in-addr.arpa', 'PTR')).rcode).toBe('SERVFAIL');
    } finally {
      await app.close();
    }
  });

  it('reload: a changed file is read again and the answer cache forgotten', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-hosts-'));
    const file = path.join(dir, 'hosts');
    fs.writeFileSync(file, '10.0.0.1 a.example.test\n');
    const app = await buildApp({ corefileText: `example.test {\n  hosts ${file} {\n    reload 100ms\n  }\n}\n`, port: 0 });
    try {
      await app.listen();
      expect((await ask(app, 'a.example.test', 'A')).answers!.map((a) => a.data)).toEqual(['10.0.0.1']);
      fs.writeFileSync(file, '10.0.0.2 a.example.test\n10.0.0.3 b.example.test\n');
      let got: unknown[] = [];
      await holdsWithin(
        async () => {
          got = (await ask(app, 'a.example.test', 'A')).answers!.map((a) => a.data);
          return got[0] === '10.0.0.2';
        },
        5000,
        100,
      );
      expect(got).toEqual(['10.0.0.2']);
      expect((await ask(app, 'b.example.test', 'A')).answers!.map((a) => a.data)).toEqual(['10.0.0.3']);
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['ttl 0', /Corefile:3: hosts ttl: ttl must be in range \[1, 65535\]: 0/],
    ['reload -1s', /Corefile:3: hosts reload: "-1s" must not be negative/],
    ['tll 30', /Corefile:3: unknown hosts option "tll" \(did you mean ttl\?\)/],
    [
      'fallthrough\n    10.0.0.1 late.example.test',
      /Corefile:4: unknown hosts option "10.0.0.1"; valid options: ttl, no_reverse, reload, fallthrough; or a hosts entry/,
    ],
  ])('rejects %s with the line', async (opt, err) => {
    await expect(buildApp({ corefileText: `example.test {\n  hosts /nonexistent {\n    ${opt}\n  }\n}\n` })).rejects.toThrow(err);
  });
});
