// A reload asked for while another runs (a SIGHUP during a reload, the reload plugin and a
// manifest watch at once) must not be dropped: the running build may have read the Corefile
// before the change that prompted the second request. It runs once more after the first ends,
// and any number of requests made meanwhile coalesce into that one run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { repoRoot } from '../helpers/server.js';

const corefile = (ttl: number): string => `cluster.local {
    bind 127.0.0.1
    kubernetes {
        manifests ${path.join(repoRoot, 'examples/manifests')}
        ttl ${ttl}
    }
}
`;

describe('reloads requested during a reload', () => {
  let dir: string;
  let conf: string;
  let app: App;
  const logs: string[] = [];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-reload-coalesce-'));
    conf = path.join(dir, 'Corefile');
    fs.writeFileSync(conf, corefile(5));
    const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
    app = await buildApp({ conf, port: 0, logger });
  }, 30000);
  afterAll(async () => {
    await app?.close(0);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const ttl = async (): Promise<number | undefined> => {
    const a = (await app.query('kubernetes.default.svc.cluster.local', 'A')).answers?.[0];
    return a && a.type === 'A' ? a.ttl : undefined;
  };

  it('applies a change made after a running reload read the Corefile', async () => {
    expect(await ttl()).toBe(5);
    fs.writeFileSync(conf, corefile(30));
    // The first build reads the Corefile synchronously when it starts: it sees ttl 30.
    const first = app.reload('first');
    fs.writeFileSync(conf, corefile(60));
    const second = app.reload('second');
    const third = app.reload('third');
    expect(await first).toBe(true);
    // The second and third requests share one run, after the first, which reads ttl 60.
    expect(await second).toBe(true);
    expect(await third).toBe(true);
    expect(await ttl()).toBe(60);
    const reloaded = logs.filter((l) => l.includes('configuration reloaded'));
    expect(reloaded.map((l) => JSON.parse(l).reason)).toEqual(['first', 'second']);
  }, 30000);

  it('a request after the reloads ended runs on its own', async () => {
    fs.writeFileSync(conf, corefile(90));
    expect(await app.reload('later')).toBe(true);
    expect(await ttl()).toBe(90);
  }, 30000);
});
