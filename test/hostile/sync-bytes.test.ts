// `clusterdns sync` with TXT data that is not ASCII: the transaction
// budget counts bytes, so a run under etcd's request limit fits it; TXT bytes reach etcd as the
// bytes they are, in miekg/dns presentation escaping (`\DDD`), not as U+FFFD; a run with nothing
// to write logs etcd's real revision; records SkyDNS cannot hold are named in the warning.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { launcher, repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';

const run = promisify(execFile);

/** etcd's request limit in this test, and sync's budget under it. */
const MAX_REQUEST_BYTES = 40_000;
const MAX_TXN_BYTES = 32_768;
/** TXT records of 254 bytes of UTF-8 each ("é" is two bytes). */
const TXT_RECORDS = 150;

describeNeeding(['etcd'], 'sync of TXT data that is not ASCII, on a real etcd', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let dir: string;
  let corefile: string;
  const sync = async (): Promise<{ code: number; stderr: string }> => {
    try {
      const r = await run(process.execPath, [launcher, 'sync', '--etcd', etcd.endpoints[0]!, '--conf', corefile, '--max-txn-bytes', String(MAX_TXN_BYTES)], {
        cwd: repoRoot,
        timeout: 30_000,
      });
      return { code: 0, stderr: r.stderr };
    } catch (err) {
      const e = err as { code?: number; stderr?: string };
      return { code: e.code ?? -1, stderr: e.stderr ?? '' };
    }
  };
  const logLine = (stderr: string, msg: string): Record<string, unknown> | undefined => {
    const line = stderr.split('\n').find((l) => l.includes(msg));
    return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
  };

  beforeAll(async () => {
    etcd = await startEtcd(1, ['--max-request-bytes', String(MAX_REQUEST_BYTES)]);
    client = etcd.client();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-sync-bytes-'));
    const soa = (origin: string): string =>
      `$ORIGIN ${origin}\n@ 3600 IN SOA ns.example.org. admin.example.org. 1 7200 3600 1209600 3600\n@ 3600 IN NS ns.example.org.\n`;
    const txt: string[] = [];
    for (let i = 0; i < TXT_RECORDS; i++) txt.push(`t${i} 3600 IN TXT "${'é'.repeat(127)}"`);
    fs.writeFileSync(
      path.join(dir, 'db.example.org'),
      `${soa('example.org.')}ns 3600 IN A 192.0.2.53\nbin 3600 IN TXT "\\255a\\000" "q\\"b\\\\"\n${txt.join('\n')}\n`,
    );
    // Two PTRs at one name: SkyDNS keeps one (at the exact key); the other is named in the warning.
    fs.writeFileSync(path.join(dir, 'db.rev'), `${soa('2.0.192.in-addr.arpa.')}1 3600 IN PTR one.example.org.\n1 3600 IN PTR two.example.org.\n`);
    corefile = path.join(dir, 'Corefile');
    fs.writeFileSync(
      corefile,
      `example.org {\n    file ${path.join(dir, 'db.example.org')}\n}\n2.0.192.in-addr.arpa {\n    file ${path.join(dir, 'db.rev')}\n}\n`,
    );
  }, 30_000);

  afterAll(async () => {
    client?.close();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("fits every transaction under etcd's limit in bytes, and carries TXT bytes escaped", async () => {
    const first = await sync();
    expect(first.code, first.stderr.slice(-1500)).toBe(0);
    const updated = logLine(first.stderr, 'sync: etcd updated')!;
    expect(updated.transactions as number).toBeGreaterThan(1);
    const all = await client.getAll().prefix('/skydns/org/example/').strings();
    const texts = Object.values(all)
      .map((v) => (JSON.parse(v) as { text?: string }).text)
      .filter((t): t is string => t !== undefined);
    expect(texts).toHaveLength(TXT_RECORDS + 1);
    // A byte that is not UTF-8 stays that byte; quote and backslash escaped as miekg/dns writes them.
    expect(texts).toContain('\\255a\\000q\\"b\\\\');
    expect(texts).toContain('\\195\\169'.repeat(127));
    expect(texts.join('')).not.toContain('\ufffd');
    // Every stored value is ASCII: its length is its size in bytes.
    for (const v of Object.values(all)) expect(Buffer.byteLength(v)).toBe(v.length);

    // The PTR SkyDNS could not hold is named.
    const dropped = logLine(first.stderr, 'SkyDNS holds one PTR or CNAME per name')!;
    expect(dropped.dropped).toBe(1);
    expect(String(dropped.msg)).toMatch(/1\.2\.0\.192\.in-addr\.arpa\. PTR (one|two)\.example\.org/);
  }, 40_000);

  it("a run with nothing to write logs etcd's revision", async () => {
    const rev = Number((await client.get('/').exec()).header.revision);
    const again = await sync();
    expect(again.code, again.stderr.slice(-1500)).toBe(0);
    const line = logLine(again.stderr, 'sync: etcd already up to date')!;
    expect(line.mode).toBe('none');
    expect(line.revision).toBe(rev);
  }, 30_000);
});
