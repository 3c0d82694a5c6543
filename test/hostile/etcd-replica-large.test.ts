// 2,000 values of 34 KiB make one 2,000-key listing page of about 70 MB, over
// the 64 MiB gRPC receive limit: new replicas never synced (SERVFAIL for the whole zone, 69 MB
// downloaded every 2 s). Listing pages are sized by bytes now. Real etcd, real sizes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery, firstA } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';
import { namePath } from '../../src/plugins/etcd/path.js';
import { describeNeeding } from '../helpers/tools.js';

const KEYS = 2000;
const VALUE_BYTES = 34 * 1024;

describeNeeding(['etcd'], 'large etcd values', () => {
  let etcd: EtcdCluster | undefined;
  let client: Etcd3 | undefined;
  let server: RunningServer | undefined;
  let dir: string | undefined;

  afterAll(async () => {
    await server?.stop();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`a new replica syncs ${KEYS} keys of ${VALUE_BYTES / 1024} KiB`, async () => {
    etcd = await startEtcd(1, ['--quota-backend-bytes', String(1024 * 1024 * 1024)]);
    client = etcd.client();
    const c = client;
    const text = 'x'.repeat(VALUE_BYTES - 64);
    // 16 values a transaction stay under etcd's 1.5 MiB request limit.
    for (let i = 0; i < KEYS; i += 16) {
      const ops = [];
      for (let j = i; j < Math.min(i + 16, KEYS); j++)
        ops.push(c.put(namePath(`k${j}.large.test.`, 'skydns')).value(JSON.stringify({ host: `10.9.${j >> 8}.${j & 255}`, text })));
      await c
        .if(namePath('k0.large.test.', 'skydns'), 'Mod', '>', -1)
        .then(...ops)
        .commit();
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-large-'));
    const metricsPort = await freePort();
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      `large.test {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metricsPort}\n    etcd {\n        endpoint ${etcd.endpoints[0]}\n    }\n}\n`,
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
    const srv = server;
    await waitUntil(
      'the replica to sync',
      async () => (await dnsQuery(srv.port, `k${KEYS - 1}.large.test.`, 'A', 1000).catch(() => undefined))?.rcode === 'NOERROR',
      20_000,
      200,
    );
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain(`clusterdns_etcd_keys{zones="large.test."} ${KEYS}`);
    expect(await firstA(srv.port, 'k0.large.test.')).toBe('10.9.0.0');
    expect(await firstA(srv.port, `k${KEYS - 1}.large.test.`)).toBe(`10.9.${(KEYS - 1) >> 8}.${(KEYS - 1) & 255}`);
  }, 60_000);
});
