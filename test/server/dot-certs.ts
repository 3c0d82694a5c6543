// A throwaway CA, a server certificate (name dns.test, address 127.0.0.1) and a client
// certificate it signed, made with openssl for the DNS over TLS tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A certificate of another CA, for a client the server must not trust. */
  strangerCert: string;
  strangerKey: string;
  read(file: string): Buffer;
  remove(): void;
}

export const dotHostname = 'dns.test';

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function signed(dir: string, name: string, subject: string, ext: string, caName: string): void {
  openssl(dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${caName}.pem`,
    '-CAkey',
    `${caName}.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    `${name}.pem`,
    '-extfile',
    `${name}.ext`,
  );
}

function selfSigned(dir: string, name: string, subject: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    subject,
  );
}

export function makeCerts(): TestCerts {
  const dir = mkdtempSync(path.join(tmpdir(), 'dot-certs-'));
  selfSigned(dir, 'ca', '/CN=clusterdns test CA');
  signed(dir, 'server', `/CN=${dotHostname}`, `subjectAltName=DNS:${dotHostname},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`, 'ca');
  signed(dir, 'client', '/CN=client', 'extendedKeyUsage=clientAuth\n', 'ca');
  selfSigned(dir, 'stranger-ca', '/CN=another CA');
  signed(dir, 'stranger', '/CN=stranger', 'extendedKeyUsage=clientAuth\n', 'stranger-ca');
  const p = (f: string): string => path.join(dir, f);
  return {
    dir,
    ca: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    strangerCert: p('stranger.pem'),
    strangerKey: p('stranger.key'),
    read: (file) => readFileSync(file),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
