// DNS over gRPC as CoreDNS serves it (core/dnsserver/server_grpc.go): the unary method
// `coredns.dns.DnsService/Query(DnsPacket) returns (DnsPacket)` on HTTP/2, inside TLS (ALPN h2)
// when the block has a `tls` line, else without encryption.
//
// The sockets are ours, not grpc-js's: a net or tls server accepts them and hands each one to
// grpc-js through a connection injector once it is admitted. That is what lets the listener
//  - run the TLS handshake with node:tls, under the handshake deadline and with the five
//    client_auth modes exactly as DNS over TLS has them (grpc-js's own ServerCredentials.createSsl
//    only knows "no client certificate" and "require and verify", and hides its TLS server);
//  - count connections, handshakes included, against `grpc_server { max_connections }`, and at
//    the cap displace the least useful one (a handshake, then the connection idle longest)
//    rather than leave every newcomer out while idle clients hold the slots.
// Per connection, HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS carries `max_streams`; a message is at
// most 65,535 bytes of DNS plus its 4 bytes of protobuf, both ways, as in CoreDNS.
// listen() imports this module when a grpc:// listener opens, so that servers without one never
// load grpc-js at start.
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { ServerTls } from '../chain/transport.js';
import { createTlsServer, refusesCertificate, updateTlsInPlace } from './tls-server.js';
import { Server, ServerCredentials, ServerInterceptingCall, status, type ServerInterceptor, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Endpoint, LocalEndpoint } from '../chain/plugin.js';
import type { Reply } from './handler.js';
import { decodeDnsPacket, encodeDnsPacket } from './grpc-codec.js';
import { localOf, type StreamListenArgs, type StreamServer } from './stream.js';

/** CoreDNS's defaults (DefaultGRPCMaxStreams, DefaultGRPCMaxConnections); 0 is unbounded. */
export const defaultGrpcSettings = { maxStreams: 256, maxConnections: 200 } as const;
/** The largest DNS message (dns.MaxMsgSize). */
export const MAX_DNS_MESSAGE = 65_535;
/** A DnsPacket carrying the largest DNS message: its tag byte and 3-byte length on top. */
export const MAX_GRPC_MESSAGE = MAX_DNS_MESSAGE + 4;
/**
 * CoreDNS leaves gRPC connections open for as long as the client likes; here a connection with no
 * call for this long is sent GOAWAY (grpc clients reconnect when they next need it), so idle
 * clients do not hold the connection slots. `timeouts { idle }` overrides it.
 */
export const DEFAULT_GRPC_IDLE_MS = 120_000;
/** How long a server ping may go unanswered before the connection is dropped (grpc-go's keepalive default); `timeouts { write }` overrides it. */
export const DEFAULT_GRPC_PING_TIMEOUT_MS = 20_000;

export const QUERY_PATH = '/coredns.dns.DnsService/Query';

/** One accepted socket, from its first byte to its close. */
interface Conn {
  /** The TCP socket, then the TLS socket over it once the handshake is done (closing it closes both). */
  socket: net.Socket;
  readonly address: string;
  readonly port: number;
  handshaking: boolean;
  /** Calls being answered. */
  inFlight: number;
  queries: number;
  lastQueryAt: number;
}

/** The connections of one listener and who gives way at the caps. */
class Connections {
  /** By `address:port`, as grpc-js names a call's peer; insertion order is age order. */
  readonly all = new Map<string, Conn>();

  constructor(
    private readonly maxConnections: number,
    private readonly maxPerClient: number,
    private readonly maxHandshakes: number,
    private readonly log: Logger,
  ) {}

  static key(address: string, port: number): string {
    return `${address}:${port}`;
  }

  /** Makes room for a socket from `address` and tracks it; false when every slot is busy answering. */
  admit(socket: net.Socket, handshaking: boolean): boolean {
    const address = socket.remoteAddress ?? '';
    const mine = (c: Conn): boolean => c.address === address;
    if (this.count(mine) >= this.maxPerClient && !this.evict(mine)) return false;
    if (this.maxConnections > 0 && this.all.size >= this.maxConnections && !this.evict(() => true)) return false;
    if (handshaking && this.count((c) => c.handshaking) >= this.maxHandshakes) this.evict((c) => c.handshaking);
    const conn: Conn = { socket, address, port: socket.remotePort ?? 0, handshaking, inFlight: 0, queries: 0, lastQueryAt: Date.now() };
    const key = Connections.key(conn.address, conn.port);
    this.all.set(key, conn);
    socket.once('close', () => {
      if (this.all.get(key) === conn) this.all.delete(key);
    });
    return true;
  }

  get(address: string, port: number): Conn | undefined {
    return this.all.get(Connections.key(address, port));
  }

  private count(which: (c: Conn) => boolean): number {
    let n = 0;
    for (const c of this.all.values()) if (which(c)) n++;
    return n;
  }

  /**
   * Closes the least useful connection among those `which` selects and that answer nothing now:
   * a handshake, then one that never asked, then the one longest since its last query.
   */
  private evict(which: (c: Conn) => boolean): boolean {
    let victim: Conn | undefined;
    const rank = (c: Conn): number => (c.handshaking ? 0 : c.queries === 0 ? 1 : 2) * 1e15 + c.lastQueryAt;
    for (const c of this.all.values()) {
      if (!which(c) || c.inFlight > 0) continue;
      if (!victim || rank(c) < rank(victim)) victim = c;
    }
    if (!victim) return false;
    this.log.debug({ client: victim.address, handshaking: victim.handshaking, queries: victim.queries }, 'gRPC connection closed to make room for a new one');
    this.all.delete(Connections.key(victim.address, victim.port));
    victim.socket.destroy();
    return true;
  }
}

/** The peer grpc-js names as `address:port` (IPv6 without brackets). */
function endpointOf(peer: string): Endpoint {
  const colon = peer.lastIndexOf(':');
  return colon < 0 ? { address: peer, port: 0 } : { address: peer.slice(0, colon), port: Number(peer.slice(colon + 1)) || 0 };
}

export async function openGrpc(args: StreamListenArgs): Promise<StreamServer> {
  const { handler, log, tcp } = args;
  const settings = { ...defaultGrpcSettings, ...args.settings.grpc };
  const timeouts = args.settings.timeouts ?? {};
  const local: LocalEndpoint = localOf(args, 'grpc');
  const conns = new Connections(settings.maxConnections, tcp.maxConnectionsPerClient, tcp.maxConnections, log);
  // A deadline of 0 would end every call or connection at once: it takes the default instead.
  const positive = (ms: number | undefined, fallback: number): number => (ms !== undefined && ms > 0 ? ms : fallback);
  const readMs = positive(timeouts.readMs, tcp.messageTimeoutMs);
  const idleMs = positive(timeouts.idleMs, DEFAULT_GRPC_IDLE_MS);

  // A call whose request has not arrived whole (message and end of stream) within the read
  // deadline ends, so a client cannot hold a stream slot (and keep its connection from counting
  // as idle) by never finishing its request. The stream is reset too, as grpc-go does after a
  // status when the client has not ended its side: else it would keep its slot until the client
  // closes it. grpc-js keeps the HTTP/2 stream on the call it hands the first interceptor.
  const readDeadline: ServerInterceptor = (_method, call) => {
    let timer: NodeJS.Timeout | undefined = setTimeout(() => {
      timer = undefined;
      call.sendStatus({ code: status.DEADLINE_EXCEEDED, details: `no complete request within ${readMs} ms` });
      const stream = (call as unknown as { stream?: http2.ServerHttp2Stream }).stream;
      if (stream && !stream.closed) setImmediate(() => stream.close(http2.constants.NGHTTP2_NO_ERROR));
    }, readMs);
    const stop = (): void => {
      clearTimeout(timer);
      timer = undefined;
    };
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveHalfClose: (nextHalfClose) => {
            stop();
            nextHalfClose();
          },
          onCancel: stop,
        }),
      sendStatus: (st, nextStatus) => {
        stop();
        nextStatus(st);
      },
    });
  };

  const server = new Server({
    'grpc.max_receive_message_length': MAX_GRPC_MESSAGE,
    'grpc.max_send_message_length': MAX_GRPC_MESSAGE,
    ...(settings.maxStreams > 0 ? { 'grpc.max_concurrent_streams': settings.maxStreams } : {}),
    'grpc.max_connection_idle_ms': idleMs,
    // A connection busy with calls but whose client stopped reading is found by its unanswered ping.
    'grpc.keepalive_time_ms': idleMs,
    'grpc.keepalive_timeout_ms': positive(timeouts.writeMs, DEFAULT_GRPC_PING_TIMEOUT_MS),
    interceptors: [readDeadline],
    // Nothing reads grpc-js's channelz service here; it would only track every call and connection.
    'grpc.enable_channelz': 0,
  });

  const query = (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
    const packet = decodeDnsPacket(call.request);
    if ('error' in packet) {
      callback({ code: status.INVALID_ARGUMENT, details: `not a DnsPacket: ${packet.error}` });
      return;
    }
    const client = endpointOf(call.getPeer());
    const conn = conns.get(client.address, client.port);
    if (conn) {
      conn.inFlight++;
      conn.queries++;
      conn.lastQueryAt = Date.now();
    }
    const answer = (reply: Buffer | null): void => {
      if (conn) conn.inFlight--;
      // CoreDNS answers a request its DNS library rejects (too short, a response) with the Go
      // error as the status, which grpc-go sends as UNKNOWN.
      if (!reply) callback({ code: status.UNKNOWN, details: 'dns request rejected' });
      // A zone transfer needs several messages; Query carries one.
      else if ((reply as Reply).more) callback({ code: status.UNIMPLEMENTED, details: 'zone transfers are served over TCP and TLS, not gRPC' });
      else callback(null, reply);
    };
    let reply: Buffer | null | Promise<Buffer | null>;
    try {
      reply = handler.handle(packet.msg, 'tcp', client, local);
    } catch (err) {
      log.error({ err, client: client.address }, 'unexpected error handling a gRPC query');
      reply = null;
    }
    if (reply instanceof Promise) {
      reply.then(answer, (err: unknown) => {
        log.error({ err, client: client.address }, 'unexpected error handling a gRPC query');
        answer(null);
      });
    } else answer(reply);
  };
  server.register<Buffer, Buffer>(QUERY_PATH, query, encodeDnsPacket, (b) => b, 'unary');
  // TLS, when there is any, is done before the socket reaches grpc-js.
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());

  const inject = (socket: net.Socket): void => injector.injectConnection(socket);
  // Both servers below set noDelay: replies are small and wait on nothing else, so Nagle would only delay them.
  let listener: net.Server;
  const serverTls = args.tls;
  if (serverTls) {
    listener = createTlsServer(serverTls.options, ['h2'], tcp.handshakeTimeoutMs, log, 'gRPC', (socket) => {
      const conn = conns.get(socket.remoteAddress ?? '', socket.remotePort ?? 0);
      if (!conn) {
        // Displaced while its handshake finished.
        socket.destroy();
        return;
      }
      conn.handshaking = false;
      conn.socket = socket;
      if (refusesCertificate(socket, serverTls.verifyIfGiven, log, 'gRPC')) return;
      inject(socket);
    });
    listener.on('connection', (raw: net.Socket) => {
      if (!conns.admit(raw, true)) {
        log.debug({ client: raw.remoteAddress }, 'gRPC connection refused: at the connection cap and none idle');
        raw.destroy();
      }
    });
  } else {
    listener = net.createServer({ noDelay: true }, (socket) => {
      if (!conns.admit(socket, false)) {
        log.debug({ client: socket.remoteAddress }, 'gRPC connection refused: at the connection cap and none idle');
        socket.destroy();
        return;
      }
      inject(socket);
    });
  }

  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error): void => {
      injector.destroy();
      server.forceShutdown();
      reject(err);
    };
    listener.once('error', failed);
    listener.listen({ port: args.port, host: args.address, ipv6Only: net.isIPv6(args.address) && args.address !== '::' }, () => {
      listener.off('error', failed);
      resolve();
    });
  });
  listener.on('error', (err) => log.error({ err, address: args.address, port: args.port }, 'gRPC server error'));
  const port = (listener.address() as net.AddressInfo).port;

  let current = serverTls;
  return {
    port,
    ...(listener instanceof tls.Server
      ? {
          updateTls: (next: ServerTls | undefined): boolean => {
            if (!current || !(listener instanceof tls.Server) || !updateTlsInPlace(listener, current, next, log, { address: args.address, port })) return false;
            current = next;
            return true;
          },
        }
      : {}),
    stopAccepting: () => {
      listener.close();
      // GOAWAY: clients finish the calls they have and open new connections elsewhere.
      injector.drain(0x7fffffff);
    },
    closeConnections: () => {
      injector.destroy();
      for (const c of conns.all.values()) c.socket.destroy();
      conns.all.clear();
      server.forceShutdown();
    },
  };
}
