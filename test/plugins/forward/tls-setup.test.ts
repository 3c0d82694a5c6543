// forward's tls:// upstreams and its tls / tls_servername options as setup reads them (CoreDNS
// plugin/forward/setup_test.go TestSetupTLS, plugin/pkg/tls NewTLSConfigFromArgs): accepted
// lines with what they configure, refused lines with their exact errors.
import * as fs from 'node:fs';
import * as path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { corefileErrors } from '../../../src/chain/corefile.js';
import type { ForwardConfig } from '../../../src/plugins/forward/config.js';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import { describeNeeding } from '../../helpers/tools.js';
import { tmpDir } from '../../fixtures/forward/upstreams.js';
import { makeCerts, type TestCerts } from '../../server/dot-certs.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: ForwardConfig }>(body, 'forward')).cfg;
const upstreamsOf = async (body: string) => (await cfgOf(body)).upstreams.map((u) => [u.transport, u.label, u.servername ?? '']);

describe('tls:// upstreams (CoreDNS TestSetupTLS)', () => {
  it.each([
    ['forward . tls://127.0.0.1', [['tls', '127.0.0.1:853', '']]],
    ['forward . tls://127.0.0.1 {\n  tls_servername dns\n}', [['tls', '127.0.0.1:853', '']]],
    ['forward . tls://127.0.0.1%example.net {\n  tls\n}', [['tls', '127.0.0.1:853', 'example.net']]],
    [
      'forward . tls://127.0.0.1%example.net:854 tls://127.0.0.2%example.net tls://fe80::1%example.com {\n  tls\n}',
      [
        ['tls', '127.0.0.1:854', 'example.net'],
        ['tls', '127.0.0.2:853', 'example.net'],
        ['tls', '[fe80::1]:853', 'example.com'],
      ],
    ],
    ['forward . tls://[2400:3200::1%dns.alidns.com]:853 {\n  tls\n}', [['tls', '[2400:3200::1]:853', 'dns.alidns.com']]],
    ['forward . tls://[2400:3200::1]:853 {\n  tls\n  tls_servername dns.alidns.com\n}', [['tls', '[2400:3200::1]:853', '']]],
    [
      'forward . tls://[::1]:8853 TLS://9.9.9.9',
      [
        ['tls', '[::1]:8853', ''],
        ['tls', '9.9.9.9:853', ''],
      ],
    ],
    // The README's example.
    [
      'forward . tls://9.9.9.9 tls://149.112.112.112 {\n  tls_servername dns.quad9.net\n  health_check 5s\n}',
      [
        ['tls', '9.9.9.9:853', ''],
        ['tls', '149.112.112.112:853', ''],
      ],
    ],
    // CoreDNS has no rule against mixing transports: each upstream keeps its own.
    [
      'forward . 127.0.0.1 tls://127.0.0.2 dns://127.0.0.3:5353',
      [
        ['dns', '127.0.0.1:53', ''],
        ['tls', '127.0.0.2:853', ''],
        ['dns', '127.0.0.3:5353', ''],
      ],
    ],
    // A zone on a plain DNS upstream is an IPv6 zone, dropped (CoreDNS's splitZone).
    [
      'forward . 127.0.0.1%eth0 [fe80::1%eth0]:53',
      [
        ['dns', '127.0.0.1:53', ''],
        ['dns', '[fe80::1]:53', ''],
      ],
    ],
  ])('accepts %j', async (body, want) => {
    expect(await upstreamsOf(body)).toEqual(want);
  });

  it('tls_servername sets the name, whether before or after tls; tls alone uses the system roots', async () => {
    expect((await cfgOf('forward . tls://9.9.9.9 {\n  tls_servername dns.quad9.net\n  tls\n}')).tls).toEqual({ servername: 'dns.quad9.net' });
    expect((await cfgOf('forward . tls://9.9.9.9 {\n  tls\n  tls_servername dns.quad9.net\n}')).tls).toEqual({ servername: 'dns.quad9.net' });
    expect((await cfgOf('forward . tls://9.9.9.9')).tls).toEqual({});
  });

  it('reads max_idle_conns and max_age (they bound the cached TLS connections)', async () => {
    const c = await cfgOf('forward . tls://9.9.9.9 {\n  max_idle_conns 4\n  expire 5s\n  max_age 30s\n}');
    expect([c.maxIdleConns, c.expireMs, c.maxAgeMs]).toEqual([4, 5000, 30_000]);
  });

  it.each([
    [
      'forward . tls://127.0.0.1%example.net:854 {\n  tls_servername foo\n}',
      "2: forward: both forward ('foo') and proxy level ('example.net') TLS servernames are set for upstream proxy 'tls://127.0.0.1:854'",
    ],
    ['forward . tls://dns.quad9.net', '2: forward: "tls://dns.quad9.net" is not an IP address; write tls://IP, tls://IP:PORT or tls://IP%SERVERNAME:PORT'],
    ['forward . tls://127.0.0.1:99999', '2: forward: "tls://127.0.0.1:99999" is not an IP address; write tls://IP, tls://IP:PORT or tls://IP%SERVERNAME:PORT'],
    [
      'forward . quic://127.0.0.1',
      "2: forward: 'quic' is not supported as a destination protocol here (quic://127.0.0.1); forward speaks dns:// (or no prefix) and tls://",
    ],
    [
      'forward . 127.0.0.1 https://127.0.0.2',
      "2: forward: 'https' (DNS over HTTPS) is not supported as a destination protocol by clusterdns (https://127.0.0.2); use tls:// (DNS over TLS) or dns://",
    ],
    [
      'forward . tls://127.0.0.1 {\n  tls a b c d\n}',
      '3: forward tls: wrong number of arguments: 4 given, at most 3 expected; usage `tls [CA | CERT KEY | CERT KEY CA]`, e.g. `tls /etc/ssl/upstream-ca.pem`',
    ],
    [
      'forward . tls://127.0.0.1 {\n  tls_servername\n}',
      '3: forward tls_servername: wrong number of arguments: 0 given, 1 expected; usage `tls_servername NAME`, e.g. `tls_servername dns.quad9.net`',
    ],
    ['forward . tls://127.0.0.1 {\n  tls /nonexistent/ca.pem\n}', '3: forward tls: cannot read the CA file "/nonexistent/ca.pem": no such file'],
    [
      'forward . tls://127.0.0.1 {\n  tls /nonexistent/c.pem /nonexistent/k.pem\n}',
      '3: forward tls: cannot read the certificate file "/nonexistent/c.pem": no such file',
    ],
    [
      'forward . tls://127.0.0.1 {\n  doh_method GET\n}',
      '3: forward doh_method is not supported: DNS over HTTPS upstreams are not supported by clusterdns (tls:// upstreams are)',
    ],
    [
      'forward . tls://127.0.0.1 {\n  resolver 10.0.0.1\n}',
      '3: forward resolver is not supported: host name upstreams are not supported by clusterdns: write IP addresses',
    ],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('a CA file without a certificate that parses is an error at the tls line', async () => {
    const dir = tmpDir('clusterdns-fwd-tls-');
    const ca = path.join(dir, 'ca.pem');
    fs.writeFileSync(ca, 'not a certificate\n');
    const body = `forward . tls://127.0.0.1 {\n  tls_servername dns.test\n  tls ${ca}\n}`;
    expect((await setupBlock(body)).errors).toEqual([`4: forward tls: the CA file "${ca}" holds no PEM certificate`]);
    fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect((await setupBlock(body)).errors).toEqual([`4: forward tls: the CA file "${ca}" holds no PEM certificate`]);
  });
});

describeNeeding(['openssl'], 'tls option files (openssl-made certificates)', () => {
  let c: TestCerts;
  beforeAll(() => {
    c = makeCerts();
  });
  afterAll(() => c?.remove());

  it('tls CA, tls CERT KEY and tls CERT KEY CA load their files', async () => {
    const read = (f: string) => fs.readFileSync(f);
    expect((await cfgOf(`forward . tls://127.0.0.1 {\n  tls ${c.ca}\n}`)).tls).toEqual({ ca: read(c.ca) });
    expect((await cfgOf(`forward . tls://127.0.0.1 {\n  tls ${c.clientCert} ${c.clientKey}\n}`)).tls).toEqual({
      cert: read(c.clientCert),
      key: read(c.clientKey),
    });
    expect((await cfgOf(`forward . tls://127.0.0.1 {\n  tls ${c.clientCert} ${c.clientKey} ${c.ca}\n  tls_servername dns.test\n}`)).tls).toEqual({
      cert: read(c.clientCert),
      key: read(c.clientKey),
      ca: read(c.ca),
      servername: 'dns.test',
    });
  });

  it('a key that does not match the certificate, and a CA that is a key, are errors at the tls line', async () => {
    expect((await setupBlock(`forward . tls://127.0.0.1 {\n  tls ${c.clientCert} ${c.strangerKey} ${c.ca}\n}`)).errors).toEqual([
      expect.stringMatching(/^3: forward tls: cannot use the certificate and key: .*key values mismatch/),
    ]);
    expect((await setupBlock(`forward . tls://127.0.0.1 {\n  tls ${c.clientKey}\n}`)).errors).toEqual([
      `3: forward tls: the CA file "${c.clientKey}" holds no PEM certificate`,
    ]);
  });

  it('the files are read at each setup: a CA file fixed since is accepted', async () => {
    const dir = tmpDir('clusterdns-fwd-tls-');
    const ca = path.join(dir, 'ca.pem');
    fs.writeFileSync(ca, 'not yet\n');
    const body = `forward . tls://127.0.0.1 {\n  tls ${ca}\n}`;
    expect((await setupBlock(body)).errors).toEqual([`3: forward tls: the CA file "${ca}" holds no PEM certificate`]);
    fs.copyFileSync(c.ca, ca);
    expect((await cfgOf(body)).tls.ca).toEqual(fs.readFileSync(c.ca));
  });

  it('relative file names are read from the Corefile directory', async () => {
    const dir = tmpDir('clusterdns-fwd-tls-');
    fs.copyFileSync(c.ca, path.join(dir, 'upstream-ca.pem'));
    const conf = path.join(dir, 'Corefile');
    fs.writeFileSync(conf, '. {\n  forward . tls://127.0.0.1 {\n    tls upstream-ca.pem\n  }\n}\n');
    const app = await buildApp({ conf, logger: pino({ level: 'silent' }), oneShot: true });
    await app.close();
    fs.writeFileSync(conf, '. {\n  forward . tls://127.0.0.1 {\n    tls missing-ca.pem\n  }\n}\n');
    const err = await buildApp({ conf, logger: pino({ level: 'silent' }), oneShot: true }).then(
      async (a) => {
        await a.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(corefileErrors(err)?.map((e) => `${e.line}: ${e.reason}`)).toEqual(['3: forward tls: cannot read the CA file "missing-ca.pem": no such file']);
  });
});
