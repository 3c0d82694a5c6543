// Replicas must agree on the SOA serial. It is the highest revision that
// changed anything under the path that a replica knows (keys' mod revisions, the marker that
// `sync` moves on every change set included), never lowered. A replica that re-read the path
// after compaction used to take the revision of its read, which no other replica could know.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { EtcdProxy, startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';
import { namePath } from '../../src/plugins/etcd/path.js';
import { describeNeeding } from '../helpers/tools.js';

describeNeeding(['etcd'], 'the etcd SOA serial across replicas', () => {
  let etcd: EtcdCluster | undefined;
  let client: Etcd3 | undefined;
  let proxy: EtcdProxy | undefined;
  const servers: RunningServer[] = [];
  let dir: string | undefined;

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await proxy?.close();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a replica that re-read the path after compaction and one started later give the same serial', async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    const c = client;
    const key = (n: string): string => namePath(`${n}.serial.test.`, 'skydns');
    await c.put(key('b')).value('{"host":"10.10.0.2"}').exec();
    const top = Number((await c.put(key('a')).value('{"host":"10.10.0.1"}').exec()).header.revision);
    proxy = new EtcdProxy(Number(new URL(etcd.endpoints[0]!).port));
    const viaProxy = await proxy.listen();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-serial-'));
    const corefile = (name: string, endpoint: string): string => {
      const f = path.join(dir!, name);
      fs.writeFileSync(f, `serial.test {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${endpoint}\n    }\n}\n`);
      return f;
    };
    const serial = async (port: number): Promise<number> =>
      Number(((await dnsQuery(port, 'serial.test.', 'SOA')).answers[0]!.data as { serial: number }).serial);
    const a = await startServer(['--conf', corefile('A', viaProxy)]);
    servers.push(a);
    await waitUntil('A synced', async () => (await serial(a.port)) === top, 10_000);

    // While A is cut off: b deleted by hand (no marker moves), a write elsewhere, compaction: A
    // must read the whole path again.
    proxy.cut();
    await c.delete().key(key('b')).exec();
    const other = await c.put('/elsewhere/x').value('y').exec();
    await c.kv.compact({ revision: other.header.revision, physical: true });
    proxy.restore();
    await waitUntil('A to see the deletion', async () => (await dnsQuery(a.port, 'b.serial.test.', 'A')).rcode === 'NXDOMAIN', 10_000, 100);

    const b = await startServer(['--conf', corefile('B', etcd.endpoints[0]!)]);
    servers.push(b);
    await waitUntil('B synced', async () => (await dnsQuery(b.port, 'a.serial.test.', 'A')).rcode === 'NOERROR', 10_000);
    expect([await serial(a.port), await serial(b.port)]).toEqual([top, top]);

    // A change set as sync writes it (the marker in the same transaction) moves both alike.
    const marker = '/skydns/.clusterdns/txn';
    const res = await c
      .if(marker, 'Mod', '>', -1)
      .then(c.delete().key(key('a')), c.put(marker).value(JSON.stringify({ state: 'done', owner: 'test' })))
      .commit();
    const rev = Number(res.header.revision);
    await waitUntil('both replicas at the change set', async () => (await serial(a.port)) === rev && (await serial(b.port)) === rev, 10_000, 100);
    const late = await startServer(['--conf', corefile('C', etcd.endpoints[0]!)]);
    servers.push(late);
    await waitUntil('C synced', async () => (await serial(late.port)) > 0, 10_000);
    expect(await serial(late.port)).toBe(rev);
  }, 60_000);
});
