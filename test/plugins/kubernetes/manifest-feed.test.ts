// The App's manifest feed: every plugin reading the same files with the same options (two
// kubernetes blocks and a k8s_gateway block here) gets its data from one load per change, and a
// closed App leaves no loader thread or watch behind (a process using the library exits by itself).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/server.js';
import { pollFor } from '../../helpers/wait.js';

type AppMod = typeof import('../../../src/app.js');
const dist = (p: string): string => path.join(repoRoot, 'dist', p);

describe('one manifest feed for every reader of the same files', () => {
  let dir: string;
  let app: Awaited<ReturnType<AppMod['buildApp']>>;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-feed-'));
    cpSync(path.join(repoRoot, 'examples/edge'), path.join(dir, 'edge'), { recursive: true });
    const conf = path.join(dir, 'Corefile');
    writeFileSync(
      conf,
      [
        'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests edge\n        watch 100ms\n    }\n}',
        'in-addr.arpa second.local {\n    bind 127.0.0.1\n    kubernetes second.local in-addr.arpa {\n        manifests edge\n        watch 100ms\n    }\n}',
        'example.com {\n    bind 127.0.0.1\n    k8s_gateway {\n        resources HTTPRoute Ingress Service\n        manifests edge\n        watch 100ms\n    }\n}',
      ].join('\n') + '\n',
    );
    const { buildApp } = (await import(dist('app.js'))) as AppMod;
    app = await buildApp({ conf, port: 0, logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }) });
    await app.listen();
  }, 60_000);
  afterAll(async () => {
    await app?.close(0);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loads once at start and once per change, and each plugin serves that load', async () => {
    const loaded = logs.filter((l) => l['msg'] === 'kubernetes data loaded');
    expect(loaded.map((l) => l['load'])).toEqual([1, 1]);
    const before = logs.length;
    const file = path.join(dir, 'edge', 'zz-added.yaml');
    writeFileSync(
      `${file}.tmp`,
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: added\n  namespace: default\nspec:\n  clusterIP: 10.96.77.77\n  ports:\n  - port: 80\n',
    );
    renameSync(`${file}.tmp`, file);
    const since = (): Record<string, unknown>[] => logs.slice(before);
    await pollFor(
      'both kubernetes plugins and k8s_gateway to take the change',
      () => {
        const k = since().filter((l) => l['msg'] === 'manifests changed: kubernetes data reloaded');
        const g = since().filter((l) => l['msg'] === 'manifests changed: k8s_gateway hosts re-indexed');
        return k.length >= 2 && g.length >= 1 ? [...k, ...g] : undefined;
      },
      20_000,
    );
    const reloads = since().filter((l) => /reloaded|re-indexed/.test(String(l['msg'])));
    // One load (the second), one file read again, handed to all three.
    expect(reloads.map((l) => [l['load'], l['reread'], l['full']])).toEqual([
      [2, 1, false],
      [2, 1, false],
      [2, 1, false],
    ]);
    const a = await app.query('added.default.svc.cluster.local', 'A');
    expect(a.answers?.map((r) => (r as { data?: unknown }).data)).toEqual(['10.96.77.77']);
    const ptr = await app.query('77.77.96.10.in-addr.arpa', 'PTR');
    expect(ptr.answers?.map((r) => (r as { data?: unknown }).data)).toEqual(['added.default.svc.second.local']);
  }, 60_000);

  it('logs what a load found once, however many plugins read it', async () => {
    const before = logs.length;
    const file = path.join(dir, 'edge', 'zz-bad.yaml');
    writeFileSync(
      `${file}.tmp`,
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: bad\n  namespace: default\nspec:\n  ports:\n  - port: 80\n    protocol: tcp\n',
    );
    renameSync(`${file}.tmp`, file);
    await pollFor(
      'the three plugins to take the change',
      () => (logs.slice(before).filter((l) => /reloaded|re-indexed/.test(String(l['msg']))).length >= 3 ? true : undefined),
      20_000,
    );
    const rejected = logs.slice(before).filter((l) => String(l['msg']).startsWith('not served:'));
    expect(rejected.map((l) => [l['file'], l['line']])).toEqual([[file, 9]]);
  }, 60_000);
});

describe('a closed App', () => {
  it('ends its loader thread, and leaves no port or watch: a process that built, served and closed one exits by itself', () => {
    // Threads are counted from /proc: the loader thread must be gone once close() settles.
    const script = `
      const { readdirSync } = await import('node:fs');
      const threads = () => readdirSync('/proc/self/task').length;
      const { buildApp } = await import(${JSON.stringify(dist('app.js'))});
      const before = threads();
      const app = await buildApp({ manifests: [${JSON.stringify(path.join(repoRoot, 'examples/manifests'))}], port: 0, corefileText: 'cluster.local {\\n bind 127.0.0.1\\n kubernetes {\\n  watch 100ms\\n }\\n k8s_gateway example.com {\\n  watch 100ms\\n }\\n}\\n' });
      await app.listen();
      await app.reload('test');
      const serving = threads();
      await app.close(0);
      let after = threads();
      for (let i = 0; i < 100 && after > before; i++) {
        await new Promise((r) => setTimeout(r, 20));
        after = threads();
      }
      console.log(JSON.stringify({ before, serving, after }));
    `;
    const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-feed-close-'));
    try {
      writeFileSync(path.join(dir, 'close.mjs'), script);
      // A handle left open keeps the process up until the timeout kills it.
      const out = execFileSync(process.execPath, [path.join(dir, 'close.mjs')], { encoding: 'utf8', timeout: 30_000 });
      const { before, serving, after } = JSON.parse(out.trim()) as { before: number; serving: number; after: number };
      expect(serving).toBeGreaterThan(before); // the feed's loader thread
      expect(after).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
