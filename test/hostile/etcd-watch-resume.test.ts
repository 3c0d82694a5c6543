// A watch that resumes after an etcd restart in the middle of a catch-up must
// resume from the last event it delivered, not from the response header's revision (etcd's
// current revision during a catch-up): the etcd3 client's own watcher did the latter, and a
// replica kept 1,002 of 3,002 keys for good. Real etcd, restarted while the catch-up streams.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { EtcdProxy, startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { firstA } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';
import { namePath } from '../../src/plugins/etcd/path.js';
import { describeNeeding } from '../helpers/tools.js';

const KEYS = 3000;

describeNeeding(['etcd'], 'etcd watch resume after a restart during a catch-up', () => {
  let etcd: EtcdCluster | undefined;
  let client: Etcd3 | undefined;
  let proxy: EtcdProxy | undefined;
  let server: RunningServer | undefined;
  let dir: string | undefined;

  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('after the restart the replica serves every key written while it was cut off', async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    const put = (i: number): Promise<unknown> =>
      client!
        .put(namePath(`k${i}.resume.test.`, 'skydns'))
        .value(JSON.stringify({ host: `10.7.${i >> 8}.${i & 255}` }))
        .exec();
    await put(0);
    proxy = new EtcdProxy(Number(new URL(etcd.endpoints[0]!).port));
    const url = await proxy.listen();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-resume-'));
    const metricsPort = await freePort();
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      `resume.test {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metricsPort}\n    etcd {\n        endpoint ${url}\n    }\n}\n`,
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
    const srv = server;
    await waitUntil('the first read', async () => (await firstA(srv.port, 'k0.resume.test.')) === '10.7.0.0', 10_000);
    const keys = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return Number(/clusterdns_etcd_keys\{zones="resume.test."\} (\d+)/.exec(text)?.[1] ?? -1);
    };

    // Cut off, the replica misses KEYS revisions (one key each): its watch must catch up on them.
    proxy.cut();
    for (let i = 1; i <= KEYS; i += 100) {
      const batch: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(i + 100, KEYS + 1); j++) batch.push(put(j));
      await Promise.all(batch);
    }
    // Restart etcd once the catch-up has begun to stream (etcd sends it in batches of revisions).
    const e = etcd;
    let restarted: Promise<void> | undefined;
    proxy.downstream = 0;
    proxy.onDownstream = (n) => {
      if (n > 16 * 1024 && !restarted) restarted = e.kill(0).then(() => e.restart(0));
    };
    proxy.restore();
    await waitUntil('the catch-up to begin', () => restarted !== undefined, 10_000);
    await restarted;
    proxy.onDownstream = undefined;

    await waitUntil(`all ${KEYS + 1} keys in the mirror (metrics)`, async () => (await keys()) === KEYS + 1, 15_000, 200).catch(async (err: Error) => {
      throw new Error(`${err.message}; it holds ${await keys()}`);
    });
    for (let i = 1; i <= KEYS; i += 97) expect(await firstA(srv.port, `k${i}.resume.test.`)).toBe(`10.7.${i >> 8}.${i & 255}`);
    expect(await firstA(srv.port, `k${KEYS}.resume.test.`)).toBe(`10.7.${KEYS >> 8}.${KEYS & 255}`);
  }, 60_000);
});
