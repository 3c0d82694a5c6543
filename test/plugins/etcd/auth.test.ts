// etcd with authentication and TLS: `credentials USER PASS` and `tls CERT KEY CACERT` reach a
// real etcd that requires them (a password user; client certificates from a test CA), and a
// replica without them stays not ready instead of serving nothing.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../../helpers/clients.js';
import { startEtcd, type EtcdCluster } from '../../helpers/etcd.js';
import { freePort, startServer, which } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const openssl = which('openssl');
const etcdctl = which('etcdctl');

function ctl(endpoint: string, ...args: string[]): string {
  return execFileSync(etcdctl!, ['--endpoints', endpoint, ...args], { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } });
}

describeNeeding(['etcd', 'dig', 'openssl', 'etcdctl'], 'etcd credentials and TLS', () => {
  let dir: string;
  let plain: EtcdCluster;
  let secure: EtcdCluster;
  let pki: Record<'ca' | 'cert' | 'key', string>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-auth-'));
    const f = (n: string): string => path.join(dir, n);
    const ssl = (...args: string[]): void => void execFileSync(openssl!, args, { stdio: 'ignore' });
    // A CA, and one certificate for 127.0.0.1 used by etcd as server and by clusterdns as client.
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=clusterdns test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
    fs.writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', f('node.key'), '-out', f('node.csr'));
    ssl(
      'x509',
      '-req',
      '-in',
      f('node.csr'),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      f('ext.cnf'),
      '-out',
      f('node.pem'),
    );
    pki = { ca: f('ca.pem'), cert: f('node.pem'), key: f('node.key') };

    plain = await startEtcd(1);
    const ep = plain.endpoints[0]!;
    ctl(ep, 'put', '/skydns/test/auth/a', '{"host":"10.8.0.1"}');
    ctl(ep, 'user', 'add', 'root:rootpw');
    ctl(ep, 'user', 'add', 'dns:dnspw');
    ctl(ep, 'role', 'add', 'dnsread');
    ctl(ep, 'role', 'grant-permission', 'dnsread', '--prefix=true', 'read', '/skydns/');
    ctl(ep, 'user', 'grant-role', 'dns', 'dnsread');
    ctl(ep, 'auth', 'enable');

    // TLS with client certificates required; the member's client URL is https.
    secure = await startEtcd(1, ['--cert-file', pki.cert, '--key-file', pki.key, '--trusted-ca-file', pki.ca, '--client-cert-auth'], pki);
    execFileSync(
      etcdctl!,
      ['--endpoints', secure.endpoints[0]!, '--cacert', pki.ca, '--cert', pki.cert, '--key', pki.key, 'put', '/skydns/test/tls/a', '{"host":"10.8.1.1"}'],
      { env: { ...process.env, ETCDCTL_API: '3' } },
    );
  }, 40_000);

  afterAll(async () => {
    await plain?.stop();
    await secure?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('credentials: a read-only etcd user is enough; without it the replica is not ready', async () => {
    const conf = path.join(dir, 'Auth.Corefile');
    const readyPort = await freePort();
    fs.writeFileSync(
      conf,
      `auth.test {\n    bind 127.0.0.1\n    ready 127.0.0.1:${readyPort}\n    etcd {\n        endpoint ${plain.endpoints[0]}\n        credentials dns dnspw\n    }\n}\n`,
    );
    const server = await startServer(['--conf', conf]);
    try {
      expect((await digQuery(dig!, server.port, 'a.auth.test.', 'A', false)).answer).toEqual(['a.auth.test. 300 IN A 10.8.0.1']);
      expect((await fetch(`http://127.0.0.1:${readyPort}/ready`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    const noauth = path.join(dir, 'NoAuth.Corefile');
    const readyPort2 = await freePort();
    fs.writeFileSync(
      noauth,
      `auth.test {\n    bind 127.0.0.1\n    ready 127.0.0.1:${readyPort2}\n    etcd {\n        endpoint ${plain.endpoints[0]}\n    }\n}\n`,
    );
    const denied = await startServer(['--conf', noauth], { until: 'listening' });
    try {
      expect((await digQuery(dig!, denied.port, 'a.auth.test.', 'A', false)).rcode).toBe('SERVFAIL');
      expect((await fetch(`http://127.0.0.1:${readyPort2}/ready`)).status).toBe(503);
      expect(denied.logs.some((l) => l.includes('cannot read etcd; not ready') && l.includes('user name is empty'))).toBe(true);
    } finally {
      await denied.stop();
    }
  }, 30_000);

  it('tls CERT KEY CACERT: client certificates to an https etcd', async () => {
    const conf = path.join(dir, 'Tls.Corefile');
    fs.writeFileSync(
      conf,
      `tls.test {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${secure.endpoints[0]}\n        tls ${pki.cert} ${pki.key} ${pki.ca}\n    }\n}\n`,
    );
    const server = await startServer(['--conf', conf]);
    try {
      expect((await digQuery(dig!, server.port, 'a.tls.test.', 'A', false)).answer).toEqual(['a.tls.test. 300 IN A 10.8.1.1']);
    } finally {
      await server.stop();
    }
  }, 30_000);
});
