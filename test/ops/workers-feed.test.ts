// serve --workers 2 loads the manifests once, in the primary, for both workers
// (cluster/feed-hub.ts): both workers serve the same load at start, a change made and signalled
// (SIGHUP to the primary, which passes it on) is loaded once and answered by every worker, and
// the workers start no loader thread of their own.
import { cpSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollFor, waitUntil } from '../helpers/wait.js';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

const children = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
const threads = (pid: number): number => readdirSync(`/proc/${pid}/task`).length;
const json = (lines: readonly string[], msg: string): Record<string, unknown>[] =>
  lines.filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('serve --workers 2: one manifest load for both workers', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-workers-feed-'));
    cpSync(path.join(repoRoot, 'examples/manifests'), path.join(dir, 'manifests'), { recursive: true });
    // watch 0: only the signal loads, so the test knows which load is which.
    writeFileSync(path.join(dir, 'Corefile'), 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        watch 0s\n    }\n}\n');
    server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests'), '--workers', '2']);
    await waitUntil('both workers ready', () => server.logs.filter((l) => l.includes('"clusterdns ready"')).length >= 2, 20_000, 50);
  }, 40_000);
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("both workers serve the primary's one load; a change and SIGHUP reach both from one more load", async () => {
    expect(json(server.logs, 'manifest feed started in the primary, shared by the workers')).toHaveLength(1);
    const first = json(server.logs, 'kubernetes data loaded');
    expect(first.map((l) => l['load'])).toEqual([1, 1]);
    expect(new Set(first.map((l) => l['worker'])).size).toBe(2);

    const file = path.join(dir, 'manifests', 'zz-added.yaml');
    writeFileSync(
      `${file}.tmp`,
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: added\n  namespace: default\nspec:\n  clusterIP: 10.96.77.77\n  ports:\n  - port: 80\n',
    );
    renameSync(`${file}.tmp`, file);
    const before = server.logs.length;
    server.proc.kill('SIGHUP');
    const loaded = await pollFor(
      'both workers to reload',
      () => {
        const l = json(server.logs.slice(before), 'kubernetes data loaded');
        return l.length >= 2 ? l : undefined;
      },
      20_000,
    );
    // One load, the second, of one file: both workers' new plugins serve it.
    expect(loaded.map((l) => [l['load'], l['reread'], l['full']])).toEqual([
      [2, 1, false],
      [2, 1, false],
    ]);
    // SO_REUSEPORT spreads queries over the workers: every one of them answers the new name.
    for (let i = 0; i < 20; i++) {
      const reply = await dnsQuery(server.port, 'added.default.svc.cluster.local', 'A');
      expect(reply.rcode).toBe('NOERROR');
      expect(reply.answers.map((a) => a.data)).toEqual(['10.96.77.77']);
    }
  }, 60_000);

  it('the workers run no loader thread; the primary runs one', () => {
    const kids = children(server.proc.pid!);
    expect(kids).toHaveLength(2);
    // A worker's threads are Node's own (V8 platform, libuv, inspector): the same count in both,
    // and below the primary's, which holds the loader thread besides them.
    const [a, b] = kids.map(threads) as [number, number];
    expect(a).toBe(b);
    expect(threads(server.proc.pid!)).toBeGreaterThan(a);
  });
});
