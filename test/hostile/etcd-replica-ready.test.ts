// The replica side: a replica that cannot reach etcd is not ready until its first
// full mirror, and says why in words that name the endpoint and the cause, not gRPC's text
// ("14 UNAVAILABLE: No connection established. ... Resolution note: ..."); the "clusterdns ready"
// line waits for that read too, and the line before it says why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';
import { describeNeeding } from '../helpers/tools.js';

describeNeeding(['etcd'], 'readiness of an etcd replica', () => {
  let etcd: EtcdCluster | undefined;
  let server: RunningServer | undefined;
  let dir: string | undefined;

  afterAll(async () => {
    await server?.stop();
    await etcd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('not ready, with the endpoint and the cause in words, until etcd is there and read', async () => {
    etcd = await startEtcd(1);
    const endpoint = etcd.endpoints[0]!;
    await etcd.kill(0);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-ready-'));
    const readyPort = await freePort();
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      `ready.test {\n    bind 127.0.0.1\n    ready 127.0.0.1:${readyPort}\n    etcd {\n        endpoint ${endpoint}\n    }\n}\n`,
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')], { until: 'listening' });
    const srv = server;
    // It serves (SERVFAIL for the zone) but does not say it is ready: the line says why instead.
    expect(srv.logs.some((l) => l.includes('"clusterdns ready"'))).toBe(false);
    const waiting = srv.logs.find((l) => l.includes('clusterdns listening; not ready yet'));
    expect(waiting).toContain(`etcd at ${endpoint}`);
    expect(waiting).not.toMatch(/UNAVAILABLE|Resolution note/);
    expect((await dnsQuery(srv.port, 'a.ready.test.', 'A')).rcode).toBe('SERVFAIL');
    const notReady = await fetch(`http://127.0.0.1:${readyPort}/ready`);
    expect([notReady.status, await notReady.text()]).toEqual([503, 'etcd']);
    await waitUntil('the reasons in the log', () => srv.logs.some((l) => l.includes('Plugins not ready')), 5000);
    const lines = srv.logs.filter((l) => l.includes('cannot read etcd') || l.includes('Plugins not ready'));
    const cause = `etcd at ${endpoint}: connection refused`;
    expect(lines.some((l) => l.includes('cannot read etcd; not ready') && l.includes(cause))).toBe(true);
    expect(lines.some((l) => l.includes('Plugins not ready') && l.includes(cause))).toBe(true);
    for (const l of lines) expect(l).not.toMatch(/UNAVAILABLE|Resolution note/);

    await etcd.restart(0);
    await waitUntil('ready once etcd is read', async () => (await fetch(`http://127.0.0.1:${readyPort}/ready`)).status === 200, 10_000, 100);
    expect((await dnsQuery(srv.port, 'a.ready.test.', 'A')).rcode).toBe('NXDOMAIN');
    await waitUntil('the ready line once etcd is read', () => srv.logs.some((l) => l.includes('"clusterdns ready"')), 5000);
  }, 40_000);
});
