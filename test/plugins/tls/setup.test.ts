// The tls plugin's Corefile lines (CoreDNS plugin/tls/tls_test.go, with files made here) and the
// tls:// server keys: accepted lines and what they configure, the exact `line: reason` of each
// rejected one.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { App } from '../../../src/app.js';
import { parseServerKey } from '../../../src/chain/corefile-keys.js';
import type { ListenSpec } from '../../../src/app-options.js';
import { setupBlock } from '../../helpers/setup.js';
import { describeNeeding } from '../../helpers/tools.js';
import { makeCerts, type TestCerts } from '../../server/dot-certs.js';

it('tls:// keys take port 853 when they name none, and keep their transport', () => {
  expect(parseServerKey('tls://example.org')).toEqual([{ raw: 'tls://example.org', zone: 'example.org.', port: 853, transport: 'tls' }]);
  expect(parseServerKey('tls://.:8853')).toEqual([{ raw: 'tls://.:8853', zone: '.', port: 8853, transport: 'tls' }]);
  expect(parseServerKey('tls://10.0.0.0/24')).toEqual([{ raw: 'tls://10.0.0.0/24', zone: '0.0.10.in-addr.arpa.', port: 853, transport: 'tls' }]);
  expect(parseServerKey('dns://example.org')).toEqual([{ raw: 'dns://example.org', zone: 'example.org.' }]);
});

async function specs(body: string, key: string): Promise<ListenSpec[] | string[]> {
  let out: ListenSpec[] = [];
  const r = await setupBlock(body, {
    key,
    inspect: (app: App) => {
      out = (app as unknown as { config: { specs: ListenSpec[] } }).config.specs;
    },
  });
  return r.errors.length > 0 ? r.errors : out;
}

describeNeeding(['openssl'], 'tls setup', () => {
  let c: TestCerts;
  beforeAll(() => {
    c = makeCerts();
    writeFileSync(path.join(c.dir, 'garbage.pem'), 'not a certificate\n');
  });
  afterAll(() => c?.remove());

  it('a tls:// block with tls listens over TLS only, TLS 1.2 at least', async () => {
    const got = await specs(`tls ${c.serverCert} ${c.serverKey}`, 'tls://example.org:8853 dns://example.org:1053');
    expect(got).toHaveLength(2);
    const [dot, plain] = got as ListenSpec[];
    expect([dot!.port, plain!.port]).toEqual([8853, 1053]);
    expect([dot!.transport, plain!.transport]).toEqual(['tls', 'dns']);
    expect(plain!.tls).toBeUndefined();
    expect(dot!.tls?.options).toMatchObject({ minVersion: 'TLSv1.2', requestCert: false, rejectUnauthorized: false });
    expect(dot!.tls?.options.cert).toEqual(c.read(c.serverCert));
  });

  it.each([
    ['nocert', false, false, false],
    ['request', true, false, false],
    ['require', true, true, false],
    ['verify_if_given', true, false, true],
    ['require_and_verify', true, true, false],
  ])('client_auth %s', async (mode, requestCert, rejectUnauthorized, verifyIfGiven) => {
    const got = (await specs(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n  client_auth ${mode}\n}`, 'tls://.:8853')) as ListenSpec[];
    expect(got[0]!.tls?.options).toMatchObject({ requestCert, rejectUnauthorized, ca: c.read(c.ca) });
    expect(got[0]!.tls?.verifyIfGiven).toBe(verifyIfGiven);
  });

  it('a tls:// block without tls listens for plain DNS over TCP', async () => {
    const got = (await specs('', 'tls://.:8853')) as ListenSpec[];
    expect(got[0]!.transport).toBe('tls');
    expect(got[0]!.tls).toBeUndefined();
  });

  it('rejects bad lines with the line and the reason', async () => {
    const cases: [string, string[]][] = [
      ['tls', ['2: tls: wrong number of arguments: 0 given, 2 to 3 expected; usage `tls CERT KEY [CA]`, e.g. `tls cert.pem key.pem ca.pem`']],
      [`tls ${c.serverCert}`, ['2: tls: wrong number of arguments: 1 given, 2 to 3 expected; usage `tls CERT KEY [CA]`, e.g. `tls cert.pem key.pem ca.pem`']],
      [`tls a b c d`, ['2: tls: wrong number of arguments: 4 given, 2 to 3 expected; usage `tls CERT KEY [CA]`, e.g. `tls cert.pem key.pem ca.pem`']],
      [`tls ${c.dir}/nope.pem ${c.serverKey}`, [`2: tls: cannot read the certificate file "${c.dir}/nope.pem": no such file`]],
      [`tls ${c.serverCert} ${c.dir}/nope.key`, [`2: tls: cannot read the key file "${c.dir}/nope.key": no such file`]],
      [`tls ${c.serverCert} ${c.serverKey} ${c.dir}/nope.pem`, [`2: tls: cannot read the CA file "${c.dir}/nope.pem": no such file`]],
      [`tls ${c.serverCert} ${c.clientKey}`, ['2: tls: cannot use the certificate and key: error:05800074:x509 certificate routines::key values mismatch']],
      [`tls ${c.dir}/garbage.pem ${c.serverKey}`, ['2: tls: cannot use the certificate and key: error:0480006C:PEM routines::no start line']],
      [
        `tls ${c.serverCert} ${c.serverKey} {\n  client_auth always\n}`,
        ['3: tls client_auth: client_auth "always" is not one of nocert, request, require, verify_if_given or require_and_verify'],
      ],
      [
        `tls ${c.serverCert} ${c.serverKey} {\n  client_auth\n}`,
        ['3: tls client_auth: wrong number of arguments: 0 given, 1 expected; usage `client_auth nocert|request|require|verify_if_given|require_and_verify`'],
      ],
      [`tls ${c.serverCert} ${c.serverKey} {\n  clientauth request\n}`, ['3: unknown tls option "clientauth"; the only option is client_auth']],
      [
        `tls ${c.serverCert} ${c.serverKey}\ntls ${c.serverCert} ${c.serverKey}`,
        ['3: plugin "tls" appears twice in this server block (first at line 2); merge the two'],
      ],
    ];
    const got: [string, string[]][] = [];
    for (const [body] of cases) got.push([body, (await setupBlock(body, { key: 'tls://.:8853' })).errors]);
    expect(got).toEqual(cases);
  });
});
