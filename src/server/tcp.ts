// TCP transport (RFC 7766): 2-byte length framing, many and pipelined queries per connection,
// and the limits that keep one client from holding memory or every connection slot:
//  - backpressure: a connection whose replies the client does not read stops being read;
//  - an absolute deadline per message, from its first byte (slow senders cannot renew it);
//  - caps on connections, globally and per client address; at a cap the newcomer takes the
//    slot of the connection doing the least (never completed a message, then the longest
//    since its last message) instead of being refused.
import net from 'node:net';
import tls from 'node:tls';
import type { PacketHandler } from './gate.js';
import type { Logger } from 'pino';
import type { Reply } from './handler.js';
import { FrameReader, frame } from '../pkg/tcp-frames.js';
import { Handshakes } from './handshakes.js';
import { createTlsServer, refusesCertificate } from './tls-server.js';
import type { LocalEndpoint } from '../chain/plugin.js';

export interface TcpOptions {
  /** Close a connection with nothing in flight after this long without a message. */
  idleTimeoutMs: number;
  /** Close a connection whose message has not completed this long after its first byte. */
  messageTimeoutMs: number;
  /** Connections open at once on one listener. */
  maxConnections: number;
  /** Connections open at once from one client address. */
  maxConnectionsPerClient: number;
  /** Reply bytes a connection may have unsent before it stops being read. */
  maxUnsentBytes: number;
  /** Reply bytes all connections of a listener may have unsent before those holding some stop being read. */
  maxUnsentTotalBytes: number;
  /** Queries of one connection being answered at once (pipelining) before it stops being read. */
  maxInFlight: number;
  /** Close a connection whose unsent replies make no progress for this long. */
  writeTimeoutMs: number;
  /** DNS over TLS: close a connection whose TLS handshake has not finished this long after it opened. */
  handshakeTimeoutMs: number;
}

export const defaultTcpOptions: TcpOptions = {
  idleTimeoutMs: 10_000,
  messageTimeoutMs: 3_000,
  maxConnections: 1024,
  maxConnectionsPerClient: 512,
  maxUnsentBytes: 1 << 20,
  maxUnsentTotalBytes: 64 << 20,
  maxInFlight: 100,
  writeTimeoutMs: 5_000,
  handshakeTimeoutMs: 5_000,
};

/** The live connections of one listener and what they hold. */
class Connections {
  readonly all = new Set<Connection>();
  private readonly perClient = new Map<string, number>();
  /** Reply bytes written to sockets and not yet flushed, over every connection. */
  unsent = 0;

  constructor(
    private readonly opts: TcpOptions,
    private readonly log: Logger,
  ) {}

  /** Makes room for a connection from `address`; false when none can be made. */
  admit(address: string): boolean {
    if ((this.perClient.get(address) ?? 0) >= this.opts.maxConnectionsPerClient) {
      if (!this.evict((c) => c.address === address)) return false;
    }
    if (this.all.size >= this.opts.maxConnections) {
      if (!this.evict(() => true)) return false;
    }
    return true;
  }

  add(c: Connection): void {
    this.all.add(c);
    this.perClient.set(c.address, (this.perClient.get(c.address) ?? 0) + 1);
  }

  remove(c: Connection): void {
    if (!this.all.delete(c)) return;
    const n = (this.perClient.get(c.address) ?? 1) - 1;
    if (n <= 0) this.perClient.delete(c.address);
    else this.perClient.set(c.address, n);
  }

  /**
   * Closes the least useful idle connection among those `which` selects: one with no query in
   * flight and no unsent reply, preferring one that never completed a message (a slow or silent
   * client), then the one longest since its last message. False when every one is busy.
   */
  private evict(which: (c: Connection) => boolean): boolean {
    let victim: Connection | undefined;
    for (const c of this.all) {
      if (!which(c) || !c.idle()) continue;
      if (!victim || c.rank() < victim.rank()) victim = c;
    }
    if (!victim) return false;
    this.log.debug({ client: victim.address, completed: victim.messages }, 'TCP connection closed to make room for a new one');
    victim.close();
    return true;
  }
}

/** For a DNS over TLS listener (RFC 7858: the TCP framing inside TLS). */
export interface DotListenOptions {
  tls: tls.TlsOptions;
  /** With client certificates optional: one that is given must verify. */
  verifyIfGiven?: boolean;
}

/** RFC 7858's ALPN protocol id. */
const DOT_ALPN = ['dot'];

export async function listenTcp(
  address: string,
  port: number,
  handler: PacketHandler,
  log: Logger,
  opts: TcpOptions = defaultTcpOptions,
  dot?: DotListenOptions,
): Promise<net.Server> {
  const local: LocalEndpoint = dot ? { address, port, transport: 'tls' } : { address, port };
  const conns = new Connections(opts, log);
  const onSocket = (socket: net.Socket): void => {
    const address = socket.remoteAddress ?? '';
    if (!conns.admit(address)) {
      // Every connection is busy answering: refuse at once rather than leave the client hanging.
      log.debug({ client: address }, 'TCP connection refused: at the connection cap and none idle');
      socket.destroy();
      return;
    }
    new Connection(socket, handler, log, local, opts, conns);
  };
  let server: net.Server;
  if (dot) {
    // Connections are admitted (and counted against the caps) once their handshake is done; the
    // handshake deadline bounds how long one that never finishes holds its socket.
    const handshaking = new Handshakes(opts);
    const tlsServer = createTlsServer(dot.tls, DOT_ALPN, opts.handshakeTimeoutMs, log, 'DoT', (socket) => {
      handshaking.done(socket);
      // Read at each connection: a reload may change it in place (listen.ts updateTls).
      if (refusesCertificate(socket, dot.verifyIfGiven === true, log, 'DoT')) return;
      onSocket(socket);
    });
    tlsServer.on('connection', (raw: net.Socket) => handshaking.add(raw));
    server = tlsServer;
  } else server = net.createServer({ noDelay: true }, onSocket);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: address, ipv6Only: net.isIPv6(address) && address !== '::' }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Only after listen succeeded: a listen failure is the caller's to explain in one line.
  server.on('error', (err) => log.error({ err, address, port }, 'TCP server error'));
  return server;
}

class Connection {
  readonly address: string;
  private readonly client: { address: string; port: number };
  /** Bytes received and not yet cut into messages. */
  private readonly frames = new FrameReader();
  private inFlight = 0;
  /** Reply bytes handed to the socket and not yet flushed. */
  private unsent = 0;
  /** When reply bytes last left for the kernel (or began to wait): the write deadline's clock. */
  private flushedAt = Date.now();
  /** Complete messages received. */
  messages = 0;
  private lastMessageAt = Date.now();
  private messageTimer: NodeJS.Timeout | undefined;
  private writeTimer: NodeJS.Timeout | undefined;
  private paused = false;
  private closed = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly handler: PacketHandler,
    private readonly log: Logger,
    private readonly local: LocalEndpoint,
    private readonly opts: TcpOptions,
    private readonly conns: Connections,
  ) {
    this.address = socket.remoteAddress ?? '';
    this.client = { address: this.address, port: socket.remotePort ?? 0 };
    conns.add(this);
    socket.setTimeout(opts.idleTimeoutMs);
    socket.on('timeout', () => {
      // Idle means nothing to do either way; a reply being computed or sent is not idle
      // (the write deadline watches a client that does not read).
      if (this.inFlight > 0 || this.unsent > 0) {
        socket.setTimeout(opts.idleTimeoutMs);
        return;
      }
      this.close();
    });
    socket.on('error', () => this.close());
    socket.on('close', () => this.cleanup());
    socket.on('drain', () => this.pump());
    socket.on('data', (chunk: Buffer) => {
      this.frames.push(chunk);
      this.pump();
    });
  }

  /** Nothing in flight and nothing unsent: closing it loses no answer. */
  idle(): boolean {
    return this.inFlight === 0 && this.unsent === 0;
  }

  /** Eviction order: lower goes first. Never-completed connections rank below all others. */
  rank(): number {
    return (this.messages > 0 ? 1e15 : 0) + this.lastMessageAt;
  }

  close(): void {
    if (this.closed) return;
    this.socket.destroy();
    this.cleanup();
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.messageTimer);
    clearTimeout(this.writeTimer);
    this.conns.unsent -= this.unsent;
    this.unsent = 0;
    this.frames.clear();
    this.conns.remove(this);
  }

  private overOutput(): boolean {
    return this.unsent >= this.opts.maxUnsentBytes || (this.unsent > 0 && this.conns.unsent >= this.opts.maxUnsentTotalBytes);
  }

  private blocked(): boolean {
    return this.overOutput() || this.inFlight >= this.opts.maxInFlight;
  }

  /** Cuts complete messages out of what was received and answers them, as far as the limits allow. */
  private pump(): void {
    if (this.closed) return;
    while (!this.blocked()) {
      const len = this.frames.nextLength();
      if (len === undefined) break;
      // A message shorter than a header can never be a query; RFC 7766 leaves closing to us.
      if (len < 12) {
        this.close();
        return;
      }
      const msg = this.frames.next();
      if (!msg) break;
      this.messages++;
      this.lastMessageAt = Date.now();
      clearTimeout(this.messageTimer);
      this.messageTimer = undefined;
      this.dispatch(msg);
      if (this.closed) return;
    }
    if (this.blocked()) {
      // Stop reading until the client takes its replies; the kernel's window then pushes back
      // on the client instead of our memory growing.
      if (!this.paused) {
        this.paused = true;
        this.socket.pause();
      }
      clearTimeout(this.messageTimer);
      this.messageTimer = undefined;
      if (this.overOutput()) this.armWriteTimer();
      return;
    }
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    // The deadline runs from a message's first byte and is not renewed by further bytes.
    if (this.frames.buffered > 0 && !this.messageTimer) {
      this.messageTimer = setTimeout(() => {
        this.log.debug({ client: this.address, received: this.frames.buffered }, 'TCP message not completed in time; closing');
        this.close();
      }, this.opts.messageTimeoutMs);
    }
  }

  /** Closes the connection when its unsent replies make no progress for the write deadline. */
  private armWriteTimer(): void {
    if (this.writeTimer) return;
    const left = this.flushedAt + this.opts.writeTimeoutMs - Date.now();
    this.writeTimer = setTimeout(
      () => {
        this.writeTimer = undefined;
        if (this.closed || !this.overOutput()) return;
        if (Date.now() - this.flushedAt >= this.opts.writeTimeoutMs) {
          this.log.debug({ client: this.address, unsent: this.unsent }, 'TCP client does not read its replies; closing');
          this.close();
          return;
        }
        this.armWriteTimer();
      },
      Math.max(1, left),
    );
  }

  private dispatch(msg: Buffer): void {
    this.inFlight++;
    let reply: Buffer | null | Promise<Buffer | null>;
    try {
      reply = this.handler.handle(msg, 'tcp', this.client, this.local);
    } catch (err) {
      this.log.error({ err, client: this.address }, 'unexpected error handling a TCP message');
      reply = null;
    }
    if (reply instanceof Promise) {
      reply.then(
        (r) => {
          this.write(r);
          this.pump();
        },
        (err: unknown) => {
          this.log.error({ err }, 'unexpected error handling a TCP message');
          this.write(null);
          this.pump();
        },
      );
    } else {
      this.write(reply);
    }
  }

  private write(reply: Buffer | null): void {
    this.inFlight--;
    if (!reply || this.closed) return;
    // A zone transfer answers with several messages, one frame each, in order.
    const more = (reply as Reply).more;
    const framed = frame(more ? [reply, ...more] : [reply]);
    const size = framed.length;
    // With nothing pending before, the client has had no chance to fall behind until now.
    if (this.unsent === 0) this.flushedAt = Date.now();
    this.unsent += size;
    this.conns.unsent += size;
    this.socket.write(framed, () => {
      // Also called (with an error) when the socket is destroyed first; cleanup already
      // returned this connection's unsent bytes then.
      if (this.closed) return;
      this.unsent -= size;
      this.conns.unsent -= size;
      this.flushedAt = Date.now();
      // 'drain' only follows a write the stream refused; a limit below its high-water mark
      // needs this to resume.
      if (this.paused) this.pump();
    });
  }
}
