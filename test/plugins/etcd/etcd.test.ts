// etcd: CoreDNS's SkyDNS lookups (plugin/etcd/lookup_test.go's table) served from the mirror of
// a real etcd, through the real server with dig; values written the way external-dns writes
// them; bad values skipped with a log line; edits reaching answers through the watch.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { checkObserved, digQuery, type Case } from '../../helpers/clients.js';
import { startEtcd, type EtcdCluster } from '../../helpers/etcd.js';
import { startServer, which, type RunningServer } from '../../helpers/server.js';
import { namePath } from '../../../src/plugins/etcd/path.js';
import { describeNeeding } from '../../helpers/tools.js';
import { pollFor } from '../../helpers/wait.js';

const dig = which('dig');

const SOA = 'skydns.test. 30 IN SOA ns.dns.skydns.test. hostmaster.skydns.test. * 7200 1800 86400 30';

// CoreDNS plugin/etcd/lookup_test.go: the key is written as a DNS name, stored under its path.
const services: [string, Record<string, unknown>][] = [
  ['a.server1.dev.region1.skydns.test.', { host: 'dev.server1', port: 8080 }],
  ['a.server1.prod.region1.skydns.test.', { host: '10.0.0.1', port: 8080 }],
  ['b.server1.prod.region1.skydns.test.', { host: '10.0.0.2', port: 8080 }],
  ['b.server6.prod.region1.skydns.test.', { host: '::1', port: 8080 }],
  ['a.txt.server1.prod.region1.skydns.test.', { text: 'sometext' }],
  ['b.txt.server1.prod.region1.skydns.test.', { text: 'moretext' }],
  ['cname.prod.region1.skydns.test.', { host: 'unresolvable.skydns.test' }],
  ['priority.skydns.test.', { host: 'priority.server1', priority: 333, port: 8080 }],
  ['a.sub.region1.skydns.test.', { host: 'sub.server1', port: 0 }],
  ['b.sub.region1.skydns.test.', { host: 'sub.server2', port: 80 }],
  ['c.sub.region1.skydns.test.', { host: '10.0.0.1', port: 8080 }],
  ['a.targetstrip.skydns.test.', { host: '10.0.0.1', port: 8080, targetstrip: 1 }],
  ['b.cname.skydns.test.', { host: 'a.cname.skydns.test' }],
  ['a.cname.skydns.test.', { host: 'b.cname.skydns.test' }],
  ['a.ns.dns.skydns.test.', { host: '10.0.0.2' }],
  ['b.ns.dns.skydns.test.', { host: '10.0.0.3' }],
  ['ns1.c.ns.dns.skydns.test.', { host: '10.0.0.4', targetstrip: 1 }],
  ['ns2.c.ns.dns.skydns.test.', { host: '10.0.0.5', targetstrip: 1 }],
  ['x.skydns_zonea.test.', { host: '10.0.0.2' }],
  ['y.skydns_zonea.test.', { host: '10.0.0.3' }],
  ['x.skydns_zoneb.test.', { host: '10.0.0.2' }],
  ['y.skydns_zoneb.test.', { host: '10.0.0.3' }],
  ['apex.dns.skydns_zoneb.test.', { host: '10.0.0.4' }],
  ['x.skydns_zonec.test.', { host: '10.0.0.2' }],
  ['y.skydns_zonec.test.', { host: '10.0.0.3' }],
  ['a1.apex.dns.skydns_zonec.test.', { host: '10.0.0.4' }],
  ['a2.apex.dns.skydns_zonec.test.', { host: '10.0.0.5' }],
  ['x.skydns_zoned.test.', { host: '10.0.0.2' }],
  ['y.skydns_zoned.test.', { host: '10.0.0.3' }],
  ['a1.apex.dns.skydns_zoned.test.', { host: '10.0.0.4' }],
  ['a2.apex.dns.skydns_zoned.test.', { host: '10.0.0.5' }],
  ['a3.apex.dns.skydns_zoned.test.', { host: '2003::8:1' }],
  ['a4.apex.dns.skydns_zoned.test.', { host: '2003::8:2' }],
  ['1.0.0.10.in-addr.arpa.', { host: 'reverse.example.com' }],
  // Groups (group_test.go): the shortest key's group wins.
  ['a.dom.skydns.test.', { host: '127.0.0.1', group: 'g1' }],
  ['b.sub.dom.skydns.test.', { host: '127.0.0.2', group: 'g1' }],
  ['c.sub.dom.skydns.test.', { host: '127.0.0.3', group: 'g2' }],
  // other_test.go: MX, TXT, one address under two ports.
  ['a.mail.skydns.test.', { host: 'mx.skydns.test', priority: 50, mail: true }],
  ['b.mail.skydns.test.', { host: 'mx.miek.nl', priority: 50, mail: true }],
  ['a.mx.skydns.test.', { host: 'a.ipaddr.skydns.test', priority: 30, mail: true }],
  ['a.mx2.skydns.test.', { host: 'a.ipaddr.skydns.test', mail: true }],
  ['b.mx2.skydns.test.', { host: 'b.ipaddr.skydns.test', mail: true }],
  ['a.mx3.skydns.test.', { host: 'a.ipaddr.skydns.test', priority: 20, mail: true }],
  ['b.mx3.skydns.test.', { host: 'a.ipaddr.skydns.test', priority: 30, mail: true }],
  ['a.ipaddr.skydns.test.', { host: '172.16.1.1' }],
  ['b.ipaddr.skydns.test.', { host: '172.16.1.2' }],
  ['a1.txt.skydns.test.', { text: 'abc' }],
  ['a2.txt.skydns.test.', { text: 'abc abc' }],
  ['large400.skydns.test.', { text: '0'.repeat(400) }],
  ['http.multiport.http.skydns.test.', { host: '10.11.11.10', port: 80 }],
  ['https.multiport.http.skydns.test.', { host: '10.11.11.10', port: 443 }],
  // A CNAME to a name outside the zones goes through the server (here: hosts).
  ['ext.skydns.test.', { host: 'out.example.org' }],
];

const cases: Case[] = [
  { q: 'a.server1.dev.region1.skydns.test. SRV', rcode: 'NOERROR', answer: ['a.server1.dev.region1.skydns.test. 300 IN SRV 10 100 8080 dev.server1.'] },
  { q: 'a.SERVer1.dEv.region1.skydns.tEst. SRV', rcode: 'NOERROR', answer: ['a.SERVer1.dEv.region1.skydns.tEst. 300 IN SRV 10 100 8080 dev.server1.'] },
  { q: 'doesnotexist.skydns.test. A', rcode: 'NXDOMAIN', authority: [SOA] },
  { q: 'a.server1.prod.region1.skydns.test. A', rcode: 'NOERROR', answer: ['a.server1.prod.region1.skydns.test. 300 IN A 10.0.0.1'] },
  {
    q: 'a.server1.prod.region1.skydns.test. SRV',
    rcode: 'NOERROR',
    answer: ['a.server1.prod.region1.skydns.test. 300 IN SRV 10 100 8080 a.server1.prod.region1.skydns.test.'],
    additional: ['a.server1.prod.region1.skydns.test. 300 IN A 10.0.0.1'],
  },
  { q: 'b.server6.prod.region1.skydns.test. AAAA', rcode: 'NOERROR', answer: ['b.server6.prod.region1.skydns.test. 300 IN AAAA ::1'] },
  {
    q: 'server1.prod.region1.skydns.test. A',
    rcode: 'NOERROR',
    answer: ['server1.prod.region1.skydns.test. 300 IN A 10.0.0.1', 'server1.prod.region1.skydns.test. 300 IN A 10.0.0.2'],
  },
  { q: 'priority.skydns.test. SRV', rcode: 'NOERROR', answer: ['priority.skydns.test. 300 IN SRV 333 100 8080 priority.server1.'] },
  {
    q: 'sub.region1.skydns.test. SRV',
    rcode: 'NOERROR',
    answer: [
      'sub.region1.skydns.test. 300 IN SRV 10 33 0 sub.server1.',
      'sub.region1.skydns.test. 300 IN SRV 10 33 80 sub.server2.',
      'sub.region1.skydns.test. 300 IN SRV 10 33 8080 c.sub.region1.skydns.test.',
    ],
    additional: ['c.sub.region1.skydns.test. 300 IN A 10.0.0.1'],
  },
  {
    q: 'targetstrip.skydns.test. SRV',
    rcode: 'NOERROR',
    answer: ['targetstrip.skydns.test. 300 IN SRV 10 100 8080 targetstrip.skydns.test.'],
    additional: ['targetstrip.skydns.test. 300 IN A 10.0.0.1'],
  },
  { q: 'cname.prod.region1.skydns.test. A', rcode: 'NOERROR', authority: [SOA] },
  {
    q: 'txt.server1.prod.region1.skydns.test. TXT',
    rcode: 'NOERROR',
    answer: ['txt.server1.prod.region1.skydns.test. 300 IN TXT "moretext"', 'txt.server1.prod.region1.skydns.test. 300 IN TXT "sometext"'],
  },
  {
    q: 'prod.*.skydns.test. SRV',
    rcode: 'NOERROR',
    answer: [
      'prod.*.skydns.test. 300 IN SRV 10 25 0 unresolvable.skydns.test.',
      'prod.*.skydns.test. 300 IN SRV 10 25 8080 a.server1.prod.region1.skydns.test.',
      'prod.*.skydns.test. 300 IN SRV 10 25 8080 b.server1.prod.region1.skydns.test.',
      'prod.*.skydns.test. 300 IN SRV 10 25 8080 b.server6.prod.region1.skydns.test.',
    ],
    additional: [
      'a.server1.prod.region1.skydns.test. 300 IN A 10.0.0.1',
      'b.server1.prod.region1.skydns.test. 300 IN A 10.0.0.2',
      'b.server6.prod.region1.skydns.test. 300 IN AAAA ::1',
    ],
  },
  {
    q: 'prod.any.skydns.test. SRV',
    rcode: 'NOERROR',
    answer: [
      'prod.any.skydns.test. 300 IN SRV 10 25 0 unresolvable.skydns.test.',
      'prod.any.skydns.test. 300 IN SRV 10 25 8080 a.server1.prod.region1.skydns.test.',
      'prod.any.skydns.test. 300 IN SRV 10 25 8080 b.server1.prod.region1.skydns.test.',
      'prod.any.skydns.test. 300 IN SRV 10 25 8080 b.server6.prod.region1.skydns.test.',
    ],
    additional: [
      'a.server1.prod.region1.skydns.test. 300 IN A 10.0.0.1',
      'b.server1.prod.region1.skydns.test. 300 IN A 10.0.0.2',
      'b.server6.prod.region1.skydns.test. 300 IN AAAA ::1',
    ],
  },
  { q: 'a.cname.skydns.test. A', rcode: 'NOERROR', authority: [SOA], why: 'CNAME loop' },
  // CoreDNS's unit test runs without a server, so its upstream lookup fails and the row is NODATA;
  // a running CoreDNS asks itself, gets an empty answer, and keeps the CNAME (backend_lookup.go TXT).
  {
    q: 'a.server1.dev.region1.skydns.test. TXT',
    rcode: 'NOERROR',
    answer: ['a.server1.dev.region1.skydns.test. 300 IN CNAME dev.server1.'],
    why: 'outside CNAME kept',
  },
  { q: 'a.server1.dev.region1.skydns.test. HINFO', rcode: 'NOERROR', authority: [SOA], why: 'NODATA' },
  { q: 'a.server1.nonexistent.region1.skydns.test. HINFO', rcode: 'NXDOMAIN', authority: [SOA] },
  { q: 'skydns.test. SOA', rcode: 'NOERROR', answer: [SOA] },
  {
    q: 'skydns.test. NS',
    rcode: 'NOERROR',
    answer: ['skydns.test. 300 IN NS a.ns.dns.skydns.test.', 'skydns.test. 300 IN NS b.ns.dns.skydns.test.', 'skydns.test. 300 IN NS c.ns.dns.skydns.test.'],
    additional: [
      'a.ns.dns.skydns.test. 300 IN A 10.0.0.2',
      'b.ns.dns.skydns.test. 300 IN A 10.0.0.3',
      'c.ns.dns.skydns.test. 300 IN A 10.0.0.4',
      'c.ns.dns.skydns.test. 300 IN A 10.0.0.5',
    ],
  },
  { q: 'a.skydns.test. NS', rcode: 'NXDOMAIN', authority: [SOA] },
  {
    q: 'ns.dns.skydns.test. A',
    rcode: 'NOERROR',
    answer: [
      'ns.dns.skydns.test. 300 IN A 10.0.0.2',
      'ns.dns.skydns.test. 300 IN A 10.0.0.3',
      'ns.dns.skydns.test. 300 IN A 10.0.0.4',
      'ns.dns.skydns.test. 300 IN A 10.0.0.5',
    ],
  },
  {
    q: 'skydns_extra.test. SOA',
    rcode: 'NOERROR',
    answer: ['skydns_extra.test. 30 IN SOA ns.dns.skydns_extra.test. hostmaster.skydns_extra.test. * 7200 1800 86400 30'],
  },
  { q: 'skydns_zonea.test. A', rcode: 'NOERROR', answer: ['skydns_zonea.test. 300 IN A 10.0.0.2', 'skydns_zonea.test. 300 IN A 10.0.0.3'] },
  { q: 'skydns_zoneb.test. A', rcode: 'NOERROR', answer: ['skydns_zoneb.test. 300 IN A 10.0.0.4'] },
  { q: 'skydns_zonec.test. A', rcode: 'NOERROR', answer: ['skydns_zonec.test. 300 IN A 10.0.0.4', 'skydns_zonec.test. 300 IN A 10.0.0.5'] },
  { q: 'skydns_zoned.test. A', rcode: 'NOERROR', answer: ['skydns_zoned.test. 300 IN A 10.0.0.4', 'skydns_zoned.test. 300 IN A 10.0.0.5'] },
  { q: 'skydns_zoned.test. AAAA', rcode: 'NOERROR', answer: ['skydns_zoned.test. 300 IN AAAA 2003::8:1', 'skydns_zoned.test. 300 IN AAAA 2003::8:2'] },
  { q: '1.0.0.10.in-addr.arpa. PTR', rcode: 'NOERROR', answer: ['1.0.0.10.in-addr.arpa. 300 IN PTR reverse.example.com.'] },
  { q: 'dom.skydns.test. A', rcode: 'NOERROR', answer: ['dom.skydns.test. 300 IN A 127.0.0.1', 'dom.skydns.test. 300 IN A 127.0.0.2'], why: 'group g1 wins' },
  { q: 'a.server1.dev.region1.skydns.test. MX', rcode: 'NOERROR', authority: [SOA], why: 'not mail' },
  {
    q: 'a.mail.skydns.test. MX',
    rcode: 'NOERROR',
    answer: ['a.mail.skydns.test. 300 IN MX 50 mx.skydns.test.'],
    additional: ['a.ipaddr.skydns.test. 300 IN A 172.16.1.1', 'mx.skydns.test. 300 IN CNAME a.ipaddr.skydns.test.'],
  },
  {
    q: 'mx2.skydns.test. MX',
    rcode: 'NOERROR',
    answer: ['mx2.skydns.test. 300 IN MX 10 a.ipaddr.skydns.test.', 'mx2.skydns.test. 300 IN MX 10 b.ipaddr.skydns.test.'],
    additional: ['a.ipaddr.skydns.test. 300 IN A 172.16.1.1', 'b.ipaddr.skydns.test. 300 IN A 172.16.1.2'],
  },
  {
    q: 'mx3.skydns.test. MX',
    rcode: 'NOERROR',
    answer: ['mx3.skydns.test. 300 IN MX 20 a.ipaddr.skydns.test.', 'mx3.skydns.test. 300 IN MX 30 a.ipaddr.skydns.test.'],
    additional: ['a.ipaddr.skydns.test. 300 IN A 172.16.1.1'],
  },
  { q: 'a1.txt.skydns.test. TXT', rcode: 'NOERROR', answer: ['a1.txt.skydns.test. 300 IN TXT "abc"'] },
  { q: 'a2.txt.skydns.test. TXT', rcode: 'NOERROR', answer: ['a2.txt.skydns.test. 300 IN TXT "abc abc"'] },
  { q: 'large400.skydns.test. TXT', rcode: 'NOERROR', answer: [`large400.skydns.test. 300 IN TXT "${'0'.repeat(255)}" "${'0'.repeat(145)}"`] },
  { q: 'multiport.http.skydns.test. A', rcode: 'NOERROR', answer: ['multiport.http.skydns.test. 300 IN A 10.11.11.10'], why: 'one address under two ports' },
  {
    q: 'ext.skydns.test. A',
    rcode: 'NOERROR',
    answer: ['ext.skydns.test. 300 IN CNAME out.example.org.', 'out.example.org. 3600 IN A 192.0.2.7'],
    why: 'CNAME out of the zone, resolved by the server',
  },
];

function put(client: Etcd3, name: string, value: Record<string, unknown> | string): Promise<unknown> {
  return client
    .put(namePath(name, 'skydns'))
    .value(typeof value === 'string' ? value : JSON.stringify(value))
    .exec();
}

describeNeeding(['etcd', 'dig'], 'etcd plugin on a real etcd (dig)', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let server: RunningServer;
  let dir: string;

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    for (const [name, value] of services) await put(client, name, value);
    for (let i = 1; i <= 5; i++) await put(client, `r${i}.big.limit.test.`, { host: `10.9.0.${i}` });
    // Bad values: each is skipped with a log line naming its key; the rest keep serving.
    await put(client, 'bad1.skydns.test.', 'not json');
    await put(client, 'bad2.skydns.test.', { host: '10.1.1.1', hots: 'typo' });
    await put(client, 'bad3.skydns.test.', { host: '10.1.1.2', port: '80' });
    await put(client, 'x.bad4.skydns.test.', { host: 10 });
    await put(client, 'y.bad4.skydns.test.', { host: '10.1.1.4' });
    // Leases: the granted TTL, clamped by min/max-lease-ttl, bounds the record's TTL.
    // 20 s: under min-lease-ttl (30 s), so the answer shows the clamp, and long enough to outlive
    // a slow setup on a loaded machine (5 s expired before the query there).
    const short = client.lease(20, { autoKeepAlive: false });
    await short
      .put(namePath('short.lease.skydns.test.', 'skydns'))
      .value(JSON.stringify({ host: '10.2.0.1' }))
      .exec();
    const long = client.lease(7200, { autoKeepAlive: false });
    await long
      .put(namePath('long.lease.skydns.test.', 'skydns'))
      .value(JSON.stringify({ host: '10.2.0.2', ttl: 9000 }))
      .exec();
    await long
      .put(namePath('small.lease.skydns.test.', 'skydns'))
      .value(JSON.stringify({ host: '10.2.0.3', ttl: 40 }))
      .exec();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-plugin-'));
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      `skydns.test skydns_extra.test skydns_zonea.test skydns_zoneb.test skydns_zonec.test skydns_zoned.test in-addr.arpa {
    etcd {
        path /skydns
        endpoint ${etcd.endpoints.join(' ')}
        min-lease-ttl 30
        max-lease-ttl 1h
    }
}
limit.test {
    etcd {
        path /skydns
        endpoint ${etcd.endpoints.join(' ')}
        lookup_limit 3
    }
}
example.org {
    hosts {
        192.0.2.7 out.example.org
    }
}
`,
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const c of cases) {
    it(`${c.q} -> ${c.rcode}${c.why ? ` (${c.why})` : ''}`, async () => {
      const [name, type] = c.q.split(' ') as [string, string];
      checkObserved(await digQuery(dig!, server.port, name, type, false), c);
    });
  }

  it('lookup_limit: a name above more records than the limit answers with the first ones in key order', async () => {
    const o = await digQuery(dig!, server.port, 'big.limit.test.', 'A', false);
    expect(o.answer.sort()).toEqual(['big.limit.test. 300 IN A 10.9.0.1', 'big.limit.test. 300 IN A 10.9.0.2', 'big.limit.test. 300 IN A 10.9.0.3']);
    expect((await digQuery(dig!, server.port, 'r5.big.limit.test.', 'A', false)).answer).toEqual(['r5.big.limit.test. 300 IN A 10.9.0.5']);
  });

  it('skips bad values with a log line naming the key, and serves the rest', async () => {
    for (const q of ['bad1.skydns.test.', 'bad2.skydns.test.', 'bad3.skydns.test.']) {
      expect((await digQuery(dig!, server.port, q, 'A', false)).rcode).toBe('NXDOMAIN');
    }
    expect((await digQuery(dig!, server.port, 'bad4.skydns.test.', 'A', false)).answer).toEqual(['bad4.skydns.test. 300 IN A 10.1.1.4']);
    const warnings = server.logs.filter((l) => l.includes('etcd: skipping'));
    expect(warnings.some((l) => l.includes('/skydns/test/skydns/bad1') && l.includes('not JSON'))).toBe(true);
    expect(warnings.some((l) => l.includes('/skydns/test/skydns/bad2') && l.includes('unknown field \\"hots\\"'))).toBe(true);
    expect(warnings.some((l) => l.includes('/skydns/test/skydns/bad3') && l.includes('\\"port\\" must be an integer'))).toBe(true);
    expect(warnings.some((l) => l.includes('/skydns/test/skydns/bad4/x') && l.includes('\\"host\\" must be a string'))).toBe(true);
    expect(server.proc.exitCode).toBeNull();
  });

  it('clamps lease TTLs to min-lease-ttl and max-lease-ttl, and takes the smaller of lease and record TTL', async () => {
    expect((await digQuery(dig!, server.port, 'short.lease.skydns.test.', 'A', false)).answer).toEqual(['short.lease.skydns.test. 30 IN A 10.2.0.1']);
    expect((await digQuery(dig!, server.port, 'long.lease.skydns.test.', 'A', false)).answer).toEqual(['long.lease.skydns.test. 3600 IN A 10.2.0.2']);
    expect((await digQuery(dig!, server.port, 'small.lease.skydns.test.', 'A', false)).answer).toEqual(['small.lease.skydns.test. 40 IN A 10.2.0.3']);
  });

  it('serves records written the way external-dns writes them (random 8-hex label, targetstrip, owner)', async () => {
    // provider/coredns/coredns.go: Key = prefix + reversed(random8hex + "." + dnsName), TargetStrip = 1.
    await put(client, '1a2b3c4d.web.ext.skydns.test.', { host: '10.3.0.1', ttl: 60, targetstrip: 1, owner: 'default' });
    await put(client, '5e6f7a8b.web.ext.skydns.test.', { host: '10.3.0.2', ttl: 60, targetstrip: 1, owner: 'default' });
    await put(client, '0badf00d.web.ext.skydns.test.', { text: 'heritage=external-dns,external-dns/owner=default', ttl: 60, targetstrip: 1, owner: 'default' });
    await put(client, '12345678.alias.ext.skydns.test.', { host: 'web.ext.skydns.test', ttl: 60, targetstrip: 1, group: 'blue' });
    const a = await pollFor('external-dns records', async () => {
      const o = await digQuery(dig!, server.port, 'web.ext.skydns.test.', 'A', false);
      return o.answer.length === 2 ? o : undefined;
    });
    expect(a.answer.sort()).toEqual(['web.ext.skydns.test. 60 IN A 10.3.0.1', 'web.ext.skydns.test. 60 IN A 10.3.0.2']);
    const srv = await digQuery(dig!, server.port, 'web.ext.skydns.test.', 'SRV', false);
    expect(srv.answer.sort()).toEqual(['web.ext.skydns.test. 60 IN SRV 10 50 0 web.ext.skydns.test.']);
    expect((await digQuery(dig!, server.port, 'web.ext.skydns.test.', 'TXT', false)).answer).toEqual([
      'web.ext.skydns.test. 60 IN TXT "heritage=external-dns,external-dns/owner=default"',
    ]);
    const cname = await digQuery(dig!, server.port, 'alias.ext.skydns.test.', 'A', false);
    expect(cname.answer.sort()).toEqual([
      'alias.ext.skydns.test. 60 IN CNAME web.ext.skydns.test.',
      'web.ext.skydns.test. 60 IN A 10.3.0.1',
      'web.ext.skydns.test. 60 IN A 10.3.0.2',
    ]);
  });

  it('follows edits through the watch, and the SOA serial is the etcd revision', async () => {
    const res = await client
      .put(namePath('live.skydns.test.', 'skydns'))
      .value(JSON.stringify({ host: '10.4.0.1' }))
      .exec();
    const rev = Number(res.header.revision);
    const seen = await pollFor('the edit', async () => {
      const o = await digQuery(dig!, server.port, 'live.skydns.test.', 'A', false);
      return o.answer.length === 1 ? o : undefined;
    });
    expect(seen.answer).toEqual(['live.skydns.test. 300 IN A 10.4.0.1']);
    const soa = await digQuery(dig!, server.port, 'skydns.test.', 'SOA', false);
    expect(soa.answer[0]!.split(' ')[6]).toBe(String(rev));
    await client.delete().key(namePath('live.skydns.test.', 'skydns')).exec();
    await pollFor('the delete', async () => ((await digQuery(dig!, server.port, 'live.skydns.test.', 'A', false)).rcode === 'NXDOMAIN' ? true : undefined));
  });
});
