// Corefile reload (reload plugin and SIGHUP): the new configuration goes live on the same
// sockets, a broken one is refused with its file and line, and queries never fail meanwhile.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

const corefile = (ttl: number, extra = ''): string => `cluster.local {
    bind 127.0.0.1
    reload 2s 1s
    kubernetes {
        manifests ${path.join(repoRoot, 'examples/manifests')}
        ttl ${ttl}
    }
${extra}}
`;

describe('Corefile reload', () => {
  let dir: string;
  let conf: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-corefile-'));
    conf = path.join(dir, 'Corefile');
    fs.writeFileSync(conf, corefile(5));
    server = await startServer(['--conf', conf]);
  }, 30000);
  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const ttl = async (): Promise<number> => {
    const r = await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A', 2000);
    expect(r.rcode).toBe('NOERROR');
    return r.answers[0]!.ttl ?? -1;
  };

  const waitFor = async (want: number, ms: number): Promise<number[]> => {
    const seen: number[] = [];
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      const t = await ttl();
      seen.push(t);
      if (t === want) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return seen;
  };

  it('picks up an edited Corefile within the reload interval, answering all along', async () => {
    expect(await ttl()).toBe(5);
    fs.writeFileSync(conf, corefile(60));
    const seen = await waitFor(60, 6000);
    expect(seen.at(-1)).toBe(60);
    expect(seen.every((t) => t === 5 || t === 60)).toBe(true);
  });

  it('refuses a broken Corefile with its line and keeps serving the running one', async () => {
    fs.writeFileSync(conf, corefile(90, '    frobnicate\n'));
    const deadline = Date.now() + 6000;
    while (Date.now() < deadline && !server.logs.some((l) => l.includes('reload failed'))) await new Promise((r) => setTimeout(r, 100));
    const failure = server.logs.find((l) => l.includes('reload failed'));
    expect(failure).toContain(`"file":"${conf}","line":8`);
    expect(failure).toContain('frobnicate');
    expect(await ttl()).toBe(60);
  });

  it('keeps polling after a rejected Corefile: the same content is not retried, the next edit goes live', async () => {
    // The broken Corefile of the test above is still on disk; the poll that rejected it ran just
    // before this test began (that test waits for its log line). The next poll comes at most
    // 2.5 s later (2s +/- 0.5s) and must not load it again: a reloader that retries a rejected
    // content does so at every poll, so one poll shows it.
    await new Promise((r) => setTimeout(r, 2700));
    expect(server.logs.filter((l) => l.includes('reload failed')).length).toBe(1);
    fs.writeFileSync(conf, corefile(45));
    const seen = await waitFor(45, 4000);
    expect(seen.at(-1)).toBe(45);
  }, 12000);

  it('reloads at once on SIGHUP', async () => {
    fs.writeFileSync(conf, corefile(7).replace('reload 2s 1s', ''));
    server.proc.kill('SIGHUP');
    const seen = await waitFor(7, 3000);
    expect(seen.at(-1)).toBe(7);
  });

  it('stops cleanly and promptly on SIGTERM', async () => {
    const started = Date.now();
    await server.stop();
    expect(server.proc.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
