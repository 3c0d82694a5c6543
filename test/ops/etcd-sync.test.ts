// `clusterdns sync` against a real etcd, read back by a real replica with dig: idempotent runs,
// deletes of what disappeared, other writers' keys left alone, a change set split over many
// transactions that readers still see all at once, and --watch following manifest edits.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { digQuery } from '../helpers/clients.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { launcher, repoRoot, startServer, which, type RunningServer } from '../helpers/server.js';
import { dnsQuery, firstA } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';
import { namePath } from '../../src/plugins/etcd/path.js';
import { describeNeeding } from '../helpers/tools.js';

const run = promisify(execFile);
const dig = which('dig');

const conf = path.join(repoRoot, 'examples/Corefile');

const waitFor = (what: string, f: () => Promise<boolean>, timeoutMs = 8000): Promise<void> => waitUntil(what, f, timeoutMs);

describeNeeding(['etcd', 'dig'], 'clusterdns sync on a real etcd', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let dir: string;
  let manifests: string;
  let replica: RunningServer;
  const sync = (...extra: string[]): Promise<{ stdout: string; stderr: string }> =>
    run(process.execPath, [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--conf', conf, '--manifests', manifests, ...extra], { cwd: repoRoot });
  const revision = async (): Promise<number> => Number((await client.get('/').exec()).header.revision);
  const lastResult = (stderr: string): Record<string, unknown> =>
    JSON.parse(
      stderr
        .trim()
        .split('\n')
        .filter((l) => l.includes('"sync: etcd'))
        .pop()!,
    ) as Record<string, unknown>;

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-sync-'));
    manifests = path.join(dir, 'manifests');
    fs.cpSync(path.join(repoRoot, 'examples/manifests'), manifests, { recursive: true });
    const corefile = path.join(dir, 'Corefile');
    fs.writeFileSync(corefile, `cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${etcd.endpoints[0]}\n    }\n}\n`);
    replica = await startServer(['--conf', corefile]);
  }, 30_000);

  afterAll(async () => {
    await replica?.stop();
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes the cluster once; a second run changes nothing; other writers keep their keys', async () => {
    // Another writer's keys: an external-dns record in the cluster zone, and one at a key sync wants.
    await client
      .put(namePath('0badcafe.extdns.apps.svc.cluster.local.', 'skydns'))
      .value(JSON.stringify({ host: '10.9.9.9', targetstrip: 1, owner: 'default' }))
      .exec();
    await client
      .put(namePath('126.218.104.10.in-addr.arpa.', 'skydns'))
      .value(JSON.stringify({ host: 'mine.example.org', owner: 'someone-else' }))
      .exec();
    const first = await sync();
    const r1 = lastResult(first.stderr);
    expect(r1.mode).toBe('single');
    expect(r1.conflicts).toBe(1);
    expect(r1.puts).toBeGreaterThan(40);
    await waitFor('the synced records', async () => (await firstA(replica.port, 'db.apps.svc.cluster.local.')) === '10.104.218.126');
    const before = await revision();
    const second = await sync();
    expect(lastResult(second.stderr)).toMatchObject({ mode: 'none', puts: 0, deletes: 0 });
    expect(await revision()).toBe(before);
    expect((await digQuery(dig!, replica.port, 'extdns.apps.svc.cluster.local.', 'A', false)).answer).toEqual([
      'extdns.apps.svc.cluster.local. 300 IN A 10.9.9.9',
    ]);
    expect((await digQuery(dig!, replica.port, '126.218.104.10.in-addr.arpa.', 'PTR', false)).answer).toEqual([
      '126.218.104.10.in-addr.arpa. 300 IN PTR mine.example.org.',
    ]);
  });

  it('deletes the records of objects that disappeared, and only its own', async () => {
    const legacy = path.join(manifests, 'legacy-list.yaml');
    const saved = fs.readFileSync(legacy);
    fs.rmSync(legacy);
    try {
      const r = lastResult((await sync()).stderr);
      expect(r.deletes).toBeGreaterThan(0);
      expect(r.puts).toBe(0);
      await waitFor('legacy gone', async () => (await digQuery(dig!, replica.port, 'legacy.apps.svc.cluster.local.', 'A', false)).rcode === 'NXDOMAIN');
      expect((await digQuery(dig!, replica.port, 'db.apps.svc.cluster.local.', 'A', false)).answer).toEqual([
        'db.apps.svc.cluster.local. 30 IN A 10.104.218.126',
      ]);
      expect((await digQuery(dig!, replica.port, 'extdns.apps.svc.cluster.local.', 'A', false)).answer).toEqual([
        'extdns.apps.svc.cluster.local. 300 IN A 10.9.9.9',
      ]);
    } finally {
      fs.writeFileSync(legacy, saved);
    }
    expect(lastResult((await sync()).stderr).puts).toBeGreaterThan(0);
  });

  it('a change set split over many transactions reaches readers all at once', async () => {
    await waitFor('legacy back', async () => (await firstA(replica.port, 'legacy.apps.svc.cluster.local.')) === '10.96.200.20');
    const names = ['db.apps.svc.cluster.local.', 'nginx-basic.default.svc.cluster.local.'];
    const old = await Promise.all(names.map((n) => firstA(replica.port, n)));
    const oldSerial = Number((await digQuery(dig!, replica.port, 'cluster.local.', 'SOA', false)).answer[0]!.split(' ')[6]);
    // Record every revision etcd goes through, as a reader without the marker would see them.
    const revisions = new Set<string>();
    const watcher = await client.watch().prefix('/skydns/').create();
    watcher.on('data', (res) => revisions.add(res.header.revision));
    // An observation is the serial, both names, the serial again; one whose serial moved in
    // between straddles the moment the change set landed and says nothing about mixing.
    const soaSerial = async (): Promise<number> => {
      const p = await dnsQuery(replica.port, 'cluster.local.', 'SOA', 1000);
      const soa = p.answers[0];
      if (soa?.type !== 'SOA') throw new Error(`no SOA in the answer: ${JSON.stringify(p.answers)}`);
      return soa.data.serial ?? -1;
    };
    const seen: string[] = [];
    const serials = new Set<number>();
    let straddled = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const s1 = await soaSerial();
        const now = await Promise.all(names.map((n) => firstA(replica.port, n)));
        const s2 = await soaSerial();
        serials.add(s1).add(s2);
        if (s1 === s2) seen.push(now.join(' '));
        else straddled++;
      }
    })();
    // New service and pod CIDRs move every allocated address; 2 changes per transaction. The
    // examples' written cluster IPs stay in 10.96.0.0/12 and fd00:10:96::/112 (listed after the
    // new range, which allocation tries first): outside every range they would be rejected.
    const r = lastResult(
      (
        await sync(
          '--service-cidr',
          '10.100.0.0/16',
          '--service-cidr',
          '10.96.0.0/12',
          '--service-cidr',
          'fd00:10:96::/112',
          '--pod-cidr',
          '10.250.0.0/16',
          '--max-txn-ops',
          '3',
        )
      ).stderr,
    );
    const fresh = await Promise.all(names.map((n) => dnsQuery(replica.port, n, 'A').then((p) => String(p.answers.find((a) => a.type === 'A')?.data))));
    await waitFor('the new addresses', async () => (await firstA(replica.port, names[0]!)) !== old[0]);
    polling = false;
    await poll;
    await watcher.cancel();
    expect(r.mode).toBe('marked');
    expect(r.transactions as number).toBeGreaterThan(10);
    console.log(
      `change set: ${String(r.puts)} puts, ${String(r.deletes)} deletes in ${String(r.transactions)} transactions; replica observations: ${seen.length} (+${straddled} across the switch)`,
    );
    expect(revisions.size).toBeGreaterThan(10);
    const now = await Promise.all(names.map((n) => firstA(replica.port, n)));
    expect(now[0]).not.toBe(old[0]);
    expect(now[1]).not.toBe(old[1]);
    // Every observation is the old pair or the new pair, never one of each.
    const allowed = new Set([old.join(' '), now.join(' ')]);
    const mixed = seen.filter((s) => !allowed.has(s));
    expect(mixed, `mixed answers seen during the sync (fresh: ${fresh.join(' ')})`).toEqual([]);
    expect(seen.length).toBeGreaterThan(5);
    expect(straddled).toBeLessThanOrEqual(1);
    // The serial moves once, from before the change set to its last transaction: held-back
    // transactions do not show through it either.
    expect([...serials].sort()).toEqual([oldSerial, r.revision as number].sort());
    const newSerial = Number((await digQuery(dig!, replica.port, 'cluster.local.', 'SOA', false)).answer[0]!.split(' ')[6]);
    expect(newSerial).toBe(r.revision);
    expect(newSerial).toBeGreaterThan(oldSerial);
    expect(replica.logs.some((l) => l.includes('change set complete, applied at once'))).toBe(true);
  }, 30_000);

  it('--watch follows manifest edits', async () => {
    // Back to the default CIDRs first, so the edit below is the only change.
    await sync();
    const proc = spawn(
      process.execPath,
      [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--conf', conf, '--manifests', manifests, '--watch', '--interval', '200'],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      await waitFor('sync --watch to start', async () => stderr.includes('sync: watching manifests'), 15_000);
      const legacy = path.join(manifests, 'legacy-list.yaml');
      fs.writeFileSync(legacy, fs.readFileSync(legacy, 'utf8').replaceAll('10.96.200.20', '10.96.200.21'));
      await waitFor('the edited address', async () => (await firstA(replica.port, 'legacy.apps.svc.cluster.local.')) === '10.96.200.21', 15_000);
    } finally {
      await new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        process.kill(proc.pid!, 'SIGTERM');
      });
    }
    expect(proc.exitCode).toBe(0);
  }, 40_000);

  it('refuses to empty the prefix when the configuration serves nothing', async () => {
    const empty = path.join(dir, 'Empty.Corefile');
    fs.writeFileSync(empty, 'cluster.local {\n    hosts {\n        10.0.0.1 a.cluster.local\n    }\n}\n');
    const before = await revision();
    const err = await run(process.execPath, [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--conf', empty], { cwd: repoRoot }).then(
      () => undefined,
      (e: { stderr: string }) => e.stderr,
    );
    expect(err).toMatch(/serves no records, so this would delete all \d+ keys owned by "clusterdns-sync"/);
    expect(await revision()).toBe(before);
    expect((await digQuery(dig!, replica.port, 'db.apps.svc.cluster.local.', 'A', false)).rcode).toBe('NOERROR');
  });
});
