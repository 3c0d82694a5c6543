// A DNS over TLS client that opens a connection and never finishes the TLS handshake is closed
// at the handshake deadline, while another client is answered meanwhile; stalled handshakes count
// against the per-client connection cap, a newcomer displacing the oldest.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import type { TcpOptions } from '../../src/server/tcp.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotConnect, dotExchange } from '../server/dot-client.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { T } from '../server/raw.js';

const handshakeTimeoutMs = 400;

/** A DoT server for the example cluster with these TCP limits. */
function dotApp(c: TestCerts, tcp: Partial<TcpOptions>): Promise<App> {
  return buildApp({
    corefileText: `tls://cluster.local:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  kubernetes cluster.local\n}\n`,
    manifests: [path.join(repoRoot, 'examples/manifests')],
    logger: pino({ level: 'silent' }),
    tcp,
  });
}

describeNeeding(['openssl'], 'DoT handshake deadline', () => {
  let c: TestCerts;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    app = await dotApp(c, { handshakeTimeoutMs });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  for (const [what, bytes] of [
    ['sends nothing', Buffer.alloc(0)],
    // The first bytes of a TLS record header (handshake, TLS 1.0), then silence.
    ['stops inside its ClientHello', Buffer.from([0x16, 0x03, 0x01, 0x02])],
  ] as const) {
    it(`a client that ${what} is closed at the deadline; another is answered meanwhile`, async () => {
      const stalled = connect(port, '127.0.0.1');
      const closed = new Promise<number>((resolve, reject) => {
        const give = setTimeout(() => reject(new Error('the stalled connection was not closed within 10 s')), 10_000);
        stalled.once('close', () => {
          clearTimeout(give);
          resolve(Date.now());
        });
      });
      stalled.on('error', () => {});
      await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
      const opened = Date.now();
      if (bytes.length > 0) stalled.write(bytes);

      const other = await dotConnect(port, { ca: c.read(c.ca), servername: dotHostname });
      try {
        expect((await dotExchange(other, 'kubernetes.default.svc.cluster.local', T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
      } finally {
        other.destroy();
      }
      const at = await closed;
      // Closed by the deadline, not earlier (the timer may fire a little before the wall clock says).
      expect(at - opened).toBeGreaterThanOrEqual(handshakeTimeoutMs - 50);
    });
  }
});

describeNeeding(['openssl'], 'DoT handshakes under the per-client cap', () => {
  let c: TestCerts;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    // A deadline far off: what closes the stalled handshakes here is the cap.
    app = await dotApp(c, { handshakeTimeoutMs: 60_000, maxConnectionsPerClient: 2 });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  it('newcomers displace the oldest stalled handshakes of their address, and a real client is answered', async () => {
    const stalled = [];
    for (let i = 0; i < 3; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
      stalled.push({ s, closed });
    }
    try {
      // The third displaced the first.
      await bounded(stalled[0]!.closed, 'the oldest stalled handshake to be closed');
      const other = await dotConnect(port, { ca: c.read(c.ca), servername: dotHostname });
      try {
        expect((await dotExchange(other, 'kubernetes.default.svc.cluster.local', T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
      } finally {
        other.destroy();
      }
      // The real client displaced the second; the third is still waiting for its deadline.
      await bounded(stalled[1]!.closed, 'the second stalled handshake to be closed');
      expect(stalled[2]!.s.destroyed).toBe(false);
    } finally {
      for (const { s } of stalled) s.destroy();
    }
  });
});

function bounded(p: Promise<void>, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const give = setTimeout(() => reject(new Error(`waited 10 s for ${what}`)), 10_000);
    void p.then(() => {
      clearTimeout(give);
      resolve();
    });
  });
}
