// A Corefile reload that reads new certificate files keeps the tls:// listener open: a DoT client
// connected before the reload keeps its connection and is answered, a new connection sees the new
// certificate (its fingerprint); the port stays the same (a reopened `:0` listener would move).
// A reload that changes a dns:// block's timeouts opens its listener again with them.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import type http2 from 'node:http2';
import type tls from 'node:tls';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotConnect, dotExchange } from './dot-client.js';
import { getPath, h2Connect, h2Request } from './doh-client.js';
import { dotHostname, makeCerts, type TestCerts } from './dot-certs.js';
import { buildQuery, idOf, parseHeader, T, TcpConn } from './raw.js';

const manifests = path.join(repoRoot, 'examples/manifests');
const kubernetesApi = 'kubernetes.default.svc.cluster.local';
const fingerprint = (pem: Buffer): string => new X509Certificate(pem).fingerprint256;

describeNeeding(['openssl'], 'Corefile reload with new DoT certificate files', () => {
  let a: TestCerts;
  let b: TestCerts;
  let live: string;
  let app: App;
  let port: number;
  beforeAll(async () => {
    [a, b] = [makeCerts(), makeCerts()];
    live = mkdtempSync(path.join(tmpdir(), 'dot-reload-'));
    copyFileSync(a.serverCert, path.join(live, 'tls.crt'));
    copyFileSync(a.serverKey, path.join(live, 'tls.key'));
    const conf = path.join(live, 'Corefile');
    writeFileSync(conf, 'tls://cluster.local:0 {\n  bind 127.0.0.1\n  tls tls.crt tls.key\n  kubernetes cluster.local\n}\n');
    app = await buildApp({ conf, manifests: [manifests], logger: pino({ level: 'silent' }) });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    for (const c of [a, b]) c?.remove();
    if (live) rmSync(live, { recursive: true, force: true });
  });

  it('keeps the listener and its connections; new connections see the new certificate', async () => {
    const before = await dotConnect(port, { ca: a.read(a.ca), servername: dotHostname });
    try {
      expect((await dotExchange(before, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);
      copyFileSync(b.serverCert, path.join(live, 'tls.crt'));
      copyFileSync(b.serverKey, path.join(live, 'tls.key'));
      expect(await app.reload('test: new certificate files')).toBe(true);

      const after = await dotConnect(port, { ca: b.read(b.ca), servername: dotHostname });
      try {
        expect(after.getPeerCertificate().fingerprint256).toBe(fingerprint(b.read(b.serverCert)));
        expect((await dotExchange(after, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);
      } finally {
        after.destroy();
      }
      expect(before.destroyed).toBe(false);
      expect(before.getPeerCertificate().fingerprint256).toBe(fingerprint(a.read(a.serverCert)));
      expect((await dotExchange(before, kubernetesApi, T.A)).answers?.map((x) => x.data)).toEqual(['10.96.0.1']);
    } finally {
      before.destroy();
    }
  });
});

it('a reload that changes the timeouts of a dns:// block opens its listener again with them', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'timeouts-reload-'));
  const conf = path.join(dir, 'Corefile');
  const write = (idle: string): void => writeFileSync(conf, `.:0 {\n  bind 127.0.0.1\n  timeouts {\n    idle ${idle}\n  }\n  kubernetes cluster.local\n}\n`);
  write('1h');
  const app = await buildApp({ conf, manifests: [manifests], logger: pino({ level: 'silent' }) });
  try {
    await app.listen();
    write('1s');
    expect(await app.reload('test: timeouts changed')).toBe(true);
    const port = (app as unknown as { listeners: { port: number }[] }).listeners[0]!.port;
    const c = await TcpConn.open({ port });
    try {
      const q = buildQuery({ name: kubernetesApi, type: T.A });
      await c.send(q);
      expect(parseHeader(await c.read()).id).toBe(idOf(q));
      expect(await c.waitClosed(5000), 'idle 1s after the reload: connection still open after 5 s').toBe(true);
    } finally {
      c.destroy();
    }
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// DoH and gRPC listeners take new certificate files in place too: the port stays, an HTTP/2
// session opened before the reload keeps answering, a new TLS connection sees the new certificate.
describeNeeding(['openssl'], 'Corefile reload with new certificate files for https:// and grpc://', () => {
  it.each(['https', 'grpc'])('%s:// keeps its listener and connections', async (scheme) => {
    const [a, b] = [makeCerts(), makeCerts()];
    const live = mkdtempSync(path.join(tmpdir(), `${scheme}-reload-`));
    copyFileSync(a.serverCert, path.join(live, 'tls.crt'));
    copyFileSync(a.serverKey, path.join(live, 'tls.key'));
    const conf = path.join(live, 'Corefile');
    writeFileSync(conf, `${scheme}://cluster.local:0 {\n  bind 127.0.0.1\n  tls tls.crt tls.key\n  kubernetes cluster.local\n}\n`);
    const app = await buildApp({ conf, manifests: [manifests], logger: pino({ level: 'silent' }) });
    const sessions: http2.ClientHttp2Session[] = [];
    try {
      const port = (await app.listen())[0]!.port;
      const before = await h2Connect(port, { ca: a.read(a.ca), servername: dotHostname });
      sessions.push(before);
      if (scheme === 'https') expect((await h2Request(before, { path: getPath(buildQuery({ name: kubernetesApi, type: T.A })) })).status).toBe(200);
      copyFileSync(b.serverCert, path.join(live, 'tls.crt'));
      copyFileSync(b.serverKey, path.join(live, 'tls.key'));
      expect(await app.reload('test: new certificate files')).toBe(true);
      expect((app as unknown as { listeners: { port: number }[] }).listeners[0]!.port).toBe(port);

      const after = await h2Connect(port, { ca: b.read(b.ca), servername: dotHostname });
      sessions.push(after);
      expect((after.socket as tls.TLSSocket).getPeerCertificate().fingerprint256).toBe(fingerprint(b.read(b.serverCert)));
      expect(before.closed || before.destroyed).toBe(false);
      if (scheme === 'https') {
        const reply = await h2Request(before, { path: getPath(buildQuery({ name: kubernetesApi, type: T.A })) });
        expect(reply.status).toBe(200);
        expect((await h2Request(after, { path: getPath(buildQuery({ name: kubernetesApi, type: T.A })) })).status).toBe(200);
      }
    } finally {
      for (const s of sessions) s.destroy();
      await app.close();
      for (const c of [a, b]) c.remove();
      rmSync(live, { recursive: true, force: true });
    }
  });
});
