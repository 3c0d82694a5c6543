// `serve --tls-handshake-timeout`: the deadline of a DNS over TLS handshake, set from the command
// line. A client that opens a connection and never starts its handshake is closed at the flag's
// deadline, well before the 5 s default; a value that is no duration stops the server at start.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { freePort, launcher, repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotConnect, dotExchange } from '../server/dot-client.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { T } from '../server/raw.js';

it('refuses a --tls-handshake-timeout that is no positive duration, naming the flag', () => {
  for (const value of ['soon', '0s']) {
    const r = spawnSync(process.execPath, [launcher, 'serve', '--tls-handshake-timeout', value], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`--tls-handshake-timeout ${value}: give a positive duration such as 500ms, 3s or 1m`);
  }
});

describeNeeding(['openssl'], 'serve --tls-handshake-timeout', () => {
  let c: TestCerts;
  let server: RunningServer;
  let dotPort: number;
  beforeAll(async () => {
    c = makeCerts();
    dotPort = await freePort();
    const conf = path.join(c.dir, 'Corefile');
    writeFileSync(conf, `tls://cluster.local:${dotPort} {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  kubernetes cluster.local\n}\n`);
    server = await startServer(['--conf', conf, '--manifests', path.join(repoRoot, 'examples/manifests'), '--tls-handshake-timeout', '1s']);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    c?.remove();
  });

  it('closes a connection that never starts its handshake after about 1 s; a real client is answered', async () => {
    const stalled = connect(dotPort, '127.0.0.1');
    stalled.on('error', () => {});
    const opened = await new Promise<number>((resolve) => stalled.once('connect', () => resolve(Date.now())));
    const closed = new Promise<number>((resolve, reject) => {
      const give = setTimeout(() => reject(new Error('the stalled connection was not closed within 3.5 s (the default deadline is 5 s)')), 3500);
      stalled.once('close', () => {
        clearTimeout(give);
        resolve(Date.now());
      });
    });
    const other = await dotConnect(dotPort, { ca: c.read(c.ca), servername: dotHostname });
    try {
      expect((await dotExchange(other, 'kubernetes.default.svc.cluster.local', T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
    } finally {
      other.destroy();
    }
    const at = await closed.finally(() => stalled.destroy());
    expect(at - opened).toBeGreaterThanOrEqual(950);
  }, 15_000);
});
