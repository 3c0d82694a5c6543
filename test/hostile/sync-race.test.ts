// Two `clusterdns sync` runs at once against a real etcd: every transaction
// of a change set is guarded, so whichever run loses stops with a clear error and etcd ends with
// exactly one run's records, never a mix under a "done" marker.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { launcher, repoRoot, stopProcess } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';

/** Services per writer: enough keys that one transaction per key keeps a run writing for seconds. */
const SERVICES = 200;
/** Other writers' keys under the prefix, so that a run's read takes a while. */
const FOREIGN_KEYS = 4000;

function services(prefix: string, net: string): string {
  const docs: string[] = [];
  for (let i = 0; i < SERVICES; i++) {
    docs.push(
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${prefix}-${i}\n  namespace: default\nspec:\n  clusterIP: ${net}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}\n  ports:\n  - name: http\n    port: 80\n`,
    );
  }
  return docs.join('---\n');
}

interface Run {
  code: number | null;
  stderr: string;
}

describeNeeding(['etcd'], 'two syncs at once against a real etcd', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let dir: string;
  const pids: ReturnType<typeof spawn>[] = [];
  const run = (manifests: string, extra: string[] = []): { done: Promise<Run> } => {
    const proc = spawn(process.execPath, [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--manifests', manifests, ...extra], {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    pids.push(proc);
    let stderr = '';
    proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    return { done: new Promise((resolve) => proc.once('exit', (code) => resolve({ code, stderr }))) };
  };
  /** Record keys under `prefix` written by the default owner, without the prefix (the marker's too). */
  const owned = async (prefix: string): Promise<Set<string>> => {
    const all = await client.getAll().prefix(prefix).strings();
    return new Set(
      Object.entries(all)
        .filter(([k, v]) => v.includes('"owner":"clusterdns-sync"') && !k.includes('/.clusterdns/'))
        .map(([k]) => k.slice(prefix.length)),
    );
  };

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-sync-race-'));
    fs.mkdirSync(path.join(dir, 'a'));
    fs.mkdirSync(path.join(dir, 'b'));
    fs.writeFileSync(path.join(dir, 'a', 'svc.yaml'), services('a', '10.96'));
    fs.writeFileSync(path.join(dir, 'b', 'svc.yaml'), services('b', '10.100'));
    const filler = JSON.stringify({ host: '192.0.2.1', owner: 'someone-else', pad: 'x'.repeat(800) });
    for (let i = 0; i < FOREIGN_KEYS; i += 100) {
      const puts = [];
      for (let j = i; j < i + 100; j++) puts.push(client.put(`/skydns/local/cluster/svc/other/f${j}`).value(filler));
      await client
        .if('/none', 'Mod', '==', 0)
        .then(...puts)
        .commit();
    }
  }, 30_000);

  afterAll(async () => {
    for (const p of pids) await stopProcess(p);
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the loser fails clearly; etcd holds exactly the winner\'s records under "done"', async () => {
    // Started together, each writing one key per transaction: the second to finish loading reads
    // etcd while the first is writing, and its read takes a while (the other writers' keys).
    const a = run(path.join(dir, 'a'), ['--max-txn-ops', '3']);
    const b = run(path.join(dir, 'b'), ['--max-txn-ops', '3']);
    const [ra, rb] = await Promise.all([a.done, b.done]);

    const final = await owned('/skydns/');
    const marker = JSON.parse((await client.get('/skydns/.clusterdns/txn').string()) ?? '{}') as { state?: string };
    // A run's own keys: its services' names and the reverse names of their addresses.
    const fromA = [...final].filter((k) => k.includes('/a-') || k.startsWith('arpa/in-addr/10/96/')).length;
    const fromB = [...final].filter((k) => k.includes('/b-') || k.startsWith('arpa/in-addr/10/100/')).length;
    const records = (r: Run): number => Number((/"records":(\d+)/.exec(r.stderr.split('\n').find((l) => l.includes('sync: etcd updated')) ?? '') ?? [])[1]);
    console.log(
      `A exit ${String(ra.code)}, B exit ${String(rb.code)}; etcd holds ${fromA} of A's keys and ${fromB} of B's (${final.size} in all); marker ${String(marker.state)}`,
    );
    // They overlapped: one of them lost, and said why.
    const losers = [ra, rb].filter((r) => r.code !== 0);
    expect(losers.length, `${ra.stderr.slice(-600)}\n${rb.stderr.slice(-600)}`).toBe(1);
    expect(losers[0]!.stderr).toContain('another writer changed /skydns/ while this sync ran');
    expect(marker.state).toBe('done');
    // Exactly the winner's set: none of the loser's own keys, and every key the winner serves.
    expect(ra.code === 0 ? fromB : fromA).toBe(0);
    expect(ra.code === 0 ? fromA : fromB).toBeGreaterThan(SERVICES);
    expect(final.size).toBe(records(ra.code === 0 ? ra : rb));
    // Other writers' keys are untouched.
    expect((await client.getAll().prefix('/skydns/local/cluster/svc/other/').keys()).length).toBe(FOREIGN_KEYS);
  }, 60_000);
});
