// A DoT listener takes a new certificate in place (Listener.updateTls, what a Corefile reload with
// new certificate files calls): a client connected before keeps its connection and is answered,
// a new connection is served the new certificate (checked by its fingerprint); a change the
// secure context cannot carry (client_auth, TLS removed) asks for the listener to be reopened.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import type { ListenSpec } from '../../src/app-options.js';
import type { ServerTls } from '../../src/chain/transport.js';
import type { Listener } from '../../src/server/listen.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotConnect, dotExchange } from './dot-client.js';
import { dotHostname, makeCerts, type TestCerts } from './dot-certs.js';
import { T } from './raw.js';

const manifests = path.join(repoRoot, 'examples/manifests');
const kubernetesApi = 'kubernetes.default.svc.cluster.local';

const corefile = (cert: string, key: string, extra = ''): string =>
  `tls://cluster.local:0 {\n  bind 127.0.0.1\n  tls ${cert} ${key}${extra}\n  kubernetes cluster.local\n}\n`;

/** What the tls plugin makes of this Corefile now (it reads the files at setup, as a reload does). */
async function serverTls(text: string): Promise<ServerTls | undefined> {
  const app = await buildApp({ corefileText: text, manifests: [manifests], logger: pino({ level: 'silent' }), oneShot: true });
  try {
    return (app as unknown as { config: { specs: ListenSpec[] } }).config.specs[0]!.tls;
  } finally {
    await app.close();
  }
}

const fingerprint = (pem: Buffer): string => new X509Certificate(pem).fingerprint256;

describeNeeding(['openssl'], 'DoT certificate update in place', () => {
  let a: TestCerts;
  let b: TestCerts;
  let live: string;
  let cert: string;
  let key: string;
  let app: App;
  let listener: Listener;
  beforeAll(async () => {
    [a, b] = [makeCerts(), makeCerts()];
    live = mkdtempSync(path.join(tmpdir(), 'dot-live-'));
    [cert, key] = [path.join(live, 'tls.crt'), path.join(live, 'tls.key')];
    copyFileSync(a.serverCert, cert);
    copyFileSync(a.serverKey, key);
    app = await buildApp({ corefileText: corefile(cert, key), manifests: [manifests], logger: pino({ level: 'silent' }) });
    await app.listen();
    listener = (app as unknown as { listeners: Listener[] }).listeners[0]!;
  });
  afterAll(async () => {
    await app?.close();
    for (const c of [a, b]) c?.remove();
    if (live) rmSync(live, { recursive: true, force: true });
  });

  it('keeps the socket and open connections; new connections get the new certificate', async () => {
    const before = await dotConnect(listener.port, { ca: a.read(a.ca), servername: dotHostname });
    try {
      expect(before.getPeerCertificate().fingerprint256).toBe(fingerprint(a.read(a.serverCert)));
      expect((await dotExchange(before, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);

      copyFileSync(b.serverCert, cert);
      copyFileSync(b.serverKey, key);
      const next = await serverTls(corefile(cert, key));
      expect(listener.updateTls?.(next)).toBe(true);

      const after = await dotConnect(listener.port, { ca: b.read(b.ca), servername: dotHostname });
      try {
        expect(after.getPeerCertificate().fingerprint256).toBe(fingerprint(b.read(b.serverCert)));
        expect((await dotExchange(after, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);
      } finally {
        after.destroy();
      }
      // A client that trusts only the old CA now fails to verify the listener.
      await expect(dotConnect(listener.port, { ca: a.read(a.ca), servername: dotHostname })).rejects.toThrow();
      // The connection opened before the update is the same socket, still answered.
      expect(before.destroyed).toBe(false);
      expect((await dotExchange(before, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);
      expect(before.getPeerCertificate().fingerprint256).toBe(fingerprint(a.read(a.serverCert)));
    } finally {
      before.destroy();
    }
  });

  it('asks to be reopened for what the secure context cannot carry: client_auth, or TLS removed', async () => {
    const mode = await serverTls(corefile(cert, key, ` ${b.ca} {\n    client_auth require_and_verify\n  }`));
    expect(listener.updateTls?.(mode)).toBe(false);
    expect(listener.updateTls?.(undefined)).toBe(false);
    // The refused updates left the listener as it was: the certificate of the last applied one.
    const s = await dotConnect(listener.port, { ca: b.read(b.ca), servername: dotHostname });
    try {
      expect(s.getPeerCertificate().fingerprint256).toBe(fingerprint(b.read(b.serverCert)));
      expect((await dotExchange(s, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);
    } finally {
      s.destroy();
    }
  });

  it('a dns:// listener has no certificate to update', async () => {
    const plain = await buildApp({
      corefileText: '.:0 {\n  bind 127.0.0.1\n  kubernetes cluster.local\n}\n',
      manifests: [manifests],
      logger: pino({ level: 'silent' }),
    });
    try {
      await plain.listen();
      expect((plain as unknown as { listeners: Listener[] }).listeners[0]!.updateTls).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});
