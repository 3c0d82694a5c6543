// DNS over HTTPS (RFC 8484), as CoreDNS's core/dnsserver/server_https.go serves an https:// block:
// GET /dns-query?dns= and POST application/dns-message, over HTTP/2 and HTTP/1.1 (ALPN h2 and
// http/1.1 inside TLS; without a tls line, plain HTTP/1.1 and HTTP/2 with prior knowledge, which is
// what dig +http-plain speaks). One TCP listener takes the connections and hands each, once its
// handshake is done and it was admitted under the caps, to an HTTP/1.1 or an HTTP/2 server that
// never listens itself, so both protocols share the caps, deadlines and accounting here.
//
// Limits (each with a default; the Corefile or flags set them):
//  - max_connections per listener (the `https` plugin; CoreDNS's default 200, 0 = no cap) and the
//    per-client cap of TCP: at a cap the newcomer takes the slot of the connection doing the least
//    (never sent a request, then the longest idle) instead of waiting or being refused, as for TCP;
//  - TLS handshakes in progress under the same caps, and the handshake deadline, as DoT;
//  - read deadline per request (headers and body), write deadline per reply, idle deadline per
//    connection: the `timeouts` plugin's read/write/idle, else CoreDNS's 3 s, 5 s and 10 s;
//  - request sizes: a DNS message up to 65,535 bytes, a `dns=` value of its base64url length,
//    headers up to DOH_MAX_HEADER_BYTES;
//  - HTTP/2: DOH_MAX_CONCURRENT_STREAMS streams at once, queries being answered per connection
//    capped by TCP's maxInFlight (streams the client reset still count until their answer is
//    computed), and a connection resetting more than DOH_MAX_RESETS_PER_SECOND streams a second is
//    closed (rapid reset, CVE-2023-44487; nghttp2 also limits reset floods itself).
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { ServerTls } from '../chain/transport.js';
import { createTlsServer, refusesCertificate, updateTlsInPlace } from './tls-server.js';
import type { Logger } from 'pino';
import type { Endpoint, LocalEndpoint } from '../chain/plugin.js';
import type { PacketHandler } from './gate.js';
import type { Reply } from './handler.js';
import { Handshakes } from './handshakes.js';
import { localOf, type OpenStream, type StreamServer } from './stream.js';
import { dohMaxAge } from './doh-ttl.js';
import { checkContentType, checkMessage, checkPath, DOH_MAX_MESSAGE_BYTES, DOH_MIME, fromGet, type Refusal } from './doh-request.js';

/** CoreDNS's DefaultHTTPSMaxConnections; `https { max_connections }` sets it, 0 for no cap. */
export const DEFAULT_HTTPS_MAX_CONNECTIONS = 200;
/** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS the server announces. */
export const DOH_MAX_CONCURRENT_STREAMS = 100;
/** Request line and headers (HTTP/1.1), header list (HTTP/2): room for the longest `dns=` value. */
export const DOH_MAX_HEADER_BYTES = 96 * 1024;
/** Streams an HTTP/2 client may reset in one second before its connection is closed. */
export const DOH_MAX_RESETS_PER_SECOND = 200;

/** RFC 8484 recommends HTTP/2; CoreDNS offers both. */
const ALPN = ['h2', 'http/1.1'];
/** The first bytes of an HTTP/2 connection preface (RFC 9113 3.4); no HTTP/1.1 method starts so. */
const H2_PREFACE_START = 'PRI';

interface Deadlines {
  readMs: number;
  writeMs: number;
  idleMs: number;
}

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

/** One admitted TCP connection (HTTP/1.1 or HTTP/2). */
class Conn {
  /** Requests received and not yet answered (or whose answer is still being computed). */
  inFlight = 0;
  requests = 0;
  lastAt = Date.now();
  session: http2.ServerHttp2Session | undefined;
  private resetsSince = 0;
  private resets = 0;
  closed = false;

  constructor(
    readonly socket: net.Socket,
    readonly client: Endpoint,
  ) {}

  idle(): boolean {
    return this.inFlight === 0;
  }

  /** Eviction order: lower goes first. Connections that never sent a request rank below all others. */
  rank(): number {
    return (this.requests > 0 ? 1e15 : 0) + this.lastAt;
  }

  /** Counts a stream the client reset; true when it reset more than `limit` this second. */
  reset(limit: number): boolean {
    const now = Date.now();
    if (now - this.resetsSince >= 1000) {
      this.resetsSince = now;
      this.resets = 0;
    }
    return ++this.resets > limit;
  }

  close(): void {
    if (this.session && !this.session.destroyed) this.session.destroy();
    this.socket.destroy();
  }
}

/** The live connections of one listener, under its caps. */
class Conns {
  readonly all = new Set<Conn>();
  private readonly perClient = new Map<string, number>();

  constructor(
    /** 0: no cap. */
    private readonly max: number,
    private readonly maxPerClient: number,
    private readonly log: Logger,
  ) {}

  /** Makes room for a connection from `address`; false when none can be made. */
  admit(address: string): boolean {
    if ((this.perClient.get(address) ?? 0) >= this.maxPerClient && !this.evict((c) => c.client.address === address)) return false;
    if (this.max > 0 && this.all.size >= this.max && !this.evict(() => true)) return false;
    return true;
  }

  add(c: Conn): void {
    this.all.add(c);
    this.perClient.set(c.client.address, (this.perClient.get(c.client.address) ?? 0) + 1);
  }

  remove(c: Conn): void {
    if (!this.all.delete(c)) return;
    const n = (this.perClient.get(c.client.address) ?? 1) - 1;
    if (n <= 0) this.perClient.delete(c.client.address);
    else this.perClient.set(c.client.address, n);
  }

  private evict(which: (c: Conn) => boolean): boolean {
    let victim: Conn | undefined;
    for (const c of this.all) {
      if (!which(c) || !c.idle()) continue;
      if (!victim || c.rank() < victim.rank()) victim = c;
    }
    if (!victim) return false;
    this.log.debug({ client: victim.client.address, requests: victim.requests }, 'DoH connection closed to make room for a new one');
    victim.close();
    this.remove(victim);
    return true;
  }
}

export const openDoh: OpenStream = async (args) => {
  const { log, tcp, settings, handler } = args;
  // `timeouts { read write idle }` is already in `tcp` (listen.ts), as for TCP and DoT.
  const deadlines: Deadlines = { readMs: tcp.messageTimeoutMs, writeMs: tcp.writeTimeoutMs, idleMs: tcp.idleTimeoutMs };
  const maxConnections = settings.https?.maxConnections ?? DEFAULT_HTTPS_MAX_CONNECTIONS;
  const maxStreams = settings.https?.maxStreams ?? DOH_MAX_CONCURRENT_STREAMS;
  const maxHeaderBytes = settings.https?.maxHeaderBytes ?? DOH_MAX_HEADER_BYTES;
  const maxResets = settings.https?.maxResetsPerSecond ?? DOH_MAX_RESETS_PER_SECOND;
  const conns = new Conns(maxConnections, tcp.maxConnectionsPerClient, log);
  const local = localOf(args, 'https');
  const byH1Socket = new WeakMap<net.Socket, Conn>();
  const bySession = new WeakMap<http2.Http2Session, Conn>();
  const serve = (req: Req, res: Res, conn: Conn | undefined, h2: boolean): void => {
    if (!conn) {
      res.destroy();
      return;
    }
    answer(req, res, conn, h2, { handler, log, local, deadlines, maxInFlight: tcp.maxInFlight });
  };

  const h1 = http.createServer(
    {
      maxHeaderSize: maxHeaderBytes,
      requestTimeout: deadlines.readMs,
      headersTimeout: deadlines.readMs,
      keepAliveTimeout: deadlines.idleMs,
      // Node checks the two deadlines above on this period (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(deadlines.readMs / 4))),
    },
    (req, res) => serve(req, res, byH1Socket.get(req.socket), false),
  );
  h1.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    log.debug({ err: err.message }, 'DoH HTTP/1.1 request could not be read');
    const pending = (socket as net.Socket & { _httpMessage?: http.ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
      socket.destroy();
      return;
    }
    // As Go's server (and Node's default) answer one: the status, then the connection closes.
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    setTimeout(() => socket.destroy(), deadlines.writeMs).unref();
  });
  // It never listens (connections are handed to it), but its deadline checks start on this event.
  h1.emit('listening');

  const h2 = http2.createServer({
    settings: { maxConcurrentStreams: maxStreams, maxHeaderListSize: maxHeaderBytes },
    maxSendHeaderBlockLength: 16 * 1024,
  });
  let starting: Conn | undefined;
  h2.on('session', (session: http2.ServerHttp2Session) => {
    const conn = starting;
    if (!conn) {
      session.destroy();
      return;
    }
    conn.session = session;
    bySession.set(session, conn);
    // A connection must start asking within the read deadline, as HTTP/1.1's headers timeout has it.
    const silent = setTimeout(() => {
      log.debug({ client: conn.client.address }, 'DoH HTTP/2 connection sent no request in time; closing');
      conn.close();
    }, deadlines.readMs);
    session.once('stream', () => clearTimeout(silent));
    session.once('close', () => clearTimeout(silent));
    const onIdle = (): void => {
      // Busy is not idle; the timer only fires again on activity, so it is set again here.
      if (conn.inFlight > 0) {
        session.setTimeout(deadlines.idleMs, onIdle);
        return;
      }
      log.debug({ client: conn.client.address }, 'DoH HTTP/2 connection idle; closing');
      session.close();
      // A client that does not take the GOAWAY (or its socket never drains) is not waited for.
      setTimeout(() => conn.close(), deadlines.writeMs).unref();
    };
    session.setTimeout(deadlines.idleMs, onIdle);
    session.on('stream', (stream: http2.ServerHttp2Stream) => {
      // Any stream ended by a reset counts, whether the client cancelled it before or after its
      // answer was written: a flood of either makes the server open and tear down streams.
      stream.once('close', () => {
        if (stream.rstCode === http2.constants.NGHTTP2_NO_ERROR || session.destroyed || session.closed || !conn.reset(maxResets)) return;
        log.debug({ client: conn.client.address }, 'DoH client resets too many HTTP/2 streams; closing');
        session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
        conn.close();
      });
    });
    session.on('error', () => conn.close());
  });
  h2.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => serve(req, res, bySession.get(req.stream.session!), true));
  h2.on('sessionError', (err: Error) => log.debug({ err: err.message }, 'DoH HTTP/2 session error'));

  /** Serves an admitted connection with the protocol it speaks. */
  const start = (socket: net.Socket, useH2: boolean): void => {
    const address = socket.remoteAddress ?? '';
    if (!conns.admit(address)) {
      // Every connection is busy answering: refuse at once rather than leave the client hanging.
      log.debug({ client: address }, 'DoH connection refused: at the connection cap and none idle');
      socket.destroy();
      return;
    }
    const conn = new Conn(socket, { address, port: socket.remotePort ?? 0 });
    conns.add(conn);
    socket.once('close', () => {
      conn.closed = true;
      conns.remove(conn);
    });
    if (useH2) {
      starting = conn;
      try {
        h2.emit('connection', socket);
      } finally {
        starting = undefined;
      }
    } else {
      byH1Socket.set(socket, conn);
      h1.emit('connection', socket);
      // Bytes the sniffing read wait in the stream until it flows again. (HTTP/2 reads them itself:
      // resuming would hand them to no listener.)
      socket.resume();
    }
  };

  const handshaking = new Handshakes({
    maxConnections: maxConnections > 0 ? maxConnections : Number.POSITIVE_INFINITY,
    maxConnectionsPerClient: tcp.maxConnectionsPerClient,
  });
  let outer: net.Server;
  const serverTls = args.tls;
  if (serverTls) {
    const tlsServer = createTlsServer(serverTls.options, ALPN, tcp.handshakeTimeoutMs, log, 'DoH', (socket) => {
      handshaking.done(socket);
      socket.on('error', () => socket.destroy());
      if (refusesCertificate(socket, serverTls.verifyIfGiven, log, 'DoH')) return;
      start(socket, socket.alpnProtocol === 'h2');
    });
    tlsServer.on('connection', (raw: net.Socket) => handshaking.add(raw));
    outer = tlsServer;
  } else {
    // Without TLS there is no ALPN: the first bytes tell HTTP/2 (prior knowledge) from HTTP/1.1.
    outer = net.createServer({ noDelay: true }, (socket) => {
      socket.on('error', () => socket.destroy());
      // Until its first bytes it is held to the caps on handshakes, as a TLS connection would be.
      handshaking.add(socket);
      let head = Buffer.alloc(0);
      const timer = setTimeout(() => socket.destroy(), deadlines.readMs);
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        if (head.length < H2_PREFACE_START.length && H2_PREFACE_START.startsWith(head.toString('latin1'))) return;
        clearTimeout(timer);
        handshaking.done(socket as tls.TLSSocket);
        socket.off('data', onData);
        socket.pause();
        socket.unshift(head);
        start(socket, head.subarray(0, H2_PREFACE_START.length).toString('latin1') === H2_PREFACE_START);
      };
      socket.on('data', onData);
      socket.once('close', () => clearTimeout(timer));
    });
  }

  await new Promise<void>((resolve, reject) => {
    outer.once('error', reject);
    outer.listen({ port: args.port, host: args.address, ipv6Only: net.isIPv6(args.address) && args.address !== '::' }, () => {
      outer.off('error', reject);
      resolve();
    });
  });
  outer.on('error', (err) => log.error({ err, address: args.address, port: args.port }, 'DoH server error'));
  const port = (outer.address() as net.AddressInfo).port;
  let current = serverTls;
  const server: StreamServer = {
    port,
    ...(outer instanceof tls.Server
      ? {
          updateTls: (next: ServerTls | undefined): boolean => {
            if (!current || !(outer instanceof tls.Server) || !updateTlsInPlace(outer, current, next, log, { address: args.address, port })) return false;
            current = next;
            return true;
          },
        }
      : {}),
    stopAccepting: () => outer.close(),
    closeConnections: () => {
      for (const c of conns.all) c.close();
      h1.close();
      h1.closeAllConnections();
    },
  };
  return server;
};

interface Answering {
  handler: PacketHandler;
  log: Logger;
  local: LocalEndpoint;
  deadlines: Deadlines;
  maxInFlight: number;
}

/**
 * Writes a whole response. Over HTTP/2 through the stream itself, so the body goes out in one DATA
 * frame carrying END_STREAM (the compatibility layer sends an empty DATA frame after it, which
 * some clients, dnsperf among them, take for a second message).
 */
function send(req: Req, res: Res, h2: boolean, status: number, headers: Record<string, string | number>, body: Buffer | string): void {
  if (h2) {
    const stream = (req as http2.Http2ServerRequest).stream;
    stream.respond({ ':status': status, ...headers });
    stream.end(body);
    return;
  }
  (res as http.ServerResponse).writeHead(status, headers);
  res.end(body);
}

/** Go's http.Error: a short text body that no browser sniffs into something else. */
function fail(req: Req, res: Res, h2: boolean, refusal: Refusal | { status: 500; reason: string }): void {
  const body =
    refusal.status === 404 ? '\n' : refusal.status === 500 ? 'No response\n' : refusal.status === 415 ? 'unsupported media type\n' : 'invalid request\n';
  send(
    req,
    res,
    h2,
    refusal.status,
    {
      'content-type': 'text/plain; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'content-length': Buffer.byteLength(body),
    },
    body,
  );
}

/**
 * The DNS side of one request: reads the message (within the read deadline and the size bounds),
 * asks the handler, and writes the reply (within the write deadline).
 */
function answer(req: Req, res: Res, conn: Conn, h2: boolean, a: Answering): void {
  const { deadlines, log } = a;
  if (h2 && conn.inFlight >= a.maxInFlight) {
    // Streams the client reset keep their queries being answered: this bounds them.
    (req as http2.Http2ServerRequest).stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    return;
  }
  conn.inFlight++;
  conn.requests++;
  conn.lastAt = Date.now();
  let done = false;
  let complete = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    conn.inFlight--;
    conn.lastAt = Date.now();
  };
  /** Gives up on this request: its stream (HTTP/2) or its connection (HTTP/1.1, which cannot drop one request). */
  const abandon = (why: string): void => {
    log.debug({ client: conn.client.address }, why);
    if (h2) (req as http2.Http2ServerRequest).stream.close(http2.constants.NGHTTP2_CANCEL);
    else conn.close();
    finish();
  };
  // Headers are in (HTTP/1.1's headers timeout and the HTTP/2 connection's read deadline saw to
  // that); only a POST body is still to come.
  let timer: NodeJS.Timeout | undefined;
  res.once('close', finish);

  /** Sends an answer or a refusal, then stops reading what the client may still be sending. */
  const respond = (send: () => void): void => {
    if (done) return;
    clearTimeout(timer);
    if (!complete && !h2) (res as http.ServerResponse).setHeader('connection', 'close');
    timer = setTimeout(() => abandon('DoH client does not take its reply; closing'), deadlines.writeMs);
    const sink: NodeJS.EventEmitter = h2 ? (req as http2.Http2ServerRequest).stream : res;
    sink.once('finish', () => {
      if (!complete && h2) (req as http2.Http2ServerRequest).stream.close(http2.constants.NGHTTP2_NO_ERROR);
      finish();
    });
    send();
  };
  const refuse = (refusal: Refusal): void => {
    log.debug({ client: conn.client.address, status: refusal.status, reason: refusal.reason }, 'DoH request refused');
    respond(() => fail(req, res, h2, refusal));
  };

  complete = req.method === 'GET';
  const first = firstLook(req);
  if (Buffer.isBuffer(first)) {
    dispatch(first);
    return;
  }
  if (first) {
    refuse(first);
    return;
  }
  timer = setTimeout(() => abandon('DoH request body not received in time; closing'), deadlines.readMs);
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > DOH_MAX_MESSAGE_BYTES) {
      req.off('data', onData);
      refuse({ status: 400, reason: `body over ${DOH_MAX_MESSAGE_BYTES} bytes` });
      return;
    }
    chunks.push(chunk);
  };
  req.on('data', onData);
  req.once('end', () => {
    complete = true;
    if (done || size > DOH_MAX_MESSAGE_BYTES) return;
    dispatch(Buffer.concat(chunks, size));
  });

  function dispatch(msg: Buffer): void {
    const bad = checkMessage(msg);
    if (bad) {
      refuse(bad);
      return;
    }
    // The read deadline is met; computing the answer has the handler's own bounds.
    clearTimeout(timer);
    let reply: Buffer | null | Promise<Buffer | null>;
    try {
      reply = a.handler.handle(msg, 'tcp', conn.client, a.local);
    } catch (err) {
      log.error({ err, client: conn.client.address }, 'unexpected error handling a DoH query');
      reply = null;
    }
    if (reply instanceof Promise) {
      reply.then(write, (err: unknown) => {
        log.error({ err, client: conn.client.address }, 'unexpected error handling a DoH query');
        write(null);
      });
    } else write(reply);
  }

  function write(reply: Buffer | null): void {
    if (done || res.destroyed || (h2 && (req as http2.Http2ServerRequest).stream.destroyed)) {
      finish();
      return;
    }
    // RFC 8484 4.2.1: no DNS answer is a server error (CoreDNS: 500 "No response").
    if (!reply) {
      respond(() => fail(req, res, h2, { status: 500, reason: 'no reply' }));
      return;
    }
    const body = (reply as Reply).more ? refusedTransfer(reply) : reply;
    respond(() => send(req, res, h2, 200, { 'content-type': DOH_MIME, 'cache-control': `max-age=${dohMaxAge(body)}`, 'content-length': body.length }, body));
  }
}

/** What the request line and headers decide: a refusal, the message of a GET, or undefined for a POST body to read. */
function firstLook(req: Req): Refusal | Buffer | undefined {
  const wrongPath = checkPath(req.url);
  if (wrongPath) return wrongPath;
  if (req.method === 'GET') return fromGet(req.url);
  if (req.method !== 'POST') return { status: 400, reason: `method ${String(req.method).slice(0, 16)} is neither GET nor POST` };
  const wrongType = checkContentType(req.headers['content-type']);
  if (wrongType) return wrongType;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > DOH_MAX_MESSAGE_BYTES) return { status: 400, reason: `body of ${declared} bytes is over ${DOH_MAX_MESSAGE_BYTES}` };
  return undefined;
}

/**
 * A zone transfer needs several messages and one HTTP response carries one: the transfer is
 * refused (REFUSED, the question kept) rather than cut short.
 */
function refusedTransfer(first: Buffer): Buffer {
  let i = 12;
  for (;;) {
    const len = first[i]!;
    if ((len & 0xc0) === 0xc0) {
      i += 2;
      break;
    }
    i += len + 1;
    if (len === 0) break;
  }
  const out = Buffer.from(first.subarray(0, i + 4));
  out[3] = (out[3]! & 0xf0) | 5;
  out.writeUInt16BE(1, 4);
  out.fill(0, 6, 12);
  return out;
}
