// `clusterdns sync` against an etcd that hangs (SIGSTOP): a run gives up after --etcd-timeout
// with a message naming the endpoint, instead of waiting for ever; `sync --watch` retries and
// writes an edit made during the hang once etcd answers again.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { launcher, onLines, repoRoot, stopProcess } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';
import { describeNeeding } from '../helpers/tools.js';

const service = (ip: string): string =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  clusterIP: ${ip}\n  ports:\n  - name: http\n    port: 80\n`;

describeNeeding(['etcd'], 'sync against a hung etcd', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let dir: string;
  let watcher: ChildProcess | undefined;
  const pause = (): void => void process.kill(etcd.members[0]!.proc!.pid!, 'SIGSTOP');
  const resume = (): void => void process.kill(etcd.members[0]!.proc!.pid!, 'SIGCONT');
  const holds = async (ip: string): Promise<boolean> => Object.values(await client.getAll().prefix('/skydns/').strings()).some((v) => v.includes(`"${ip}"`));

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-sync-hung-'));
    fs.writeFileSync(path.join(dir, 'web.yaml'), service('10.96.0.80'));
  }, 30_000);

  afterAll(async () => {
    if (etcd) resume();
    if (watcher) await stopProcess(watcher);
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('one run stops after --etcd-timeout, naming the endpoint', async () => {
    pause();
    try {
      const started = Date.now();
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        // The outer timeout only bounds the test: the run must end by itself well before it.
        const proc = execFile(
          process.execPath,
          [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--manifests', dir, '--etcd-timeout', '1500'],
          { cwd: repoRoot, timeout: 15_000 },
          (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
        );
        void proc;
      });
      const ms = Date.now() - started;
      expect(r.code, r.stderr.slice(-800)).toBe(1);
      expect(r.stderr).toContain(`etcd (${etcd.endpoints[0]!}) did not finish reading and writing within 1500 ms`);
      expect(ms).toBeLessThan(12_000);
    } finally {
      resume();
    }
  }, 30_000);

  it('--watch retries past a hang and writes the edit made during it', async () => {
    watcher = spawn(
      process.execPath,
      [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--manifests', dir, '--watch', '--interval', '200', '--etcd-timeout', '1500', '--retry-max', '500'],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const lines: string[] = [];
    onLines(watcher.stderr!, (l) => lines.push(l));
    await waitUntil('the first sync', () => holds('10.96.0.80'), 15_000);
    pause();
    try {
      fs.writeFileSync(path.join(dir, 'web.yaml'), service('10.96.0.81'));
      await waitUntil('a run to give up', () => lines.some((l) => l.includes('did not finish reading and writing within 1500 ms')), 10_000);
    } finally {
      resume();
    }
    await waitUntil('etcd to hold the edit made during the hang', () => holds('10.96.0.81'), 10_000, 100);
    await waitUntil('the recovery line', () => lines.some((l) => l.includes('sync: recovered')), 5000);
    expect(await holds('10.96.0.80')).toBe(false);
  }, 40_000);
});
