// transfer: AXFR/IXFR over TCP through the real server with dig, in CoreDNS's record order, and
// refused to clients outside `to`.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { buildApp } from '../../../src/app.js';
import { canonicalCompare } from '../../../src/dns/canonical.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const fixtures = path.join(repoRoot, 'test/fixtures/transfer');
const manifests = path.join(fixtures, 'manifests');

interface Xfr {
  /** `owner TYPE rdata` per record, TTL and class left out. */
  records: string[];
  failed: boolean;
  messages: number;
}

function digXfr(port: number, args: string[]): Promise<Xfr> {
  return new Promise((resolve, reject) => {
    execFile(dig!, ['@127.0.0.1', '-p', String(port), '+time=5', '+tries=1', '+nocmd', ...args], { timeout: 20000, maxBuffer: 64 << 20 }, (err, stdout) => {
      if (err && !stdout) return reject(err);
      const records: string[] = [];
      for (const line of stdout.split('\n')) {
        if (line.startsWith(';') || line.trim() === '') continue;
        const f = line.split(/\s+/);
        records.push([f[0], f[3], ...f.slice(4)].join(' '));
      }
      const m = /messages (\d+)/.exec(stdout);
      resolve({ records, failed: stdout.includes('Transfer failed'), messages: m ? Number(m[1]) : 0 });
    });
  });
}

describeNeeding(['dig'], 'transfer through the real server (dig)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(fixtures, 'Corefile'), '--manifests', manifests]);
  });
  afterAll(async () => server?.stop());

  it('AXFR of a kubernetes zone: SOA, NS and glue, services by name, SOA', async () => {
    const x = await digXfr(server.port, ['AXFR', 'cluster.local']);
    const soa = x.records[0]!;
    expect(soa).toMatch(/^cluster\.local\. SOA ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 30$/);
    expect(x.records).toEqual([
      soa,
      'cluster.local. NS kube-dns.kube-system.svc.cluster.local.',
      'kube-dns.kube-system.svc.cluster.local. A 10.96.0.2',
      // alpha in ns1, then alpha in ns2 (same name: namespace order)
      'alpha.ns1.svc.cluster.local. A 10.96.0.10',
      'alpha.ns1.svc.cluster.local. SRV 0 100 80 alpha.ns1.svc.cluster.local.',
      '_http._tcp.alpha.ns1.svc.cluster.local. SRV 0 100 80 alpha.ns1.svc.cluster.local.',
      'alpha.ns1.svc.cluster.local. SRV 0 100 8080 alpha.ns1.svc.cluster.local.',
      '_alt._tcp.alpha.ns1.svc.cluster.local. SRV 0 100 8080 alpha.ns1.svc.cluster.local.',
      'alpha.ns2.svc.cluster.local. A 10.96.0.20',
      'alpha.ns2.svc.cluster.local. SRV 0 100 80 alpha.ns2.svc.cluster.local.', // unnamed port: plain SRV only
      // headless: per ready address the service and endpoint names, SRV weight 100/2
      'beta.ns1.svc.cluster.local. A 10.244.0.5',
      'b0.beta.ns1.svc.cluster.local. A 10.244.0.5',
      '_web._tcp.beta.ns1.svc.cluster.local. SRV 0 50 8080 b0.beta.ns1.svc.cluster.local.',
      'beta.ns1.svc.cluster.local. A 10.244.0.6',
      'b1.beta.ns1.svc.cluster.local. A 10.244.0.6',
      '_web._tcp.beta.ns1.svc.cluster.local. SRV 0 50 8080 b1.beta.ns1.svc.cluster.local.',
      'gamma.ns1.svc.cluster.local. CNAME db.example.com.',
      'kube-dns.kube-system.svc.cluster.local. A 10.96.0.2',
      'kube-dns.kube-system.svc.cluster.local. SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.',
      '_dns._udp.kube-dns.kube-system.svc.cluster.local. SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.',
      soa,
    ]);
  });

  it('AXFR of a file zone: SOA, apex NS, then names in canonical order, SOA', async () => {
    const x = await digXfr(server.port, ['AXFR', 'example.org']);
    expect(x.failed).toBe(false);
    const soa = 'example.org. SOA ns1.example.org. hostmaster.example.org. 2024060101 7200 1800 1209600 300';
    expect(x.records[0]).toBe(soa);
    expect(x.records.at(-1)).toBe(soa);
    expect(x.records.slice(1, 4)).toEqual(['example.org. NS ns1.example.org.', 'example.org. NS ns2.example.org.', 'example.org. NS ns.partner.test.']);
    const owners = x.records.slice(4, -1).map((r) => r.split(' ')[0]!);
    expect(owners).toEqual([...owners].sort(canonicalCompare));
    // RFC 4034 order, escapes decoded: the label "has.dot" sorts after "ent" and before "hosts".
    expect(owners.indexOf('has\\.dot.example.org.')).toBeGreaterThan(owners.indexOf('deep.ent.example.org.'));
    expect(owners.indexOf('has\\.dot.example.org.')).toBeLessThan(owners.indexOf('hosts.example.org.'));
    // Everything of the zone is there once: glue and occluded names below the cut too.
    expect(x.records).toContain('hidden.sub.example.org. A 192.0.2.201');
    expect(x.records).toContain('*.wild.example.org. A 192.0.2.99');
    expect(x.records.length).toBe(48);
  });

  it('refuses a client that `to` does not list (example.org allows 127.0.0.1 only)', async () => {
    expect((await digXfr(server.port, ['-b', '127.0.0.2', 'AXFR', 'example.org'])).failed).toBe(true);
    // `to *` lets anyone transfer.
    expect((await digXfr(server.port, ['-b', '127.0.0.2', 'AXFR', 'cluster.local'])).records.length).toBe(21);
  });

  it('IXFR without a journal: the SOA alone for a client at our serial, else the whole zone', async () => {
    const upToDate = await digXfr(server.port, ['IXFR=2024060101', 'example.org']);
    expect(upToDate.records).toEqual(['example.org. SOA ns1.example.org. hostmaster.example.org. 2024060101 7200 1800 1209600 300']);
    const behind = await digXfr(server.port, ['IXFR=2024010101', 'example.org']);
    expect(behind.records.length).toBe(48);
    expect(behind.records[0]).toBe(behind.records.at(-1));
  });

  it('a name below the zone is not a transfer of it (the backend refuses)', async () => {
    expect((await digXfr(server.port, ['AXFR', 'svc.cluster.local'])).failed).toBe(true);
  });
});

describeNeeding(['dig'], 'transfer: refused for every client outside `to`', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(fixtures, 'Corefile.refused'), '--manifests', manifests]);
  });
  afterAll(async () => server?.stop());

  it.each(['cluster.local', 'example.org'])('AXFR %s from 127.0.0.1 is REFUSED', async (zone) => {
    const x = await digXfr(server.port, ['AXFR', zone]);
    expect(x.failed).toBe(true);
    expect(x.records).toEqual([]);
  });
});

describe('transfer in process', () => {
  const conf = path.join(fixtures, 'Corefile.refused');
  it.each([
    ['192.0.2.1', 'NOERROR'],
    ['::ffff:192.0.2.1', 'NOERROR'], // a dual-stack socket's view of an IPv4 client
    ['198.51.100.77', 'NOERROR'], // inside 198.51.100.0/24
    ['198.51.101.1', 'REFUSED'],
    ['127.0.0.1', 'REFUSED'],
  ])('client %s -> %s', async (client, rcode) => {
    const app = await buildApp({ conf, manifests: [manifests] });
    try {
      const r = await ask(app, 'example.org', 'AXFR', { client });
      expect(r.rcode).toBe(rcode);
      if (rcode === 'NOERROR') expect(r.answers![0]!.type).toBe('SOA');
      else expect(r.answers).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('IXFR over UDP is REFUSED; IXFR without the SOA in the authority section is SERVFAIL', async () => {
    const app = await buildApp({ conf: path.join(fixtures, 'Corefile'), manifests: [manifests] });
    try {
      expect((await ask(app, 'example.org', 'IXFR', { protocol: 'udp' })).rcode).toBe('REFUSED');
      expect((await ask(app, 'example.org', 'IXFR', { protocol: 'tcp' })).rcode).toBe('SERVFAIL');
    } finally {
      await app.close();
    }
  });

  it('rejects a transfer block without `to`, and unknown properties, with the line', async () => {
    const base = (body: string): string => `example.org {\n  transfer {\n${body}\n  }\n  file ${path.join(repoRoot, 'zones/example.org.zone')}\n}\n`;
    await expect(buildApp({ corefileText: base('') })).rejects.toThrow(/Corefile:2: transfer: 'to' is required/);
    await expect(buildApp({ corefileText: base('    from 10.0.0.1') })).rejects.toThrow(/Corefile:3: unknown transfer option "from"/);
    await expect(buildApp({ corefileText: base('    to example.com') })).rejects.toThrow(/Corefile:3: transfer to: "example.com" is not/);
  });
});

describeNeeding(['dig'], 'transfer of a zone larger than one TCP message', () => {
  let server: RunningServer;
  let dir: string;
  const N = 1500;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-xfr-'));
    const lines = ['$TTL 300', '@ IN SOA ns hostmaster 1 7200 1800 86400 300', '@ NS ns', 'ns A 192.0.2.53'];
    // ~200-byte TXT records: 501 of them (CoreDNS's batch) need more than 65535 bytes.
    for (let i = 0; i < N; i++) lines.push(`t${i} TXT "${'x'.repeat(200)}"`);
    fs.writeFileSync(path.join(dir, 'big.zone'), lines.join('\n') + '\n');
    fs.writeFileSync(path.join(dir, 'Corefile'), `big.test {\n  bind 127.0.0.1\n  transfer {\n    to *\n  }\n  file big.zone\n}\n`);
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends every record over several messages, SOA first and last', async () => {
    const x = await digXfr(server.port, ['AXFR', 'big.test']);
    expect(x.records.length).toBe(N + 4); // SOA, NS, ns A, N TXT, SOA
    expect(x.records[0]).toMatch(/^big\.test\. SOA /);
    expect(x.records.at(-1)).toBe(x.records[0]);
    expect(new Set(x.records.filter((r) => r.includes(' TXT ')).map((r) => r.split(' ')[0])).size).toBe(N);
    // 501 records a batch; each batch of these TXT records is split once more to fit a frame.
    expect(x.messages).toBeGreaterThanOrEqual(Math.ceil((N + 4) / 501));
    expect(x.messages).toBeGreaterThan(Math.ceil((N + 4) / 501));
  });
});
