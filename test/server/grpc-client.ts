// A DNS over gRPC client for the tests: @grpc/grpc-js with CoreDNS's DnsService (pb/dns.proto)
// declared by hand. Its DnsPacket encoding is written here again, apart from the server's codec,
// so that a mistake in one is not mirrored by the other. Every call has a deadline.
import grpc from '@grpc/grpc-js';
import { buildQuery, decode, type Decoded } from './raw.js';

export const QUERY_PATH = '/coredns.dns.DnsService/Query';

/** DnsPacket{msg}: tag 0x0a (field 1, bytes), the length as a varint, the bytes. */
export function packet(msg: Buffer): Buffer {
  const len: number[] = [];
  let n = msg.length;
  while (n >= 0x80) {
    len.push((n % 0x80) + 0x80);
    n = Math.floor(n / 0x80);
  }
  len.push(n);
  return Buffer.concat([Buffer.from([0x0a, ...len]), msg]);
}

/** The msg of a DnsPacket the server sent (it sends field 1 alone). */
export function unpacket(buf: Buffer): Buffer {
  if (buf[0] !== 0x0a) throw new Error(`reply does not start with field 1 (bytes): ${buf.subarray(0, 8).toString('hex')}`);
  let len = 0;
  let scale = 1;
  let pos = 1;
  for (;;) {
    const b = buf[pos++];
    if (b === undefined) throw new Error('reply length truncated');
    len += (b & 0x7f) * scale;
    scale *= 128;
    if (b < 0x80) break;
  }
  if (pos + len !== buf.length) throw new Error(`reply carries ${buf.length - pos} bytes after its length, not ${len}`);
  return buf.subarray(pos);
}

const identity = (b: Buffer): Buffer => b;
const DnsService = grpc.makeGenericClientConstructor(
  {
    Query: {
      path: QUERY_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  },
  'DnsService',
);

export interface GrpcTls {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** The name checked against the server certificate (it has IP 127.0.0.1 too). */
  servername?: string;
}

export interface GrpcClient {
  /** Sends raw protobuf bytes; resolves with the raw reply bytes, rejects with the call's status error. */
  call(body: Buffer, timeoutMs?: number): Promise<Buffer>;
  /** One DNS message in, its reply out. */
  exchange(msg: Buffer, timeoutMs?: number): Promise<Buffer>;
  /** A question in, the decoded reply out. */
  query(name: string, type: number, timeoutMs?: number): Promise<Decoded>;
  close(): void;
}

export function grpcClient(port: number, tls?: GrpcTls, options: grpc.ClientOptions = {}): GrpcClient {
  const credentials = tls ? grpc.credentials.createSsl(tls.ca, tls.key ?? null, tls.cert ?? null) : grpc.credentials.createInsecure();
  const client = new DnsService(`127.0.0.1:${port}`, credentials, {
    // grpc-js shares one connection between the clients of a target unless told not to; each
    // client here is a client of its own, on its own connection.
    'grpc.use_local_subchannel_pool': 1,
    ...(tls?.servername ? { 'grpc.ssl_target_name_override': tls.servername } : {}),
    ...options,
  });
  const query = client['Query'] as (body: Buffer, o: grpc.CallOptions, cb: (err: grpc.ServiceError | null, reply?: Buffer) => void) => void;
  const call = (body: Buffer, timeoutMs = 5000): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      query.call(client, body, { deadline: Date.now() + timeoutMs }, (err, reply) => (err ? reject(err) : resolve(reply!)));
    });
  const exchange = async (msg: Buffer, timeoutMs?: number): Promise<Buffer> => unpacket(await call(packet(msg), timeoutMs));
  return {
    call,
    exchange,
    query: async (name, type, timeoutMs) => decode(await exchange(buildQuery({ id: 0x6770, name, type }), timeoutMs)),
    close: () => client.close(),
  };
}

/** The gRPC status code of a call's rejection. */
export async function statusOf(p: Promise<unknown>): Promise<grpc.status | 'answered'> {
  try {
    await p;
    return 'answered';
  } catch (err) {
    return (err as grpc.ServiceError).code;
  }
}
