// coredns_cache_* and coredns_forward_* metrics follow the queries: misses go upstream once,
// hits are counted, and forwarded exchanges are counted per upstream and rcode.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

const value = (text: string, name: string, labels: Record<string, string>): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name + '{') && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);

describe('cache and forward metrics', () => {
  let upstream: RunningServer;
  let server: RunningServer;
  let metricsPort: number;
  beforeAll(async () => {
    upstream = await startServer(['--conf', 'examples/Corefile', '--manifests', 'examples/manifests']);
    metricsPort = await freePort();
    server = await startServer(['--conf', 'test/fixtures/ops/cache-forward.Corefile'], {
      env: { METRICS_PORT: String(metricsPort), UPSTREAM_PORT: String(upstream.port) },
    });
  }, 40000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.stop();
  });

  it('counts cache misses, hits and forwarded exchanges', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A');
      expect(r.answers.map((a) => a.data)).toEqual(['10.96.0.1']);
    }
    const nx = await dnsQuery(server.port, 'nope.default.svc.cluster.local', 'A');
    expect(nx.rcode).toBe('NXDOMAIN');
    await dnsQuery(server.port, 'nope.default.svc.cluster.local', 'A');
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(value(text, 'coredns_cache_requests_total', {})).toBe(5);
    // CoreDNS's zones label: the cache's zones joined by commas.
    expect(value(text, 'coredns_cache_requests_total', { zones: 'cluster.local.,example.org.' })).toBe(5);
    expect(value(text, 'coredns_cache_misses_total', {})).toBe(2);
    expect(value(text, 'coredns_cache_hits_total', { type: 'success' })).toBe(2);
    expect(value(text, 'coredns_cache_hits_total', { type: 'denial' })).toBe(1);
    expect(value(text, 'coredns_cache_entries', { type: 'success' })).toBe(1);
    expect(value(text, 'coredns_cache_entries', { type: 'denial' })).toBe(1);
    const to = `127.0.0.1:${upstream.port}`;
    expect(value(text, 'coredns_forward_requests_total', { to })).toBe(2);
    expect(value(text, 'coredns_forward_responses_total', { to, rcode: 'NOERROR' })).toBe(1);
    expect(value(text, 'coredns_forward_responses_total', { to, rcode: 'NXDOMAIN' })).toBe(1);
  });
});
