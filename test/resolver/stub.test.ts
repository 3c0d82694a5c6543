// The three stub resolvers against a fake server answering from a table (candidate -> outcome):
// exact query lists per libc (glibc resolv/, musl src/network/lookup_name.c, Go net/dnsclient_unix.go).
import { describe, it, expect } from 'vitest';
import { parseResolvConf, type Libc } from '../../src/pkg/resolvconf.js';
import { resolveStub } from '../../src/resolver/stub.js';
import { parseHosts } from '../../src/resolver/hosts.js';
import type { SendFn, SendResult, Trace } from '../../src/resolver/types.js';

type Spec = 'NX' | 'NODATA' | 'SERVFAIL' | 'REFUSED' | 'TIMEOUT' | 'ADDR' | 'V6';

/** Fake server: absolute candidate -> outcome (per server with `name@server`); anything else NXDOMAIN. */
function fake(table: Record<string, Spec>): SendFn {
  return async (name, type, server): Promise<SendResult> => {
    const spec = table[`${name}@${server}`] ?? table[name] ?? 'NX';
    switch (spec) {
      case 'NX':
        return { rcode: 'NXDOMAIN', answers: [] };
      case 'NODATA':
        return { rcode: 'NOERROR', answers: [] };
      case 'SERVFAIL':
      case 'REFUSED':
        return { rcode: spec, answers: [] };
      case 'TIMEOUT':
        return { rcode: 'TIMEOUT', answers: [], timeout: true };
      case 'ADDR':
        return { rcode: 'NOERROR', answers: type === 'A' ? ['A 10.0.0.1'] : type === 'SRV' ? ['SRV 0 100 80 web.example.'] : [] };
      case 'V6':
        return { rcode: 'NOERROR', answers: type === 'AAAA' ? ['AAAA fd00::1'] : [] };
    }
  };
}

const SEARCH = 'search a.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\n';

async function run(libc: Libc, name: string, conf: string, table: Record<string, Spec> = {}, type?: string, hosts?: string): Promise<Trace> {
  return resolveStub(name, {
    libc,
    conf: parseResolvConf(conf, libc),
    send: fake(table),
    ...(type ? { type } : {}),
    ...(hosts ? { hosts: parseHosts(hosts) } : {}),
  });
}
const qs = (t: Trace): string[] => t.queries.map((q) => `${q.name} ${q.type}`);
const names = (t: Trace): string[] => [...new Set(t.queries.map((q) => q.name))];
const pair = (...ns: string[]): string[] => ns.flatMap((n) => [`${n} A`, `${n} AAAA`]);

describe('candidate order by ndots (all NXDOMAIN)', () => {
  const nameWithDots = (d: number): string => ['x', 'web', 'a', 'svc', 'cluster', 'local', 'y'].slice(0, d + 1).join('.');
  const sfx = ['a.svc.cluster.local.', 'svc.cluster.local.', 'cluster.local.'];
  for (const ndots of [1, 2, 5, 15]) {
    for (let d = 0; d <= 6; d++) {
      const n = nameWithDots(d);
      const searchList = sfx.map((s) => `${n}.${s}`);
      it(`ndots ${ndots}, ${d} dots (${n})`, async () => {
        const conf = `${SEARCH}options ndots:${ndots}\n`;
        const asIsFirst = d >= ndots;
        const glibcGo = asIsFirst ? [`${n}.`, ...searchList] : [...searchList, `${n}.`];
        expect(names(await run('glibc', n, conf))).toEqual(glibcGo);
        expect(names(await run('go', n, conf))).toEqual(glibcGo);
        // musl: enough dots -> only the name itself, no search fallback.
        expect(names(await run('musl', n, conf))).toEqual(asIsFirst ? [`${n}.`] : [...searchList, `${n}.`]);
        const t = await run('glibc', n, conf);
        expect(t.result.status).toBe('NXDOMAIN');
        expect(t.result.error).toBe('EAI_NONAME');
      });
    }
  }
  it('ndots 0: as is first for a dot-less name', async () => {
    expect(names(await run('glibc', 'web', `${SEARCH}options ndots:0\n`))).toEqual(['web.', ...sfx.map((s) => `web.${s}`)]);
    expect(names(await run('musl', 'web', `${SEARCH}options ndots:0\n`))).toEqual(['web.']);
  });
});

describe('answers and failures in the middle', () => {
  const conf = `${SEARCH}options ndots:5\n`;
  it('answer at search position 2: A and AAAA per candidate, A first', async () => {
    for (const libc of ['glibc', 'musl', 'go'] as const) {
      const t = await run(libc, 'web', conf, { 'web.svc.cluster.local.': 'ADDR' });
      expect(qs(t)).toEqual(pair('web.a.svc.cluster.local.', 'web.svc.cluster.local.'));
      expect(t.result).toMatchObject({ status: 'ok', answers: ['10.0.0.1'] });
      expect(t.roundTrips).toBe(2);
    }
  });
  it('trailing dot: only the name itself', async () => {
    for (const libc of ['glibc', 'musl', 'go'] as const) {
      const t = await run(libc, 'web.a.svc.cluster.local.', conf);
      expect(qs(t)).toEqual(pair('web.a.svc.cluster.local.'));
      expect(t.result.status).toBe('NXDOMAIN');
    }
  });
  it('NODATA at position 1: glibc and Go go on, musl stops', async () => {
    const table: Record<string, Spec> = { 'db.a.svc.cluster.local.': 'NODATA', 'db.cluster.local.': 'ADDR' };
    const all = pair('db.a.svc.cluster.local.', 'db.svc.cluster.local.', 'db.cluster.local.');
    expect(qs(await run('glibc', 'db', conf, table))).toEqual(all);
    expect(qs(await run('go', 'db', conf, table))).toEqual(all);
    const m = await run('musl', 'db', conf, table);
    expect(qs(m)).toEqual(pair('db.a.svc.cluster.local.'));
    expect(m.result).toMatchObject({ status: 'NODATA', error: 'EAI_NONAME' });
    // glibc: the search ends in NO_DATA when nothing answers.
    const g = await run('glibc', 'db', conf, { 'db.a.svc.cluster.local.': 'NODATA' });
    expect(g.result).toMatchObject({ status: 'NODATA', error: 'EAI_NODATA' });
  });
  it('SERVFAIL at position 1: glibc asks it once per attempt and goes on; musl re-sends and stops; Go goes on', async () => {
    const table: Record<string, Spec> = { 'db.a.svc.cluster.local.': 'SERVFAIL', 'db.svc.cluster.local.': 'ADDR' };
    const g = await run('glibc', 'db', conf, table);
    expect(qs(g)).toEqual([...pair('db.a.svc.cluster.local.', 'db.a.svc.cluster.local.'), ...pair('db.svc.cluster.local.')]);
    expect(g.result.status).toBe('ok');
    const m = await run('musl', 'db', conf, table);
    // Each round: the pair, then up to 2 x 2 immediate re-sends on SERVFAIL; `attempts` (2) rounds.
    const round = pair('db.a.svc.cluster.local.', 'db.a.svc.cluster.local.', 'db.a.svc.cluster.local.');
    expect(qs(m)).toEqual([...round, ...round]);
    expect(m.result).toMatchObject({ status: 'SERVFAIL', error: 'EAI_AGAIN' });
    const go = await run('go', 'db', conf, table);
    expect(qs(go)).toEqual([
      'db.a.svc.cluster.local. A',
      'db.a.svc.cluster.local. A',
      'db.a.svc.cluster.local. AAAA',
      'db.a.svc.cluster.local. AAAA',
      ...pair('db.svc.cluster.local.'),
    ]);
    expect(go.result.status).toBe('ok');
  });
  it('REFUSED at position 2: glibc ends the search and tries the name as is; musl waits it out; Go goes on', async () => {
    const table: Record<string, Spec> = { 'db.svc.cluster.local.': 'REFUSED', 'db.cluster.local.': 'ADDR' };
    const g = await run('glibc', 'db', conf, table);
    expect(qs(g)).toEqual(pair('db.a.svc.cluster.local.', 'db.svc.cluster.local.', 'db.svc.cluster.local.', 'db.'));
    // The error is that of the last query (`db.`, NXDOMAIN): res_query.c:537-541.
    expect(g.result).toMatchObject({ status: 'NXDOMAIN', error: 'EAI_NONAME' });
    const m = await run('musl', 'db', conf, table);
    expect(qs(m)).toEqual(pair('db.a.svc.cluster.local.', 'db.svc.cluster.local.', 'db.svc.cluster.local.'));
    expect(m.result).toMatchObject({ status: 'REFUSED', error: 'EAI_AGAIN' });
    const go = await run('go', 'db', conf, table);
    expect(names(go)).toEqual(['db.a.svc.cluster.local.', 'db.svc.cluster.local.', 'db.cluster.local.']);
    expect(go.result.status).toBe('ok');
  });
  it('timeout at position 1: glibc ends the search phase (then as is), musl stops, Go goes on', async () => {
    const table: Record<string, Spec> = { 'db.a.svc.cluster.local.': 'TIMEOUT', 'db.svc.cluster.local.': 'ADDR' };
    expect(names(await run('glibc', 'db', conf, table))).toEqual(['db.a.svc.cluster.local.', 'db.']);
    const m = await run('musl', 'db', conf, table);
    expect(m.result).toMatchObject({ status: 'TIMEOUT', error: 'EAI_AGAIN' });
    expect((await run('go', 'db', conf, table)).result.status).toBe('ok');
  });
  it('A NODATA + AAAA answer: the pair succeeds with the IPv6 address only', async () => {
    for (const libc of ['glibc', 'musl', 'go'] as const) {
      const t = await run(libc, 'v6only', conf, { 'v6only.a.svc.cluster.local.': 'V6' });
      expect(qs(t)).toEqual(pair('v6only.a.svc.cluster.local.'));
      expect(t.result.answers).toEqual(['fd00::1']);
    }
    // getaddrinfo AF_INET (--type A) walks on.
    expect(names(await run('glibc', 'v6only', conf, { 'v6only.a.svc.cluster.local.': 'V6' }, 'A'))).toHaveLength(4);
  });
});

describe('options and resolv.conf quirks in the walk', () => {
  it('domain and search together: the last line wins (glibc, Go); musl keeps every token of a 2-token domain', async () => {
    const conf = 'search a.example b.example\ndomain c.example d.example\noptions ndots:2\n';
    expect(names(await run('glibc', 'web', conf))).toEqual(['web.c.example.', 'web.']);
    expect(names(await run('go', 'web', conf))).toEqual(['web.c.example.', 'web.']);
    expect(names(await run('musl', 'web', conf))).toEqual(['web.c.example.', 'web.d.example.', 'web.']);
  });
  it('single-request: same queries, one round trip each', async () => {
    const t = await run('glibc', 'web', `${SEARCH}options ndots:5 single-request\n`, { 'web.a.svc.cluster.local.': 'ADDR' });
    expect(qs(t)).toEqual(pair('web.a.svc.cluster.local.'));
    expect(t.roundTrips).toBe(2);
  });
  it('no-aaaa: glibc sends only A', async () => {
    const t = await run('glibc', 'web', `${SEARCH}options ndots:5 no-aaaa\n`, { 'web.svc.cluster.local.': 'ADDR' });
    expect(qs(t)).toEqual(['web.a.svc.cluster.local. A', 'web.svc.cluster.local. A']);
  });
  it('no-tld-query: glibc skips the final bare query for a dot-less name', async () => {
    expect(names(await run('glibc', 'web', `${SEARCH}options no-tld-query\n`))).toEqual([
      'web.a.svc.cluster.local.',
      'web.svc.cluster.local.',
      'web.cluster.local.',
    ]);
  });
  it('a `.` search entry', async () => {
    const conf = 'search a.example . b.example\n';
    // glibc: the bare name at that position, and no final as-is query.
    expect(names(await run('glibc', 'web', conf))).toEqual(['web.a.example.', 'web.', 'web.b.example.']);
    // musl 1.2.3: `web..` is malformed, nothing answers: EAI_AGAIN.
    const m = await run('musl', 'web', conf);
    expect(names(m)).toEqual(['web.a.example.', 'web..']);
    expect(m.queries[2]!.malformed).toBe(true);
    expect(m.result.error).toBe('EAI_AGAIN');
    // Go 1.19: `web..` cannot be packed: skipped without a query.
    expect(names(await run('go', 'web', conf))).toEqual(['web.a.example.', 'web.b.example.', 'web.']);
  });
  it('too-long candidates', async () => {
    const long = `${'l'.repeat(60)}.${'m'.repeat(60)}.${'n'.repeat(60)}.${'o'.repeat(36)}`; // 219 chars
    const conf = `search ok.example ${'s'.repeat(30)}.example short.example\noptions ndots:5\n`;
    const name = 'x'.repeat(10);
    const n = `${name}.${long}`; // 230 chars, 4 dots: name.ok.example fits, name.sss...example (269) does not
    // glibc: the candidate that cannot be encoded ends the search phase; the name as is follows.
    expect(names(await run('glibc', n, conf))).toEqual([`${n}.ok.example.`, `${n}.`]);
    // Go: too-long suffixes are skipped and the walk goes on.
    expect(names(await run('go', n, conf))).toEqual([`${n}.ok.example.`, `${n}.short.example.`, `${n}.`]);
    // musl: a candidate of 256+ characters is skipped; one that does not encode (254-255) ends the lookup.
    expect(names(await run('musl', n, conf))).toEqual([`${n}.ok.example.`, `${n}.short.example.`, `${n}.`]);
  });
  it('nameserver failover: glibc in order (NXDOMAIN final), musl all at once, Go in order', async () => {
    const conf = 'nameserver ns1\nnameserver ns2\nsearch a.example\noptions ndots:1\n'.replace(/ns1/, '10.0.0.1').replace(/ns2/, '10.0.0.2');
    const table: Record<string, Spec> = { 'web.a.example.@10.0.0.1': 'SERVFAIL', 'web.a.example.@10.0.0.2': 'ADDR' };
    const g = await run('glibc', 'web', conf, table);
    expect(g.queries.map((q) => `${q.type}@${q.server}:${q.rcode}`)).toEqual([
      'A@10.0.0.1:SERVFAIL',
      'AAAA@10.0.0.1:SERVFAIL',
      'A@10.0.0.2:NOERROR',
      'AAAA@10.0.0.2:NOERROR',
    ]);
    const m = await run('musl', 'web', conf, table);
    expect(m.queries.slice(0, 4).map((q) => `${q.type}@${q.server}`)).toEqual(['A@10.0.0.1', 'A@10.0.0.2', 'AAAA@10.0.0.1', 'AAAA@10.0.0.2']);
    expect(m.result.status).toBe('ok');
    const go = await run('go', 'web', conf, table);
    expect(go.queries.map((q) => `${q.type}@${q.server}`)).toEqual(['A@10.0.0.1', 'A@10.0.0.2', 'AAAA@10.0.0.1', 'AAAA@10.0.0.2']);
    const nx = await run('glibc', 'web', conf, { 'web.a.example.@10.0.0.2': 'ADDR' });
    expect(nx.queries.every((q) => q.server === '10.0.0.1')).toBe(true);
  });
  it('res_search (--type SRV): glibc and Go walk the search list; musl asks the name once', async () => {
    const conf = `${SEARCH}options ndots:5\n`;
    const table: Record<string, Spec> = { '_http._tcp.web.svc.cluster.local.': 'ADDR' };
    const g = await run('glibc', '_http._tcp.web', conf, table, 'SRV');
    expect(qs(g)).toEqual(['_http._tcp.web.a.svc.cluster.local. SRV', '_http._tcp.web.svc.cluster.local. SRV']);
    expect(g.result.answers).toEqual(['0 100 80 web.example.']);
    expect(names(await run('go', '_http._tcp.web', conf, table, 'SRV'))).toHaveLength(2);
    expect(qs(await run('musl', '_http._tcp.web', conf, table, 'SRV'))).toEqual(['_http._tcp.web. SRV']);
  });
  it('hosts file first; numeric names never reach DNS', async () => {
    const t = await run('glibc', 'db', SEARCH, {}, undefined, '10.1.2.3 db\n');
    expect(t.queries).toEqual([]);
    expect(t.result).toMatchObject({ status: 'ok', answers: ['10.1.2.3'], source: 'hosts' });
    expect((await run('musl', '10.0.0.7', SEARCH)).result).toMatchObject({ status: 'ok', source: 'numeric' });
    // res_search does not read the hosts file.
    expect((await run('glibc', 'db', SEARCH, {}, 'TXT', '10.1.2.3 db\n')).queries.length).toBeGreaterThan(0);
  });
  it('attempts: glibc attempts:0 sends nothing; musl attempts:0 would crash', async () => {
    expect((await run('glibc', 'web', `${SEARCH}options attempts:0\n`)).queries).toEqual([]);
    expect((await run('musl', 'web', `${SEARCH}options attempts:0\n`)).result.status).toBe('CRASH');
  });
});
