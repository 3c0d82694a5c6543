// prometheus: /metrics from the real server, counters checked against the exact queries sent.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../../src/app.js';
import { freePort, repoRoot, startServer, which } from '../../helpers/server.js';
import { parseMetrics, startOps, tcpQuery, total, udpQuery, type Exchange, type OpsServer } from '../../fixtures/ops/client.js';
import { missingTools, skipOrFailInCI } from '../../helpers/tools.js';

const dig = which('dig');
// Off CI the PTR query through dig (and its counters) is left out when dig is missing.
skipOrFailInCI(missingTools('dig'), 'prometheus: the PTR query sent with dig');

describe('prometheus through the real server', () => {
  let srv: OpsServer;
  let m: Map<string, number>;
  let text: string;
  const sent: { ex: Exchange; proto: 'udp' | 'tcp' }[] = [];
  let server: string;

  beforeAll(async () => {
    srv = await startOps();
    server = `dns://127.0.0.1:${srv.port}`;
    const u = async (name: string, type: string, opts: { do?: boolean } = {}) => sent.push({ ex: await udpQuery(srv.port, name, type, opts), proto: 'udp' });
    for (let i = 0; i < 3; i++) await u('kubernetes.default.svc.cluster.local', 'A'); // 2nd and 3rd: answer cache
    await u('kubernetes.default.svc.cluster.local', 'AAAA');
    await u('nope.default.svc.cluster.local', 'A');
    await u('nope.default.svc.cluster.local', 'A');
    await u('dns-version.cluster.local', 'TXT', { do: true });
    await u('kubernetes.default.svc.cluster.local', 'NAPTR'); // not a monitored type: "other"
    sent.push({ ex: await tcpQuery(srv.port, '_https._tcp.kubernetes.default.svc.cluster.local', 'SRV'), proto: 'tcp' });
    await u('example.com', 'A'); // outside every zone: REFUSED, zone "dropped"
    await u('x.example.test', 'A'); // second block, nothing answers: SERVFAIL
    if (dig) execFileSync(dig, ['@127.0.0.1', '-p', String(srv.port), '+time=3', '+tries=1', '-x', '10.96.0.1']);
    const res = await fetch(srv.url(srv.metricsPort, '/metrics'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    text = await res.text();
    m = parseMetrics(text);
  }, 30000);
  afterAll(async () => srv?.stop());

  const clusterUdp = () => sent.filter((s) => s.proto === 'udp' && s.ex.query.toString('latin1').includes('cluster'));

  it('counts requests by zone, protocol, family and type', () => {
    const req = (labels: Record<string, string>) => total(m, 'coredns_dns_requests_total', { server, view: '', family: '1', ...labels });
    expect(req({ zone: 'cluster.local.', proto: 'udp', type: 'A' })).toBe(5);
    expect(req({ zone: 'cluster.local.', proto: 'udp', type: 'AAAA' })).toBe(1);
    expect(req({ zone: 'cluster.local.', proto: 'udp', type: 'TXT' })).toBe(1);
    expect(req({ zone: 'cluster.local.', proto: 'udp', type: 'other' })).toBe(1);
    expect(req({ zone: 'cluster.local.', proto: 'tcp', type: 'SRV' })).toBe(1);
    expect(req({ zone: 'dropped', proto: 'udp', type: 'A' })).toBe(1);
    expect(req({ zone: 'example.test.', proto: 'udp', type: 'A' })).toBe(1);
    if (dig) expect(req({ zone: '96.10.in-addr.arpa.', proto: 'udp', type: 'PTR' })).toBe(1);
    expect(total(m, 'coredns_dns_requests_total')).toBe(11 + (dig ? 1 : 0));
  });

  it('counts responses by rcode', () => {
    const resp = (zone: string, rcode: string) => total(m, 'coredns_dns_responses_total', { server, zone, view: '', rcode });
    expect(resp('cluster.local.', 'NOERROR')).toBe(7);
    expect(resp('cluster.local.', 'NXDOMAIN')).toBe(2);
    expect(resp('dropped', 'REFUSED')).toBe(1);
    expect(resp('example.test.', 'SERVFAIL')).toBe(1);
    if (dig) expect(resp('96.10.in-addr.arpa.', 'NOERROR')).toBe(1);
    // Queries that never reach a chain are the server's: no plugin.
    expect(m.get(`coredns_dns_responses_total{plugin=,rcode=REFUSED,server=${server},view=,zone=dropped}`)).toBe(1);
    // The plugin that wrote each answer, as CoreDNS labels it (answers from the answer cache too).
    expect(total(m, 'coredns_dns_responses_total', { server, zone: 'cluster.local.', plugin: 'kubernetes' })).toBe(9);
  });

  it('counts DO queries', () => {
    expect(total(m, 'coredns_dns_do_requests_total', { server, zone: 'cluster.local.', view: '' })).toBe(1);
    expect(total(m, 'coredns_dns_do_requests_total')).toBe(1);
  });

  it('records request and response sizes byte for byte', () => {
    const udp = clusterUdp();
    const tcp = sent.filter((s) => s.proto === 'tcp');
    const labels = (proto: string) => ({ server, zone: 'cluster.local.', view: '', proto });
    expect(total(m, 'coredns_dns_request_size_bytes_count', labels('udp'))).toBe(udp.length);
    expect(total(m, 'coredns_dns_request_size_bytes_sum', labels('udp'))).toBe(udp.reduce((n, s) => n + s.ex.query.length, 0));
    expect(total(m, 'coredns_dns_response_size_bytes_sum', labels('udp'))).toBe(udp.reduce((n, s) => n + s.ex.reply.length, 0));
    expect(total(m, 'coredns_dns_request_size_bytes_sum', labels('tcp'))).toBe(tcp[0]!.ex.query.length);
    expect(total(m, 'coredns_dns_response_size_bytes_sum', labels('tcp'))).toBe(tcp[0]!.ex.reply.length);
    // CoreDNS's size buckets.
    expect(text).toContain(`coredns_dns_request_size_bytes_bucket{le="511",server="${server}",zone="cluster.local.",view="",proto="udp"} ${udp.length}`);
    expect(text).toMatch(/coredns_dns_response_size_bytes_bucket\{le="8291",/);
  });

  it('records durations in CoreDNS buckets', () => {
    const labels = { server, zone: 'cluster.local.', view: '' };
    expect(total(m, 'coredns_dns_request_duration_seconds_count', labels)).toBe(9);
    expect(total(m, 'coredns_dns_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    expect(total(m, 'coredns_dns_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(9);
    for (const le of ['0.00025', '0.0005', '0.001', '0.002', '1.024', '8.192']) {
      expect(m.has(`coredns_dns_request_duration_seconds_bucket{le=${le},server=${server},view=,zone=cluster.local.}`), le).toBe(true);
    }
  });

  it('lists the enabled plugins per server and zone, as CoreDNS (not health, ready, bind)', () => {
    const names = (zone: string) =>
      [...m.keys()]
        .filter((k) => k.startsWith('coredns_plugin_enabled{') && k.includes(`zone=${zone}}`) && k.includes(`server=${server}`))
        .map((k) => /name=([^,}]+)/.exec(k)![1])
        .sort();
    expect(names('cluster.local.')).toEqual(['errors', 'kubernetes', 'log', 'prometheus']);
    expect(names('example.test.')).toEqual(['log', 'prometheus']);
  });

  it('exports build info, panics, reload failures and the process metrics', () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    expect(m.get(`coredns_build_info{goversion=${process.version},revision=,version=${version}}`)).toBe(1);
    expect(m.get('coredns_panics_total{}')).toBe(0);
    expect(m.get('coredns_reload_failed_total{}')).toBe(0);
    expect(m.get('process_resident_memory_bytes{}')).toBeGreaterThan(0);
    // The metrics other plugins record are declared with their HELP and TYPE even before use.
    for (const name of [
      'coredns_cache_hits_total',
      'coredns_cache_entries',
      'coredns_proxy_request_duration_seconds',
      'coredns_forward_requests_total',
      'clusterdns_load_errors_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it('answers 404 off /metrics', async () => {
    expect((await fetch(srv.url(srv.metricsPort, '/other'))).status).toBe(404);
  });
});

describe('coredns_reload_version_info', () => {
  it('labels the serving Corefile by its SHA-512 when the reload plugin runs, as CoreDNS', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'reload-version-'));
    const [dns, metrics] = [await freePort(), await freePort()];
    const corefile = path.join(dir, 'Corefile');
    writeFileSync(corefile, `example.test:${dns} {\n  bind 127.0.0.1\n  reload 10s\n  prometheus 127.0.0.1:${metrics}\n}\n`);
    const srv = await startServer(['--conf', corefile], { port: dns });
    try {
      const m = parseMetrics(await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text());
      const sum = createHash('sha512').update(readFileSync(corefile)).digest('hex');
      expect([...m].filter(([k]) => k.startsWith('coredns_reload_version_info{'))).toEqual([[`coredns_reload_version_info{hash=sha512,value=${sum}}`, 1]]);
    } finally {
      await srv.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20000);
});

describe('prometheus setup', () => {
  it('rejects an address without a port', async () => {
    await expect(buildApp({ corefileText: 'example.test {\n  prometheus localhost\n}\n' })).rejects.toThrow(/Corefile:2: prometheus: "localhost" has no port/);
  });
  it('rejects options it does not implement', async () => {
    await expect(buildApp({ corefileText: 'example.test {\n  prometheus :9153 {\n    tls web.yml\n  }\n}\n' })).rejects.toThrow(
      /Corefile:3: prometheus tls is not supported/,
    );
  });
  it('allows one prometheus per server block', async () => {
    await expect(buildApp({ corefileText: 'example.test {\n  prometheus :9153\n  prometheus :9154\n}\n' })).rejects.toThrow(/appears twice/);
  });
});
