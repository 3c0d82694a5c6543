// Hostile etcd data against the etcd plugin's query path, from a
// real etcd through the real server: a CNAME fan-out (45 keys, 4^11 paths) answered at once
// while another client is answered too; a per-query work budget past which only that query
// fails; an answer of more records than a message holds truncated (TC) instead of failing;
// outside CNAME targets asked once per distinct name and at most `query_budget`'s second number
// per query; a host that is no domain name skipped with one warning; TXT escapes as bytes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digQuery } from '../helpers/clients.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { startServer, which, type RunningServer } from '../helpers/server.js';
import { bindUdpTcp, type UdpTcpPair } from '../helpers/sockets.js';
import { describeNeeding } from '../helpers/tools.js';
import { waitUntil } from '../helpers/wait.js';
import { dnsQuery, firstA } from '../cli/udp-query.js';
import { namePath } from '../../src/plugins/etcd/path.js';
import { parseQueryBudget } from '../../src/plugins/etcd/budget.js';
import { parseService } from '../../src/plugins/etcd/msg.js';
import { txtStrings } from '../../src/plugins/etcd/txt.js';

const dig = which('dig');

/** Writes `values` (name -> JSON value) in parallel batches. */
async function putAll(client: Etcd3, values: [string, unknown][]): Promise<void> {
  for (let i = 0; i < values.length; i += 400) {
    await Promise.all(values.slice(i, i + 400).map(([k, v]) => client.put(k).value(JSON.stringify(v)).exec()));
  }
}

/** l0..l10 each with 4 entries pointing at the next name, l11 an address: 45 keys, 4^11 CNAME paths. */
function fanOut(zone: string): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (let i = 0; i <= 10; i++) {
    for (const e of ['a', 'b', 'c', 'd']) out.push([`${namePath(`l${i}.${zone}`, 'skydns')}/${e}`, { host: `l${i + 1}.${zone}` }]);
  }
  out.push([namePath(`l11.${zone}`, 'skydns'), { host: '10.9.9.9' }]);
  return out;
}

describeNeeding(['etcd', 'dig'], 'etcd queries over hostile data', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let server: RunningServer;
  let upstream: UdpTcpPair;
  const upstreamAsked: string[] = [];
  let dir: string;

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    // An upstream for names outside the etcd zones that counts what it is asked.
    upstream = await bindUdpTcp();
    upstream.udp.on('message', (msg, rinfo) => {
      const q = dnsPacket.decode(msg);
      const question = q.questions![0]!;
      upstreamAsked.push(`${question.name.toLowerCase()} ${question.type}`);
      const answers = question.type === 'A' ? [{ name: question.name, type: 'A' as const, ttl: 60, data: '192.0.2.1' }] : [];
      upstream.udp.send(
        dnsPacket.encode({ id: q.id, type: 'response', flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: q.questions, answers }),
        rinfo.port,
        rinfo.address,
      );
    });
    const wide: [string, unknown][] = [];
    // 3 names of 1,400 addresses each, each reached by 16 CNAMEs: 67k records along all paths,
    // 4,203 once each (more than 64 KiB still).
    for (const t of ['n1', 'n2', 'n3']) {
      for (let i = 0; i < 1400; i++) wide.push([`${namePath(`${t}.wide.test.`, 'skydns')}/${i}`, { host: `10.${t.slice(1)}.${i >> 8}.${i & 255}` }]);
      for (let j = 0; j < 16; j++) wide.push([`${namePath('w.wide.test.', 'skydns')}/${t}-${j}`, { host: `${t}.wide.test` }]);
    }
    await putAll(client, [
      ...fanOut('fan.test.'),
      [namePath('ok.fan.test.', 'skydns'), { host: '10.1.0.1' }],
      ...fanOut('tight.test.'),
      [namePath('ok.tight.test.', 'skydns'), { host: '10.1.0.2' }],
      // Outside targets: one name in three spellings, and three distinct names.
      ...['OUT.example.org', 'out.example.org', 'Out.Example.Org'].map((h, i): [string, unknown] => [
        `${namePath('same.fan.test.', 'skydns')}/${i}`,
        { host: h },
      ]),
      ...['o1', 'o2', 'o3'].map((h): [string, unknown] => [`${namePath('many.tight.test.', 'skydns')}/${h}`, { host: `${h}.example.org` }]),
      ...wide,
      // A host that is no domain name, next to a good one; an SRV target made from a bad key.
      [`${namePath('a.bad.test.', 'skydns')}/x`, { host: 'a..b' }],
      [`${namePath('a.bad.test.', 'skydns')}/y`, { host: '10.0.0.1' }],
      [`${namePath('srv.bad.test.', 'skydns')}//z`, { host: '10.0.0.3', port: 80 }],
      [`${namePath('srv.bad.test.', 'skydns')}/ok`, { host: '10.0.0.4', port: 80 }],
      // TXT: the octet 0xFF and one backslash, written as CoreDNS reads them; 255 octets.
      [namePath('bytes.fan.test.', 'skydns'), { text: 'a\\255b\\\\c' }],
      [namePath('long.fan.test.', 'skydns'), { text: 'z'.repeat(255) }],
    ]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-query-'));
    const corefile = path.join(dir, 'Corefile');
    const ep = etcd.endpoints[0]!;
    fs.writeFileSync(
      corefile,
      [
        `fan.test wide.test bad.test {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${ep}\n    }\n}`,
        `tight.test {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${ep}\n        query_budget 100 2\n    }\n}`,
        `example.org {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${upstream.port}\n}`,
      ].join('\n'),
    );
    server = await startServer(['--conf', corefile]);
    await waitUntil('the first read of etcd', async () => (await firstA(server.port, 'ok.fan.test.')) === '10.1.0.1', 10_000);
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    await upstream?.close();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a 45-key CNAME fan-out at once, and another client meanwhile', async () => {
    const other = (async () => {
      const seen: string[] = [];
      for (let i = 0; i < 10; i++) seen.push((await dnsQuery(server.port, 'ok.fan.test.', 'A', 2000)).rcode);
      return seen;
    })();
    const started = Date.now();
    const r = await digQuery(dig!, server.port, 'l0.fan.test.', 'A', false);
    // Before: 4^11 lookups, the whole server stalled for about half a minute.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.rcode).toBe('NOERROR');
    expect(r.answer).toHaveLength(12);
    expect(r.answer[0]).toBe('l0.fan.test. 300 IN CNAME l1.fan.test.');
    expect(r.answer[11]).toBe('l11.fan.test. 300 IN A 10.9.9.9');
    expect(await other).toEqual(Array(10).fill('NOERROR'));
  });

  it('past query_budget, only that query answers SERVFAIL, with one warning', async () => {
    const r = await digQuery(dig!, server.port, 'l0.tight.test.', 'A', false);
    expect(r.rcode).toBe('SERVFAIL');
    expect((await digQuery(dig!, server.port, 'l0.tight.test.', 'A', false)).rcode).toBe('SERVFAIL');
    expect((await digQuery(dig!, server.port, 'ok.tight.test.', 'A', false)).answer).toEqual(['ok.tight.test. 300 IN A 10.1.0.2']);
    // A name deep in the chain needs less work and still answers.
    expect((await digQuery(dig!, server.port, 'l10.tight.test.', 'A', false)).answer).toHaveLength(2);
    const warnings = server.logs.filter((l) => l.includes('l0.tight.test.') && l.includes('query_budget'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toContain('"stack"');
  });

  it('truncates an answer of more records than a message holds (TC), over UDP and TCP', async () => {
    // Before: 67k records, "ANCOUNT out of range" and SERVFAIL on every transport.
    const udp = await digQuery(dig!, server.port, 'w.wide.test.', 'A', false);
    expect(udp.rcode).toBe('NOERROR');
    expect(udp.flags).toContain('tc');
    const tcp = await digQuery(dig!, server.port, 'w.wide.test.', 'A', true);
    expect(tcp.rcode).toBe('NOERROR');
    expect(tcp.flags).toContain('tc');
    expect(tcp.answer.length).toBeGreaterThan(3000);
    // Each record once: the CNAME from w to n1 (not 16 copies), then its addresses.
    expect(tcp.answer.slice(0, 2)).toEqual(['w.wide.test. 300 IN CNAME n1.wide.test.', 'n1.wide.test. 300 IN A 10.1.0.0']);
    expect(new Set(tcp.answer).size).toBe(tcp.answer.length);
    expect((await digQuery(dig!, server.port, 'ok.fan.test.', 'A', false)).rcode).toBe('NOERROR');
  });

  it("asks the server once per distinct outside name, and at most query_budget's second number", async () => {
    upstreamAsked.length = 0;
    const r = await digQuery(dig!, server.port, 'same.fan.test.', 'A', false);
    expect(r.rcode).toBe('NOERROR');
    expect(r.answer.filter((a) => a.includes(' A 192.0.2.1'))).toHaveLength(1);
    // Before: one upstream query per spelling (3).
    expect(upstreamAsked).toEqual(['out.example.org A']);
    upstreamAsked.length = 0;
    // Three distinct outside names against a limit of 2: SERVFAIL, nothing asked.
    expect((await digQuery(dig!, server.port, 'many.tight.test.', 'A', false)).rcode).toBe('SERVFAIL');
    expect(upstreamAsked).toEqual([]);
  });

  it('skips a host that is no domain name (one warning naming the key), keeping the names above it', async () => {
    for (let i = 0; i < 3; i++) {
      // Before: SERVFAIL with a stack trace logged on every query.
      expect((await digQuery(dig!, server.port, 'a.bad.test.', 'A', false)).answer).toEqual(['a.bad.test. 300 IN A 10.0.0.1']);
      expect((await digQuery(dig!, server.port, 'bad.test.', 'A', false)).rcode).toBe('NOERROR');
      expect((await digQuery(dig!, server.port, 'x.a.bad.test.', 'A', false)).rcode).toBe('NXDOMAIN');
    }
    const key = `${namePath('a.bad.test.', 'skydns')}/x`;
    const lines = server.logs.filter((l) => l.includes(key));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('neither an IP address nor a domain name');
    expect(server.logs.some((l) => l.includes('"stack"'))).toBe(false);
    // A target made from a key with an empty segment: that entry is left out, with one warning.
    const srv = await digQuery(dig!, server.port, 'srv.bad.test.', 'SRV', false);
    expect(srv.answer).toEqual(['srv.bad.test. 300 IN SRV 10 50 80 ok.srv.bad.test.']);
    expect((await digQuery(dig!, server.port, 'srv.bad.test.', 'SRV', false)).rcode).toBe('NOERROR');
    expect(server.logs.filter((l) => l.includes('rename the key'))).toHaveLength(1);
  });

  it('carries TXT escapes as octets, split as CoreDNS splits them', async () => {
    // {"text":"a\\255b\\\\c"}: a, 0xFF, b, a backslash, c (before: the escapes sent as text).
    expect((await digQuery(dig!, server.port, 'bytes.fan.test.', 'TXT', false)).answer).toEqual(['bytes.fan.test. 300 IN TXT "a\\255b\\\\c"']);
    expect((await digQuery(dig!, server.port, 'long.fan.test.', 'TXT', false)).answer).toEqual([`long.fan.test. 300 IN TXT "${'z'.repeat(255)}" ""`]);
  });
});

describe('etcd value edges, in process', () => {
  it('reads TXT escapes as miekg/dns packs them, after splitting as CoreDNS splits', () => {
    const hex = (text: string): string[] => txtStrings(text).map((b) => b.toString('hex'));
    expect(hex('a\\255b\\\\c')).toEqual([Buffer.from([0x61, 0xff, 0x62, 0x5c, 0x63]).toString('hex')]);
    // \999 wraps modulo 256 (Go byte arithmetic); \X is X; a trailing backslash is dropped.
    expect(hex('\\999\\q\\')).toEqual([Buffer.from([999 & 0xff, 0x71]).toString('hex')]);
    // A multiple of 255 octets ends with an empty string; an escape cut by the split is not one.
    expect(txtStrings('z'.repeat(510)).map((b) => b.length)).toEqual([255, 255, 0]);
    expect(txtStrings(`${'x'.repeat(253)}\\255y`).map((b) => b.toString('latin1'))).toEqual([`${'x'.repeat(253)}2`, '55y']);
    // Non-ASCII text is its UTF-8 octets.
    expect(hex('é')).toEqual(['c3a9']);
  });

  it('refuses a host that is no domain name, and a bad query_budget line', () => {
    expect(parseService('{"host":"a..b"}')).toMatch(/neither an IP address nor a domain name/);
    expect(parseService(JSON.stringify({ host: `${'l'.repeat(64)}.example.org` }))).toMatch(/label too long/);
    expect(parseService('{"host":"svc.example.org."}')).toMatchObject({ host: 'svc.example.org.' });
    expect(parseService('{"host":"::ffff:10.0.0.1"}')).toMatchObject({ host: '::ffff:10.0.0.1' });
    expect(parseQueryBudget(['5000'])).toEqual({ work: 5000, outside: 16 });
    expect(parseQueryBudget(['5000', '4'])).toEqual({ work: 5000, outside: 4 });
    for (const bad of [[], ['0'], ['x'], ['10', '0'], ['1', '2', '3']]) expect(parseQueryBudget(bad)).toMatch(/query_budget needs/);
  });
});
