// One change of the manifest files seen by two kubernetes plugins of the same block at once (the
// running plugin's watcher, and a Corefile reload's new plugin: a SIGHUP after editing them)
// makes one load, which both serve: two loads beside the serving store would be three clusters
// in memory. Runs the compiled server (dist/), whose loads run on the feed's loader thread, so
// the two really are in flight together.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/server.js';
import { waitUntil } from '../../helpers/wait.js';

type AppMod = typeof import('../../../src/app.js');
type Plugin = { name: string; currentStore?: unknown };

const dist = (p: string): string => path.join(repoRoot, 'dist', p);

describe('a manifest change seen by the running plugin and a reload at once', () => {
  let dir: string;
  let app: Awaited<ReturnType<AppMod['buildApp']>>;
  const logs: string[] = [];
  let list: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-shared-load-'));
    list = path.join(dir, 'cluster.json');
    execFileSync(process.execPath, [path.join(repoRoot, 'bench/gen-list.js'), list, '2000', '10']);
    const conf = path.join(dir, 'Corefile');
    // watch 100ms: the running plugin's feed sees the change within two polls, while the load the
    // reload's new plugin started (2,000 Services: about a second) still runs.
    writeFileSync(conf, `cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests ${list}\n        watch 100ms\n    }\n}\n`);
    const { buildApp } = (await import(dist('app.js'))) as AppMod;
    app = await buildApp({ conf, port: 0, logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }) });
    // Serving: the watch starts with it.
    await app.listen();
  }, 60000);
  afterAll(async () => {
    await app?.close(0);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const kubernetes = (): Plugin => app.chains.flatMap((c) => c.plugins as Plugin[]).find((p) => p.name === 'kubernetes')!;

  it('loads the files once, and both plugins serve that load', async () => {
    const running = kubernetes();
    const before = running.currentStore;
    const later = new Date(Date.now() + 10_000);
    utimesSync(list, later, later);
    logs.length = 0;
    const reloaded = app.reload('SIGHUP');
    // The reload's new plugin has started its load; the watch sees the change (at two polls in a
    // row) and asks for the same files meanwhile.
    expect(await reloaded).toBe(true);
    const fresh = kubernetes();
    expect(fresh).not.toBe(running);
    expect(fresh.currentStore).not.toBe(before);
    // The running plugin took the reload's store: no load of its own.
    await waitUntil("the running plugin to take the reload's store", () => running.currentStore === fresh.currentStore, 5000);
    expect(running.currentStore).toBe(fresh.currentStore);
    const loads = logs.map((l) => JSON.parse(l).msg as string).filter((m) => /kubernetes data (re)?loaded/.test(m));
    // One load, handed to both: the new plugin's first data, the running plugin's reload.
    expect(loads.sort()).toEqual(['kubernetes data loaded', 'manifests changed: kubernetes data reloaded']);
  }, 60000);
});
