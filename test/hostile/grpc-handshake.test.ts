// DNS over gRPC clients that hold a connection without using it: a TLS handshake that never
// finishes is closed at the handshake deadline, stalled handshakes give way first at
// max_connections, and a connection that never speaks HTTP/2 is closed at the idle deadline.
// Another client is answered meanwhile every time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import tls from 'node:tls';
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { openGrpc } from '../../src/server/grpc.js';
import { defaultTcpOptions, type TcpOptions } from '../../src/server/tcp.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { grpcClient, statusOf, type GrpcTls } from '../server/grpc-client.js';
import { buildQuery, T } from '../server/raw.js';

const kubernetesApi = 'kubernetes.default.svc.cluster.local';

function grpcApp(c: TestCerts, grpcServer: string, tcp: Partial<TcpOptions>): Promise<App> {
  return buildApp({
    corefileText: `grpc://cluster.local:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  ${grpcServer}\n  kubernetes cluster.local\n}\n`,
    manifests: [path.join(repoRoot, 'examples/manifests')],
    logger: pino({ level: 'silent' }),
    tcp,
  });
}

async function answered(port: number, tls?: GrpcTls): Promise<void> {
  const client = grpcClient(port, tls);
  try {
    expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
  } finally {
    client.close();
  }
}

/** A TCP connection that sends `bytes` and then nothing; `closed` resolves with when the server closed it (at most 10 s). */
async function stall(port: number, bytes: Buffer = Buffer.alloc(0)): Promise<{ socket: Socket; opened: number; closed: Promise<number> }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  // Read what the server sends, or the socket never notices it was closed.
  socket.resume();
  const closed = new Promise<number>((resolve, reject) => {
    const give = setTimeout(() => reject(new Error('the stalled connection was not closed within 10 s')), 10_000);
    socket.once('close', () => {
      clearTimeout(give);
      resolve(Date.now());
    });
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const opened = Date.now();
  if (bytes.length > 0) socket.write(bytes);
  return { socket, opened, closed };
}

describeNeeding(['openssl'], 'gRPC TLS handshake deadline', () => {
  const handshakeTimeoutMs = 400;
  let c: TestCerts;
  let app: App;
  let port: number;
  let tls: GrpcTls;
  beforeAll(async () => {
    c = makeCerts();
    tls = { ca: c.read(c.ca), servername: dotHostname };
    app = await grpcApp(c, '', { handshakeTimeoutMs });
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
      const stalled = await stall(port, bytes);
      await answered(port, tls);
      const at = await stalled.closed;
      // Closed by the deadline, not earlier (the timer may fire a little before the wall clock says).
      expect(at - stalled.opened).toBeGreaterThanOrEqual(handshakeTimeoutMs - 50);
    });
  }
});

describeNeeding(['openssl'], 'gRPC handshakes under max_connections', () => {
  let c: TestCerts;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    // A deadline far off: what closes the stalled handshakes here is the cap.
    app = await grpcApp(c, 'grpc_server {\n    max_connections 2\n  }', { handshakeTimeoutMs: 60_000 });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  it('two stalled handshakes fill the cap; a client is answered in the slot of the oldest', async () => {
    const first = await stall(port);
    const second = await stall(port);
    try {
      await answered(port, { ca: c.read(c.ca), servername: dotHostname });
      await first.closed;
      // The second one is still held: one slot was made, not all.
      const stillOpen = await Promise.race([second.closed.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 200))]);
      expect(stillOpen).toBe(true);
    } finally {
      first.socket.destroy();
      second.socket.destroy();
    }
  });
});

describeNeeding(['openssl'], 'gRPC established TLS connections under max_connections', () => {
  let c: TestCerts;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    app = await grpcApp(c, 'grpc_server {\n    max_connections 1\n  }', {});
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  it('a TLS connection that finished its handshake and never asked gives way to a client that asks', async () => {
    const held = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, ca: c.read(c.ca), servername: dotHostname, ALPNProtocols: ['h2'] });
      s.once('secureConnect', () => resolve(s));
      s.once('error', reject);
    });
    held.on('error', () => {});
    held.resume();
    const closed = new Promise<void>((resolve, reject) => {
      const give = setTimeout(() => reject(new Error('the idle TLS connection was not closed within 10 s')), 10_000);
      held.once('close', () => {
        clearTimeout(give);
        resolve();
      });
    });
    try {
      await answered(port, { ca: c.read(c.ca), servername: dotHostname });
      await closed;
    } finally {
      held.destroy();
    }
  });
});

describe('gRPC connections opened directly (openGrpc)', () => {
  it('a connection that never speaks HTTP/2 is closed at the idle deadline; another is answered meanwhile', async () => {
    const idleMs = 500;
    const reply = Buffer.from(buildQuery({ id: 1, name: kubernetesApi, type: T.A }));
    reply[2]! |= 0x80;
    const server = await openGrpc({
      address: '127.0.0.1',
      port: 0,
      handler: { handle: (msg) => Buffer.concat([msg.subarray(0, 2), reply.subarray(2)]) },
      log: pino({ level: 'silent' }),
      tcp: defaultTcpOptions,
      settings: { timeouts: { idleMs } },
    });
    try {
      const stalled = await stall(server.port);
      const client = grpcClient(server.port);
      try {
        const got = await client.exchange(buildQuery({ id: 0x77, name: kubernetesApi, type: T.A }));
        expect(got.readUInt16BE(0)).toBe(0x77);
      } finally {
        client.close();
      }
      const at = await stalled.closed;
      expect(at - stalled.opened).toBeGreaterThanOrEqual(idleMs - 50);
    } finally {
      server.stopAccepting();
      server.closeConnections();
    }
  });

  it('at max_connections a connection answering a call is never displaced: the newcomer is turned away', async () => {
    const pending: (() => void)[] = [];
    const server = await openGrpc({
      address: '127.0.0.1',
      port: 0,
      handler: {
        // Answers only when the test says so: the first client's call stays in flight.
        handle: (msg) =>
          new Promise<Buffer>((resolve) => pending.push(() => resolve(Buffer.concat([msg.subarray(0, 2), Buffer.from([0x81, 0x80]), msg.subarray(4)])))),
      },
      log: pino({ level: 'silent' }),
      tcp: defaultTcpOptions,
      settings: { grpc: { maxStreams: 256, maxConnections: 1 } },
    });
    const busy = grpcClient(server.port);
    const late = grpcClient(server.port);
    try {
      const first = busy.exchange(buildQuery({ id: 0x42, name: kubernetesApi, type: T.A }));
      first.catch(() => {});
      for (let i = 0; i < 100 && pending.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(pending).toHaveLength(1);
      // Its connection is closed at once; grpc-js tries again until the deadline.
      expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(
        await statusOf(late.exchange(buildQuery({ id: 0x43, name: kubernetesApi, type: T.A }), 2000)),
      );
      pending[0]!();
      expect((await first).readUInt16BE(0)).toBe(0x42);
    } finally {
      busy.close();
      late.close();
      server.stopAccepting();
      server.closeConnections();
    }
  });
});
