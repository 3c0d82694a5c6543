// serve --workers 2 with the manifest image (src/cluster/feed-image.ts): the primary's feed
// writes the image and reads it at the next start, and both workers take their views from it.
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollFor, waitUntil } from '../helpers/wait.js';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

const json = (lines: readonly string[], msg: string): Record<string, unknown>[] =>
  lines.filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('serve --workers 2: the primary writes and reads the manifest image', () => {
  let dir: string;
  const images = (): string => path.join(dir, 'images');
  const start = async (): Promise<RunningServer> => {
    const s = await startServer(
      ['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests'), '--workers', '2', '--manifest-image-dir', images()],
      { timeoutMs: 30_000 },
    );
    await waitUntil('both workers ready', () => s.logs.filter((l) => l.includes('"clusterdns ready"')).length >= 2, 20_000, 50);
    return s;
  };
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-workers-image-'));
    cpSync(path.join(repoRoot, 'examples/manifests'), path.join(dir, 'manifests'), { recursive: true });
    writeFileSync(path.join(dir, 'Corefile'), 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        watch 0s\n    }\n}\n');
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the second start hands both workers the image, and both answer as the first start did', async () => {
    let s = await start();
    const answers = async (port: number): Promise<string[][]> => {
      const out: string[][] = [];
      // SO_REUSEPORT spreads the queries over both workers.
      for (let i = 0; i < 20; i++) {
        const r = await dnsQuery(port, 'kubernetes.default.svc.cluster.local', 'A');
        out.push([r.rcode, ...r.answers.map((a) => String(a.data))]);
      }
      return out;
    };
    let first: string[][];
    try {
      expect(json(s.logs, 'kubernetes data loaded').map((l) => l['reread'])).toEqual([5, 5]);
      first = await answers(s.port);
      await pollFor('the image', () => (existsSync(images()) && readdirSync(images()).some((f) => f.endsWith('.img')) ? true : undefined), 20_000, 50);
    } finally {
      await s.stop();
    }
    expect(readdirSync(images()).filter((f) => f.endsWith('.img'))).toHaveLength(1);
    s = await start();
    try {
      const loaded = json(s.logs, 'kubernetes data loaded');
      // Both workers, one load, no file read.
      expect(loaded.map((l) => [l['load'], l['reread'], l['full']])).toEqual([
        [1, 0, false],
        [1, 0, false],
      ]);
      expect(new Set(loaded.map((l) => l['worker'])).size).toBe(2);
      expect(await answers(s.port)).toEqual(first);
      expect(first[0]).toEqual(['NOERROR', '10.96.0.1']);
    } finally {
      await s.stop();
    }
  }, 90_000);
});
