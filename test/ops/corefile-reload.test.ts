// Corefile reload (reload plugin and SIGHUP): the new configuration goes live on the same
// sockets, a broken one is refused with its file and line, and queries never fail meanwhile.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { waitForLines, waitUntil } from '../helpers/wait.js';

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

  /** Every TTL answered until `want` comes, so a test can check there was nothing else in between. */
  const waitFor = async (want: number, ms: number): Promise<number[]> => {
    const seen: number[] = [];
    await waitUntil(
      () => `TTL ${want} (answered so far: ${seen.join(' ')})`,
      async () => {
        seen.push(await ttl());
        return seen.at(-1) === want;
      },
      ms,
      50,
    );
    return seen;
  };

  /**
   * The reload plugin's next poll of the Corefile. A poll reads the file and, when the content is
   * one already acted on, leaves no other trace: its read shows in the file's access time, which a
   * read moves on whenever it is not later than the file's change time (relatime, Linux's default).
   * So the access time is set back first, and the read that moves it is the poll.
   */
  const nextPoll = async (): Promise<void> => {
    fs.utimesSync(conf, 0, fs.statSync(conf).mtime);
    await waitUntil('the reload plugin to read the Corefile again (its access time did not move: a noatime mount?)', () => fs.statSync(conf).atimeMs > 0, 4000);
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
    await waitForLines(server.logs, 'reload failed', 'the broken Corefile to be refused', { timeoutMs: 6000, everyMs: 100 });
    const failure = server.logs.find((l) => l.includes('reload failed'));
    expect(failure).toContain(`"file":"${conf}","line":8`);
    expect(failure).toContain('frobnicate');
    expect(await ttl()).toBe(60);
  });

  it('keeps polling after a rejected Corefile: the same content is not retried, the next edit goes live', async () => {
    // The broken Corefile of the test above is still on disk; the poll that rejected it ran just
    // before this test began (that test waits for its log line). The polls after it must not load
    // it again: a reloader that retries a rejected content does so at every poll. Two polls are
    // awaited: the second comes 1.5 s or more (2s +/- 0.5s) after the first, so a retry the first
    // set off has failed and logged by then.
    await nextPoll();
    await nextPoll();
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
