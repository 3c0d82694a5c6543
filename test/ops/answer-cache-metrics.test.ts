// clusterdns_answer_cache_* follow the server's own answer cache: a repeated question is a hit,
// each distinct answer an entry, and a reload (SIGHUP: new handlers, an empty cache) does not
// send the counters back.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsQuery } from '../cli/udp-query.js';
import { freePort, repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';

const value = (text: string, name: string, labels: Record<string, string>): number | undefined => {
  const lines = text.split('\n').filter((l) => l.startsWith(name + '{') && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return lines.length === 0 ? undefined : lines.reduce((n, l) => n + Number(l.split(' ').pop()), 0);
};

describe('answer cache metrics', () => {
  let dir: string;
  let server: RunningServer;
  let metricsPort: number;
  let labels: Record<string, string>;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-answer-cache-metrics-'));
    metricsPort = await freePort();
    const conf = path.join(dir, 'Corefile');
    fs.writeFileSync(
      conf,
      `cluster.local {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metricsPort}\n    kubernetes {\n        manifests ${path.join(repoRoot, 'examples/manifests')}\n    }\n}\n`,
    );
    server = await startServer(['--conf', conf]);
    labels = { server: `dns://127.0.0.1:${server.port}` };
  }, 30000);
  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();

  it('counts hits and entries per listener', async () => {
    for (let i = 0; i < 3; i++) expect((await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A')).rcode).toBe('NOERROR');
    expect((await dnsQuery(server.port, 'nope.default.svc.cluster.local', 'A')).rcode).toBe('NXDOMAIN');
    const text = await scrape();
    expect(value(text, 'clusterdns_answer_cache_hits_total', labels)).toBe(2);
    expect(value(text, 'clusterdns_answer_cache_entries', labels)).toBe(2);
    expect(value(text, 'clusterdns_answer_cache_bytes', labels)).toBeGreaterThan(0);
    expect(value(text, 'clusterdns_answer_cache_evictions_total', labels)).toBe(0);
  });

  it('keeps the counters across a reload, which starts an empty cache', async () => {
    server.proc.kill('SIGHUP');
    await waitUntil('reloaded', () => server.logs.some((l) => l.includes('configuration reloaded')), 10000, 20);
    let text = await scrape();
    expect(value(text, 'clusterdns_answer_cache_hits_total', labels)).toBe(2);
    expect(value(text, 'clusterdns_answer_cache_entries', labels)).toBe(0);
    for (let i = 0; i < 2; i++) await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A');
    text = await scrape();
    expect(value(text, 'clusterdns_answer_cache_hits_total', labels)).toBe(3);
    expect(value(text, 'clusterdns_answer_cache_entries', labels)).toBe(1);
  });
});
