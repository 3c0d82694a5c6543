// The Corefile kubeadm installs (the built-in default): a cluster name, an external name
// forwarded to a real upstream on loopback, a PTR that falls through to it, and a cached answer
// whose TTL decays. The upstream is another clusterdns serving zone files on 127.0.0.x:53, since
// forward reads nameservers from a resolv.conf and resolv.conf has no ports.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, startServer, stopProcess, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { pollFor } from '../helpers/wait.js';

const root = process.getuid?.() === 0;
if (!root) console.warn('SKIP kubeadm default Corefile test: the upstream must listen on port 53 (resolv.conf has no ports), which needs root');

describe.skipIf(!root)('built-in default Corefile (kubeadm)', () => {
  let dir: string;
  let upstream: RunningServer;
  let server: RunningServer;
  const upstreamIp = `127.0.${1 + (process.pid % 200)}.53`;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-kubeadm-'));
    fs.writeFileSync(
      path.join(dir, 'Upstream.Corefile'),
      `example.org {\n    bind ${upstreamIp}\n    file ${path.join(repoRoot, 'zones/example.org.zone')}\n}\n2.0.192.in-addr.arpa {\n    bind ${upstreamIp}\n    file ${path.join(repoRoot, 'zones/2.0.192.in-addr.arpa.zone')}\n}\n`,
    );
    fs.writeFileSync(path.join(dir, 'resolv.conf'), `nameserver ${upstreamIp}\n`);
    upstream = await startServer(['--conf', path.join(dir, 'Upstream.Corefile'), '--log-queries'], { port: 53 });
    server = await startServer(['--manifests', 'examples/manifests', '--upstream-resolv-conf', path.join(dir, 'resolv.conf')]);
  }, 60000);
  afterAll(async () => {
    // The default Corefile's `health { lameduck 5s }` would hold a SIGTERM stop for 5 s; nothing
    // here checks shutdown (health.test.ts does), so it is killed at once.
    if (server) await stopProcess(server.proc, 0);
    await upstream?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers cluster names itself', async () => {
    const r = await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A');
    expect(r.rcode).toBe('NOERROR');
    expect(r.answers.map((a) => a.data)).toEqual(['10.96.0.1']);
    expect(r.answers[0]!.ttl).toBe(30);
  });

  it('forwards names outside the cluster to the upstream of its resolv.conf', async () => {
    const r = await dnsQuery(server.port, 'www.example.org', 'A');
    expect(r.rcode).toBe('NOERROR');
    expect(r.answers.length).toBeGreaterThan(0);
    expect(upstream.logs.some((l) => l.includes('"name":"www.example.org."'))).toBe(true);
  });

  it('lets a PTR for an address outside the cluster fall through to the upstream', async () => {
    const r = await dnsQuery(server.port, '80.2.0.192.in-addr.arpa', 'PTR');
    expect(r.rcode).toBe('NOERROR');
    expect(r.answers.map((a) => a.data)).toEqual(['web.example.org']);
    const cluster = await dnsQuery(server.port, '10.0.96.10.in-addr.arpa', 'PTR');
    expect(cluster.answers.map((a) => a.data)).toEqual(['kube-dns.kube-system.svc.cluster.local']);
  });

  it('caches forwarded answers (at most 30 s) and the TTL decays', async () => {
    const first = await dnsQuery(server.port, 'mail.example.org', 'A');
    expect(first.answers[0]!.ttl).toBeLessThanOrEqual(30);
    const asked = upstream.logs.filter((l) => l.includes('"name":"mail.example.org."')).length;
    // Real time: ask again (cache hits) until the TTL went down, at most 5 s.
    const second = await pollFor(
      'the cached TTL to go down',
      async () => {
        const r = await dnsQuery(server.port, 'mail.example.org', 'A');
        return r.answers[0]!.ttl !== first.answers[0]!.ttl ? r : undefined;
      },
      5000,
      100,
    );
    expect(second.answers[0]!.ttl).toBeLessThan(first.answers[0]!.ttl);
    expect(upstream.logs.filter((l) => l.includes('"name":"mail.example.org."')).length).toBe(asked);
  });
});
