// Hostile DNS over gRPC clients against a real server on loopback: messages over 65,535 bytes,
// bytes that are not protobuf, streams past max_streams held open without a request, connections
// past max_connections, an UPDATE. Each is bounded, and another client is answered meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http2 from 'node:http2';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import type { TcpOptions } from '../../src/server/tcp.js';
import { repoRoot } from '../helpers/server.js';
import { grpcClient, packet, QUERY_PATH, statusOf } from '../server/grpc-client.js';
import { buildQuery, Opcode, T, udpQuery } from '../server/raw.js';

const kubernetesApi = 'kubernetes.default.svc.cluster.local';

async function serve(grpcServer: string, tcp: Partial<TcpOptions> = {}): Promise<{ app: App; grpcPort: number; udpPort: number }> {
  const app = await buildApp({
    corefileText: `cluster.local:0 grpc://cluster.local:0 {\n  bind 127.0.0.1\n  ${grpcServer}\n  kubernetes cluster.local\n}\n`,
    manifests: [path.join(repoRoot, 'examples/manifests')],
    logger: pino({ level: 'silent' }),
    tcp,
  });
  const ls = await app.listen();
  return { app, grpcPort: ls.find((l) => l.transport === 'grpc')!.port, udpPort: ls.find((l) => l.transport === 'dns')!.port };
}

/** Another client, on a connection of its own, gets the kubernetes answer. */
async function othersAnswered(port: number): Promise<void> {
  const other = grpcClient(port);
  try {
    expect((await other.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
  } finally {
    other.close();
  }
}

/** A DNS query padded (EDNS padding) to exactly `size` bytes. */
function queryOfSize(size: number): Buffer {
  const bare = buildQuery({ id: 9, name: kubernetesApi, type: T.A, edns: { options: [{ code: 12, data: Buffer.alloc(0) }] } });
  const q = buildQuery({ id: 9, name: kubernetesApi, type: T.A, edns: { options: [{ code: 12, data: Buffer.alloc(size - bare.length) }] } });
  expect(q).toHaveLength(size);
  return q;
}

describe('gRPC message size and content', () => {
  let app: App;
  let grpcPort: number;
  let udpPort: number;
  beforeAll(async () => {
    ({ app, grpcPort, udpPort } = await serve(''));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a DNS message of 65,535 bytes is taken; one byte more ends with RESOURCE_EXHAUSTED, and the connection still answers', async () => {
    const client = grpcClient(grpcPort);
    try {
      const largest = decodeRcode(await client.exchange(queryOfSize(65_535)));
      expect(largest).toBe(0);
      expect(await statusOf(client.exchange(queryOfSize(65_536)))).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(await statusOf(client.call(Buffer.alloc(1 << 20, 0x0a)))).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
    } finally {
      client.close();
    }
    await othersAnswered(grpcPort);
  });

  it('bytes that are not a DnsPacket end with INVALID_ARGUMENT, and the connection still answers', async () => {
    const client = grpcClient(grpcPort);
    try {
      const q = buildQuery({ id: 3, name: kubernetesApi, type: T.A });
      for (const body of [
        Buffer.concat([Buffer.from([0x0a, 0xff, 0x01]), q]), // a length past the end
        Buffer.from([0x0a]), // a key and no length
        Buffer.concat([Buffer.from([0x08]), q]), // field 1 as a varint
        Buffer.from([0x0b, 0x0c]), // a group
        Buffer.from('GET / HTTP/1.1\r\n\r\n'),
      ]) {
        expect(await statusOf(client.call(body))).toBe(grpc.status.INVALID_ARGUMENT);
      }
      expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual(['10.96.0.1']);
    } finally {
      client.close();
    }
    await othersAnswered(grpcPort);
  });

  it('a connection that sends garbage instead of HTTP/2 is closed; others are answered', async () => {
    for (const garbage of [
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.alloc(64, 0xff)]),
    ]) {
      const s = connect(grpcPort, '127.0.0.1');
      s.on('error', () => {});
      s.resume();
      const closed = new Promise<void>((resolve, reject) => {
        const give = setTimeout(() => reject(new Error('not closed within 5 s')), 5000);
        s.once('close', () => {
          clearTimeout(give);
          resolve();
        });
      });
      s.write(garbage);
      await closed;
    }
    await othersAnswered(grpcPort);
  });

  it('an UPDATE is answered as over UDP (NOTIMP)', async () => {
    const update = buildQuery({ id: 0x55, name: 'cluster.local', type: T.SOA, opcode: Opcode.UPDATE, rd: false });
    const udp = await udpQuery(update, { host: '127.0.0.1', port: udpPort });
    const client = grpcClient(grpcPort);
    try {
      const got = await client.exchange(update);
      expect(got.toString('hex')).toBe(udp.toString('hex'));
      expect(decodeRcode(got)).toBe(4);
    } finally {
      client.close();
    }
    await othersAnswered(grpcPort);
  });
});

function decodeRcode(reply: Buffer): number {
  return reply[3]! & 0x0f;
}

interface RawCall {
  stream: http2.ClientHttp2Stream;
  /** grpc-status of the call, from trailers or a trailers-only response. */
  status: Promise<number>;
}

/** Opens a call on a raw HTTP/2 session; with `body` the request is sent (and ended unless `end` is false), else nothing follows the headers. */
function rawCall(session: http2.ClientHttp2Session, body?: Buffer, end = true): RawCall {
  const stream = session.request({ ':method': 'POST', ':path': QUERY_PATH, 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
  const status = new Promise<number>((resolve, reject) => {
    const give = setTimeout(() => reject(new Error('no grpc-status within 10 s')), 10_000);
    const take = (h: http2.IncomingHttpHeaders): void => {
      if (h['grpc-status'] === undefined) return;
      clearTimeout(give);
      resolve(Number(h['grpc-status']));
    };
    stream.on('response', take);
    stream.on('trailers', take);
    stream.on('error', (err) => {
      clearTimeout(give);
      reject(err);
    });
    stream.on('data', () => {});
  });
  if (body) {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(body.length, 1);
    if (end) stream.end(Buffer.concat([prefix, body]));
    else stream.write(Buffer.concat([prefix, body]));
  }
  return { stream, status };
}

describe('gRPC streams past max_streams', () => {
  const messageTimeoutMs = 600;
  let app: App;
  let grpcPort: number;
  beforeAll(async () => {
    ({ app, grpcPort } = await serve('grpc_server {\n    max_streams 4\n  }', { messageTimeoutMs }));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a connection holding its 4 streams without requests waits; they end at the read deadline; others are answered meanwhile', async () => {
    const session = http2.connect(`http://127.0.0.1:${grpcPort}`);
    session.on('error', () => {});
    try {
      await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
      expect(session.remoteSettings.maxConcurrentStreams).toBe(4);
      const opened = Date.now();
      // Three send nothing after their headers; one sends its message but never ends its side.
      const held = [
        ...Array.from({ length: 3 }, () => rawCall(session)),
        rawCall(session, packet(buildQuery({ id: 4, name: kubernetesApi, type: T.A })), false),
      ];
      // Past the cap: HTTP/2 keeps this one back until a stream closes.
      const fifth = rawCall(session, packet(buildQuery({ id: 5, name: kubernetesApi, type: T.A })));
      await othersAnswered(grpcPort);
      expect(await Promise.all(held.map((c) => c.status))).toEqual([4, 4, 4, 4]); // DEADLINE_EXCEEDED
      expect(Date.now() - opened).toBeGreaterThanOrEqual(messageTimeoutMs - 50);
      expect(await fifth.status).toBe(0);
    } finally {
      session.destroy();
    }
  });
});

describe('gRPC connections past max_connections', () => {
  let app: App;
  let grpcPort: number;
  beforeAll(async () => {
    ({ app, grpcPort } = await serve('grpc_server {\n    max_connections 3\n  }'));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('at the cap a newcomer takes the slot of a connection that never asked; one closes per newcomer', async () => {
    const silent: Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const s = connect(grpcPort, '127.0.0.1');
      s.on('error', () => {});
      // Read what the server sends (its SETTINGS), or the socket never notices it was closed.
      s.resume();
      const at = i;
      closed[at] = false;
      s.once('close', () => {
        closed[at] = true;
      });
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
      silent.push(s);
    }
    try {
      // The kernel's accept queue hands the server the connections in the order they opened.
      await othersAnswered(grpcPort);
      // The oldest silent connection made room.
      await until(() => closed[0] === true);
      expect(closed).toEqual([true, false, false]);
      // A second client: the next oldest silent one goes.
      await othersAnswered(grpcPort);
      await until(() => closed[1] === true);
      expect(closed).toEqual([true, true, false]);
    } finally {
      for (const s of silent) s.destroy();
    }
  });
});

/** Waits for `cond`, polling, at most 5 s. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(cond()).toBe(true);
}
