// --workers: several processes answer on one port, metrics add up across them, and the primary
// replaces a worker that dies.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { decodeReply, type Reply } from '../helpers/decode.js';
import { pollFor, waitForLines, waitUntil } from '../helpers/wait.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

function tcpQuery(port: number, name: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('TCP query timed out'));
    }, 3000);
    const q = dnsPacket.encode({ id: 9, type: 'query', questions: [{ name, type: 'A', class: 'IN' }] });
    const frame = Buffer.alloc(q.length + 2);
    frame.writeUInt16BE(q.length, 0);
    q.copy(frame, 2);
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= buf.readUInt16BE(0) + 2) {
        clearTimeout(timer);
        sock.end();
        resolve(decodeReply(buf.subarray(2)));
      }
    });
    sock.on('error', reject);
    sock.write(frame);
  });
}

const children = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);

describe('serve --workers 2', () => {
  let server: RunningServer;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    server = await startServer(['--manifests', 'examples/manifests', '--workers', '2', '--log-queries', '--conf', 'test/fixtures/ops/workers.Corefile'], {
      env: { METRICS_PORT: String(metricsPort) },
    });
    // Both workers up before measuring.
    await waitForLines(server.logs, '"clusterdns ready"', 'both workers ready', { count: 2, timeoutMs: 15000, everyMs: 100 });
  }, 40000);
  afterAll(async () => server?.stop());

  it('answers from two worker processes on one port', async () => {
    expect(children(server.proc.pid!)).toHaveLength(2);
    for (let i = 0; i < 20; i++) {
      const r = await tcpQuery(server.port, 'kubernetes.default.svc.cluster.local');
      expect(r.answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
    }
    // The query log lines arrive through the primary's stdout shortly after the answers.
    const workers = (): Set<number | undefined> =>
      new Set(server.logs.filter((l) => l.includes('"msg":"query"')).map((l) => (JSON.parse(l) as { worker?: number }).worker));
    await waitUntil('query logs from both workers', () => workers().size >= 2, 2000).catch(() => undefined);
    expect(workers().size).toBe(2);
  });

  it('aggregates metrics across workers', async () => {
    for (let i = 0; i < 10; i++) await dnsQuery(server.port, 'kube-dns.kube-system.svc.cluster.local', 'A');
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    const text = await res.text();
    const total = text
      .split('\n')
      .filter((l) => l.startsWith('coredns_dns_requests_total{') && l.includes('type="A"'))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    // 20 TCP queries above plus these 10, whichever worker took them.
    expect(total).toBe(30);
  });

  it('replaces a worker that dies and keeps answering', async () => {
    const [victim] = children(server.proc.pid!);
    process.kill(victim!, 'SIGKILL');
    const now = await pollFor(
      'a new worker in place of the killed one',
      () => {
        const pids = children(server.proc.pid!);
        return pids.length === 2 && !pids.includes(victim!) ? pids : undefined;
      },
      10000,
      100,
    );
    expect(now).toHaveLength(2);
    expect(now).not.toContain(victim);
    const r = await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A');
    expect(r.rcode).toBe('NOERROR');
  });
});

describe('serve --workers 3: manifest loads take turns', () => {
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    // A copy of the example manifests, touched below so the reload loads them again.
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-worker-loads-'));
    cpSync('examples/manifests', dir, { recursive: true });
    server = await startServer(['--manifests', dir, '--workers', '3', '--log-level', 'debug', '--conf', 'test/fixtures/ops/workers.Corefile'], {
      env: { METRICS_PORT: String(await freePort()) },
    });
    await waitUntil('three workers ready', () => server.logs.filter((l) => l.includes('"clusterdns ready"')).length === 3, 20000);
  }, 40000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Load permits in the order the workers logged them, and the most held at once. */
  const permits = (): { grants: number; workers: Set<number>; mostHeld: number } => {
    let held = 0;
    let mostHeld = 0;
    let grants = 0;
    const workers = new Set<number>();
    for (const line of server.logs) {
      if (line.includes('"load permit granted"')) {
        grants++;
        workers.add((JSON.parse(line) as { worker: number }).worker);
        mostHeld = Math.max(mostHeld, ++held);
      } else if (line.includes('"load permit given back"')) held--;
    }
    return { grants, workers, mostHeld };
  };

  // With --worker-loads 3 the same run holds 3 at once (checked when this test was written), so
  // a gate that lets loads overlap fails these.
  it('loads one worker at a time at start', () => {
    const p = permits();
    expect(p.grants).toBe(3);
    expect(p.workers.size).toBe(3);
    expect(p.mostHeld).toBe(1);
  });

  it('loads one worker at a time when every worker reloads at once', async () => {
    const later = new Date(Date.now() + 2000);
    for (const f of readdirSync(dir)) utimesSync(path.join(dir, f), later, later);
    server.proc.kill('SIGHUP');
    await waitUntil('three reloads', () => server.logs.filter((l) => l.includes('"configuration reloaded"')).length === 3, 20000);
    const p = permits();
    expect(p.grants).toBe(6);
    expect(p.mostHeld).toBe(1);
    const r = await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A');
    expect(r.answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
  }, 30000);
});
