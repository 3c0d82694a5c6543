// DNS over HTTPS connections that hold a slot without doing anything useful: a TLS handshake that
// never finishes, a connection that never sends a request, more connections than max_connections.
// Each is closed within its bound, and another client is answered meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import tls from 'node:tls';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import type { TcpOptions } from '../../src/server/tcp.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { h2Connect, h2Request, post, type DohTls } from '../server/doh-client.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { buildQuery, rawRecords, T } from '../server/raw.js';

/** A DoH server for the example cluster with these limits. */
async function dohApp(c: TestCerts, tcp: Partial<TcpOptions>, lines = ''): Promise<{ app: App; port: number }> {
  const app = await buildApp({
    corefileText: `https://cluster.local:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n${lines}  kubernetes cluster.local\n}\n`,
    manifests: [path.join(repoRoot, 'examples/manifests')],
    logger: pino({ level: process.env.DOH_DEBUG ? 'debug' : 'silent' }),
    tcp,
  });
  return { app, port: (await app.listen())[0]!.port };
}

/** Another client gets the kubernetes answer over a fresh HTTP/2 connection. */
async function answered(port: number, clientTls: DohTls): Promise<void> {
  const session = await h2Connect(port, clientTls);
  try {
    const res = await h2Request(session, post(buildQuery({ id: 0, name: 'kubernetes.default.svc.cluster.local', type: T.A })));
    expect(res.status).toBe(200);
    expect(rawRecords(res.body).map((r) => r.rdata.join('.'))).toEqual(['10.96.0.1']);
  } finally {
    session.destroy();
  }
}

/** A connection's close, as a promise that gives up after 10 s. */
function closing(s: { once(ev: 'close', f: () => void): unknown }, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const give = setTimeout(() => reject(new Error(`${what} was not closed within 10 s`)), 10_000);
    s.once('close', () => {
      clearTimeout(give);
      resolve(Date.now());
    });
  });
}

describeNeeding(['openssl'], 'DoH connections that do nothing', () => {
  const handshakeTimeoutMs = 400;
  const readMs = 500;
  let c: TestCerts;
  let clientTls: DohTls;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    clientTls = { ca: c.read(c.ca), servername: dotHostname };
    ({ app, port } = await dohApp(c, { handshakeTimeoutMs, messageTimeoutMs: readMs }));
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
    it(`a TLS client that ${what} is closed at the handshake deadline; another is answered meanwhile`, async () => {
      const stalled = connect(port, '127.0.0.1');
      stalled.on('error', () => {});
      const closed = closing(stalled, 'the stalled handshake');
      await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
      const opened = Date.now();
      if (bytes.length > 0) stalled.write(bytes);
      await answered(port, clientTls);
      expect((await closed) - opened).toBeGreaterThanOrEqual(handshakeTimeoutMs - 50);
    });
  }

  for (const alpn of ['http/1.1', 'h2']) {
    it(`a client that finishes the handshake (${alpn}) and never sends a request is closed; another is answered meanwhile`, async () => {
      const silent = tls.connect({ host: '127.0.0.1', port, ...clientTls, ALPNProtocols: [alpn] });
      silent.on('error', () => {});
      // It reads (the server's HTTP/2 SETTINGS, then the close) but never sends.
      silent.resume();
      const closed = closing(silent, 'the silent connection');
      await new Promise<void>((resolve) => silent.once('secureConnect', () => resolve()));
      expect(silent.alpnProtocol).toBe(alpn);
      await answered(port, clientTls);
      await closed;
    });
  }

  it('a POST whose body never completes is dropped at the read deadline; the connection still answers (HTTP/2)', async () => {
    const session = await h2Connect(port, clientTls);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message' });
      stream.on('error', () => {});
      stream.write(Buffer.from([0, 0, 1]));
      const start = Date.now();
      await closing(stream, 'the unfinished POST');
      expect(Date.now() - start).toBeGreaterThanOrEqual(readMs - 100);
      const res = await h2Request(session, post(buildQuery({ id: 0, name: 'kubernetes.default.svc.cluster.local', type: T.A })));
      expect(res.status).toBe(200);
    } finally {
      session.destroy();
    }
  });
});

describeNeeding(['openssl'], 'DoH over max_connections', () => {
  let c: TestCerts;
  let clientTls: DohTls;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    clientTls = { ca: c.read(c.ca), servername: dotHostname };
    // Deadlines far off: what closes connections here is the cap.
    ({ app, port } = await dohApp(c, { messageTimeoutMs: 60_000, idleTimeoutMs: 60_000 }, '  https {\n    max_connections 3\n  }\n'));
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  it('a newcomer at the cap takes the slot of the idlest connection, one that never asked first', async () => {
    // One connection that was answered once, then two that never ask: the cap is full.
    const used = await h2Connect(port, clientTls);
    used.on('error', () => {});
    expect((await h2Request(used, post(buildQuery({ id: 0, name: 'kubernetes.default.svc.cluster.local', type: T.A })))).status).toBe(200);
    const silent = [];
    for (let i = 0; i < 2; i++) {
      const s = tls.connect({ host: '127.0.0.1', port, ...clientTls, ALPNProtocols: ['h2'] });
      s.on('error', () => {});
      s.resume();
      const closed = closing(s, `silent connection ${i}`);
      await new Promise<void>((resolve) => s.once('secureConnect', () => resolve()));
      silent.push({ s, closed });
    }
    const newcomers: Awaited<ReturnType<typeof h2Connect>>[] = [];
    const ask = async (session: Awaited<ReturnType<typeof h2Connect>>): Promise<number> =>
      (await h2Request(session, post(buildQuery({ id: 0, name: 'kubernetes.default.svc.cluster.local', type: T.A })))).status;
    const newcomer = async (): Promise<Awaited<ReturnType<typeof h2Connect>>> => {
      const session = await h2Connect(port, clientTls);
      session.on('error', () => {});
      newcomers.push(session);
      expect(await ask(session)).toBe(200);
      return session;
    };
    try {
      // Each newcomer displaces a silent one, oldest first; the used one stays.
      const first = await newcomer();
      await silent[0]!.closed;
      await newcomer();
      await silent[1]!.closed;
      expect(used.destroyed || used.closed).toBe(false);
      expect(await ask(used)).toBe(200);
      // With every connection answered once, the one idle longest goes: the first newcomer.
      const firstClosed = closing(first, 'the first newcomer');
      await newcomer();
      await firstClosed;
      expect(await ask(used)).toBe(200);
    } finally {
      used.destroy();
      for (const { s } of silent) s.destroy();
      for (const n of newcomers) n.destroy();
    }
  });
});

describe('DoH without TLS: connections that do nothing', () => {
  const readMs = 500;
  let app: App;
  let port: number;
  beforeAll(async () => {
    app = await buildApp({
      corefileText: 'https://cluster.local:0 {\n  bind 127.0.0.1\n  kubernetes cluster.local\n}\n',
      manifests: [path.join(repoRoot, 'examples/manifests')],
      logger: pino({ level: 'silent' }),
      tcp: { messageTimeoutMs: readMs, maxConnectionsPerClient: 4 },
    });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('silent plain connections are closed at the read deadline, the oldest displaced at the per-client cap; HTTP/2 with prior knowledge is answered', async () => {
    const silent = [];
    for (let i = 0; i < 5; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      const closed = closing(s, `silent plain connection ${i}`);
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
      silent.push({ s, closed, opened: Date.now() });
    }
    try {
      // The fifth displaced the first (4 per client); the others go at the deadline.
      const first = await silent[0]!.closed;
      expect(first - silent[0]!.opened).toBeLessThan(readMs - 100);
      const session = await h2Connect(port);
      try {
        const res = await h2Request(session, post(buildQuery({ id: 0, name: 'kubernetes.default.svc.cluster.local', type: T.A })));
        expect(res.status).toBe(200);
      } finally {
        session.destroy();
      }
      // The client's own connection displaced the second; the rest go at the deadline.
      expect((await silent[1]!.closed) - silent[1]!.opened).toBeLessThan(readMs - 50);
      for (const x of silent.slice(2)) expect((await x.closed) - x.opened).toBeGreaterThanOrEqual(readMs - 50);
    } finally {
      for (const { s } of silent) s.destroy();
    }
  });
});
