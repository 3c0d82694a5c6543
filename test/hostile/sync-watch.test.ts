// `sync --watch` against a real etcd: a manifest edit made while etcd
// is down reaches etcd, and a replica, once etcd is back, without another edit; the state shows
// on --metrics; and with --conf alone, --watch follows the manifests the Corefile names.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, afterEach, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { freePort, launcher, onLines, repoRoot, startServer, stopProcess, type RunningServer } from '../helpers/server.js';
import { firstA } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';
import { describeNeeding } from '../helpers/tools.js';

const service = (ip: string): string =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  clusterIP: ${ip}\n  ports:\n  - name: http\n    port: 80\n`;

describeNeeding(['etcd'], 'sync --watch against a real etcd that goes away', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let dir: string;
  let replica: RunningServer;
  let procs: ChildProcess[] = [];

  /** Every value under /skydns/ that names `ip`. */
  const holds = async (ip: string): Promise<boolean> => {
    const all = await client.getAll().prefix('/skydns/').strings();
    return Object.values(all).some((v) => v.includes(`"${ip}"`));
  };
  const startSync = (args: string[]): { proc: ChildProcess; lines: string[] } => {
    const proc = spawn(process.execPath, [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--watch', '--interval', '200', ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    procs.push(proc);
    const lines: string[] = [];
    onLines(proc.stderr!, (l) => lines.push(l));
    return { proc, lines };
  };

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-sync-watch-'));
    const corefile = path.join(dir, 'Corefile.replica');
    fs.writeFileSync(corefile, `cluster.local {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${etcd.endpoints[0]}\n    }\n}\n`);
    replica = await startServer(['--conf', corefile]);
  }, 30_000);

  afterEach(async () => {
    for (const p of procs) await stopProcess(p);
    procs = [];
  });

  afterAll(async () => {
    await replica?.stop();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('an edit made while etcd is down is written when etcd is back, with no further edit', async () => {
    const manifests = path.join(dir, 'm1');
    fs.mkdirSync(manifests);
    fs.writeFileSync(path.join(manifests, 'web.yaml'), service('10.96.0.50'));
    const metricsPort = await freePort();
    const { lines } = startSync(['--manifests', manifests, '--retry-max', '1000', '--metrics', `127.0.0.1:${metricsPort}`]);
    const scrape = async (): Promise<Record<string, number>> => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const out: Record<string, number> = {};
      for (const m of text.matchAll(/^(clusterdns_sync_\w+) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
      return out;
    };
    await waitUntil('the first sync', () => holds('10.96.0.50'), 15_000);
    await waitUntil('the replica to serve it', async () => (await firstA(replica.port, 'web.default.svc.cluster.local.')) === '10.96.0.50', 10_000);
    await waitUntil('pending 0 after the first sync', async () => (await scrape()).clusterdns_sync_pending === 0, 5000);
    const firstSuccess = (await scrape()).clusterdns_sync_last_success_timestamp_seconds!;
    expect(firstSuccess).toBeGreaterThan(0);

    await etcd.kill(0);
    fs.writeFileSync(path.join(manifests, 'web.yaml'), service('10.96.0.51'));
    await waitUntil('a failed attempt', () => lines.some((l) => l.includes('sync failed')), 20_000);
    expect((await scrape()).clusterdns_sync_pending).toBe(1);
    // The replica keeps answering from its mirror while etcd is down.
    expect(await firstA(replica.port, 'web.default.svc.cluster.local.')).toBe('10.96.0.50');

    await etcd.restart(0);
    const back = Date.now();
    // No edit after this point: only the retry can bring the new address.
    await waitUntil('etcd to hold the edit made while it was down', () => holds('10.96.0.51'), 15_000, 100);
    const tookMs = Date.now() - back;
    await waitUntil('the replica to serve the edit', async () => (await firstA(replica.port, 'web.default.svc.cluster.local.')) === '10.96.0.51', 10_000);
    expect(await holds('10.96.0.50')).toBe(false);
    await waitUntil('the recovery line', () => lines.some((l) => l.includes('sync: recovered')), 5000);
    const after = await scrape();
    expect(after.clusterdns_sync_pending).toBe(0);
    expect(after.clusterdns_sync_last_success_timestamp_seconds).toBeGreaterThan(firstSuccess);
    expect(after.clusterdns_sync_failures_total).toBeGreaterThan(0);
    console.log(`edit written ${tookMs} ms after etcd was back; ${String(after.clusterdns_sync_failures_total)} failed attempts while it was down`);
  }, 60_000);

  it('with --conf alone, --watch follows the manifests the Corefile names (relative to it)', async () => {
    const sub = path.join(dir, 'c2');
    fs.mkdirSync(path.join(sub, 'manifests'), { recursive: true });
    fs.writeFileSync(path.join(sub, 'manifests', 'web.yaml'), service('10.96.0.60'));
    const corefile = path.join(sub, 'Corefile');
    fs.writeFileSync(corefile, `cluster.local {\n    kubernetes cluster.local {\n        manifests manifests\n    }\n}\n`);
    // Started from another directory: the path must be read against the Corefile's.
    const { proc, lines } = startSync(['--conf', corefile]);
    let exited: number | null = null;
    proc.once('exit', (code) => (exited = code ?? -1));
    await waitUntil('the first sync', () => holds('10.96.0.60'), 15_000);
    await waitUntil('sync to watch', () => lines.some((l) => l.includes('sync: watching manifests')) || exited !== null, 10_000);
    expect(exited, lines.join('\n')).toBeNull();
    fs.writeFileSync(path.join(sub, 'manifests', 'web.yaml'), service('10.96.0.61'));
    await waitUntil('the edit in etcd', () => holds('10.96.0.61'), 10_000);
    await waitUntil('the replica to serve the edit', async () => (await firstA(replica.port, 'web.default.svc.cluster.local.')) === '10.96.0.61', 10_000);
  }, 40_000);

  it('checks its arguments before writing anything', async () => {
    const before = await client.getAll().prefix('/skydns/').keys();
    const sub = path.join(dir, 'c3');
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, 'web.yaml'), service('10.96.0.70'));
    const run = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const proc = spawn(process.execPath, [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--manifests', sub, ...args], {
          cwd: repoRoot,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        procs.push(proc);
        let stderr = '';
        proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
        proc.once('exit', (code) => resolve({ code, stderr }));
      });
    const noWatch = await run(['--metrics', '127.0.0.1:0']);
    expect(noWatch.code).toBe(1);
    expect(noWatch.stderr).toContain('--metrics serves the state of sync --watch');
    const badAddr = await run(['--watch', '--metrics', 'nowhere']);
    expect(badAddr.code).toBe(1);
    expect(badAddr.stderr).toContain('--metrics');
    expect(await holds('10.96.0.70')).toBe(false);
    expect((await client.getAll().prefix('/skydns/').keys()).sort()).toEqual(before.sort());
  }, 30_000);
});
