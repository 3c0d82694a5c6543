// A DNSEndpoint with 70,000 targets made every query for its name SERVFAIL
// (an answer of more than 65,535 records cannot be encoded), with a stack trace, uncached, so 10
// queries a second kept the server busy. k8s_gateway now merges a name's targets once per load
// and an answer carries at most `maxRecords` of them (default 1000): over UDP the reply is
// truncated as any large one, over TCP it holds the first 1000, and it is cached.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../helpers/clients.js';
import { freePort, startServer, which, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { steadyLoad } from './edge-load.js';
import { waitUntil } from '../helpers/wait.js';

const TARGETS = 70_000;
const dig = which('dig');

function dnsEndpoint(name: string, dnsName: string, targets: number): object {
  const ips = Array.from({ length: targets }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  return {
    apiVersion: 'externaldns.k8s.io/v1alpha1',
    kind: 'DNSEndpoint',
    metadata: { name, namespace: 'default' },
    spec: { endpoints: [{ dnsName, recordType: 'A', targets: ips }] },
  };
}

const metric = (text: string, name: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);

describeNeeding(['dig'], 'k8s_gateway answers for a name with 70,000 targets', () => {
  let dir: string;
  let server: RunningServer;
  let metricsPort: number;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'edge-records-'));
    const manifests = path.join(dir, 'endpoints.json');
    writeFileSync(
      manifests,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [dnsEndpoint('huge', 'huge.example.com', TARGETS), dnsEndpoint('small', 'small.example.com', 2), dnsEndpoint('capped', 'huge.example.net', 50)],
      }),
    );
    metricsPort = await freePort();
    const corefile = path.join(dir, 'Corefile');
    writeFileSync(
      corefile,
      `example.com {\n  bind 127.0.0.1\n  prometheus 127.0.0.1:${metricsPort}\n  k8s_gateway {\n    resources DNSEndpoint\n    manifests endpoints.json\n  }\n}\n` +
        `example.net {\n  bind 127.0.0.1\n  k8s_gateway {\n    resources DNSEndpoint\n    manifests endpoints.json\n    maxRecords 10\n  }\n}\n`,
    );
    server = await startServer(['--conf', corefile], { timeoutMs: 30_000 });
  }, 40_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('over TCP: the first 1000 addresses, NOERROR', async () => {
    const obs = await digQuery(dig!, server.port, 'huge.example.com', 'A', true);
    expect(obs.rcode).toBe('NOERROR');
    const a = obs.answer.filter((l) => / IN A /.test(l));
    expect(a).toHaveLength(1000);
    expect(a[0]).toMatch(/ 10\.0\.0\.0$/);
  });

  it('over UDP: truncated as a large answer, then served from the cache; the server answers others meanwhile', async () => {
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const hitsBefore = metric(await scrape(), 'clusterdns_answer_cache_hits_total');
    // 50 queries a second for the big name, and a small name beside it.
    const big = steadyLoad(server.port, ['huge.example.com'], { qps: 50, max: 50 });
    const small = steadyLoad(server.port, ['small.example.com'], { qps: 50, max: 50 });
    await waitUntil('both loads to send their 50 queries', () => big.sent() === 50 && small.sent() === 50, 5000);
    const [b, s] = [await big.stop(), await small.stop()];
    expect(b.lost).toBe(0);
    expect(b.rcodes).toEqual({ 0: 50 });
    expect(b.truncated).toBe(50);
    expect(s.lost).toBe(0);
    expect(s.rcodes).toEqual({ 0: 50 });
    expect(s.maxMs).toBeLessThan(1000);
    expect(metric(await scrape(), 'clusterdns_answer_cache_hits_total') - hitsBefore).toBeGreaterThanOrEqual(90);
    // One warning per block at load names the names and the option; no error was logged for a query.
    expect(server.logs.filter((l) => l.includes('raise maxRecords'))).toHaveLength(2);
    expect(server.logs.filter((l) => l.includes('"level":50'))).toEqual([]);
  });

  it('maxRecords in the block sets the cap', async () => {
    const obs = await digQuery(dig!, server.port, 'huge.example.net', 'A', true);
    expect(obs.rcode).toBe('NOERROR');
    expect(obs.answer.filter((l) => / IN A /.test(l))).toHaveLength(10);
  });
});
