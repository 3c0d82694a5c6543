// Exchanges with a tls:// upstream (DNS over TLS, RFC 7858: TCP framing inside TLS 1.2 or later,
// the certificate verified), over connections kept for reuse as CoreDNS's plugin/pkg/proxy
// persistent.go keeps them: one query at a time per connection, an idle connection taken oldest
// first, closed after `expire` idle or `max_age` since it was opened, at most `max_idle_conns`
// idle. A cached connection the upstream has closed meanwhile is dropped and the next tried
// (CoreDNS's ErrCachedClosed), without counting as a failed exchange. A new connection resumes
// the last TLS session the upstream gave (CoreDNS's ClientSessionCache), a shorter handshake.
import { isIP } from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { AppMetrics } from '../../metrics/index.js';
import { FrameReader, frame } from '../../pkg/tcp-frames.js';
import type { ForwardTls } from './config.js';
import { checked, ExchangeError, type ReplyCheck } from './exchange.js';

export interface TlsPoolOptions {
  host: string;
  port: number;
  label: string;
  tls: ForwardTls;
  expireMs: number;
  maxAgeMs: number;
  maxIdleConns: number;
  metrics: AppMetrics;
  log?: Logger;
}

/** What the connection's socket events go to while an exchange uses it. */
interface Waiter {
  secure(): void;
  message(msg: Buffer): void;
  gone(err: Error | undefined): void;
}

interface Conn {
  socket: tls.TLSSocket;
  frames: FrameReader;
  created: number;
  used: number;
  /** The handshake is done (and the certificate verified). */
  secure: boolean;
  /** The exchange using the connection; undefined while it is idle in the pool. */
  waiter?: Waiter;
  idleTimer?: NodeJS.Timeout;
}

/** The upstream closed a cached connection before it answered: try another one. */
class CachedClosed extends Error {}

export class TlsPool {
  /** Idle connections, oldest first (CoreDNS takes the front for source port diversity). */
  private idle: Conn[] = [];
  private readonly busy = new Set<Conn>();
  private closed = false;
  /** The last session ticket the upstream sent, offered by the next connection. */
  private session: Buffer | undefined;
  /** Connections whose handshake resumed a session (for tests and logs). */
  resumed = 0;

  constructor(private readonly o: TlsPoolOptions) {}

  /** Idle connections kept for reuse now (for tests). */
  get idleCount(): number {
    return this.idle.length;
  }

  /**
   * One query and its reply; `fresh` opens a connection of its own and closes it after, as
   * CoreDNS's health checker does. The timer covers connect, handshake and reply.
   */
  async exchange<T>(query: Buffer, check: ReplyCheck<T>, timeoutMs: number, fresh = false): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    // Bounded: each pass takes a connection out of the pool for good, and a new one ends the loop.
    for (;;) {
      if (this.closed) throw new ExchangeError(this.o.label, 'forward plugin closed');
      const cached = fresh ? undefined : this.take();
      try {
        return await this.once(cached ?? this.dial(), cached !== undefined, fresh, query, check, deadline, timeoutMs);
      } catch (err) {
        if (err instanceof CachedClosed) continue;
        throw err;
      }
    }
  }

  /** The oldest idle connection still within expire and max_age, or undefined. */
  private take(): Conn | undefined {
    const now = Date.now();
    for (let c = this.idle.shift(); c; c = this.idle.shift()) {
      clearTimeout(c.idleTimer);
      if (now - c.used >= this.o.expireMs || (this.o.maxAgeMs > 0 && now - c.created >= this.o.maxAgeMs)) {
        c.socket.destroy();
        continue;
      }
      this.hit('proxyConnCacheHits');
      return c;
    }
    this.hit('proxyConnCacheMisses');
    return undefined;
  }

  private hit(which: 'proxyConnCacheHits' | 'proxyConnCacheMisses'): void {
    // CoreDNS's labels: the proto of a DoT dial is tcp-tls.
    this.o.metrics.m[which].inc({ proxy_name: 'forward', to: this.o.label, proto: 'tcp-tls' });
  }

  private dial(): Conn {
    const t = this.o.tls;
    const name = t.servername;
    const socket = tls.connect({
      host: this.o.host,
      port: this.o.port,
      // SNI carries a host name only (RFC 6066); a server name that is an address is still what
      // the certificate is checked against.
      ...(name !== undefined && isIP(name) === 0 ? { servername: name } : {}),
      ...(name !== undefined && isIP(name) !== 0
        ? { checkServerIdentity: (_host: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(name, cert) }
        : {}),
      ...(t.ca ? { ca: t.ca } : {}),
      ...(t.cert && t.key ? { cert: t.cert, key: t.key } : {}),
      ...(this.session ? { session: this.session } : {}),
      minVersion: 'TLSv1.2',
      rejectUnauthorized: true,
    });
    socket.setNoDelay(true);
    const now = Date.now();
    const c: Conn = { socket, frames: new FrameReader(), created: now, used: now, secure: false };
    socket.on('session', (ticket: Buffer) => {
      this.session = ticket;
    });
    socket.on('secureConnect', () => {
      if (socket.isSessionReused()) this.resumed++;
      c.secure = true;
      c.waiter?.secure();
    });
    socket.on('data', (chunk: Buffer) => {
      // Bytes on an idle connection answer nothing we asked: the connection is not trusted again.
      if (!c.waiter) return this.drop(c);
      c.frames.push(chunk);
      // Bounded: each pass consumes one whole frame.
      for (let msg = c.frames.next(); msg && c.waiter; msg = c.frames.next()) c.waiter.message(msg);
    });
    socket.on('error', (err) => {
      if (!c.secure) {
        this.o.log?.debug(
          { plugin: 'forward', to: `tls://${this.o.label}`, err: err.message, code: (err as NodeJS.ErrnoException).code },
          'TLS connection to the upstream failed',
        );
      }
      if (c.waiter) c.waiter.gone(err);
      else this.drop(c);
    });
    socket.on('close', () => {
      if (c.waiter) c.waiter.gone(undefined);
      else this.drop(c);
    });
    return c;
  }

  private once<T>(c: Conn, cached: boolean, fresh: boolean, query: Buffer, check: ReplyCheck<T>, deadline: number, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const label = this.o.label;
      let replied = false;
      const finish = (err: Error | null, value?: T): void => {
        if (c.waiter !== waiter) return;
        c.waiter = undefined;
        clearTimeout(timer);
        this.busy.delete(c);
        if (err) {
          c.socket.destroy();
          reject(err);
          return;
        }
        if (fresh) c.socket.end();
        else this.yieldConn(c);
        resolve(value as T);
      };
      const send = (): void => {
        c.socket.write(frame([query]));
      };
      const waiter: Waiter = {
        secure: send,
        message: (msg) => {
          replied = true;
          const ok = checked(label, check, msg, finish);
          if (ok !== undefined) finish(null, ok);
        },
        gone: (err) => {
          if (cached && !replied) return finish(new CachedClosed());
          const stage = c.secure ? '' : ' (before the TLS handshake was done)';
          finish(new ExchangeError(label, err ? `tls: ${err.message}${stage}` : `tls: connection closed before a reply${stage}`));
        },
      };
      const left = Math.max(0, deadline - Date.now());
      const timer = setTimeout(() => finish(new ExchangeError(label, `no reply within ${timeoutMs} ms (tls${c.secure ? '' : ', handshake not done'})`)), left);
      c.waiter = waiter;
      this.busy.add(c);
      if (c.socket.destroyed) waiter.gone(undefined);
      else if (c.secure) send();
    });
  }

  /** Back to the pool (CoreDNS's Yield), unless the pool is full, closed, or the connection too old. */
  private yieldConn(c: Conn): void {
    const now = Date.now();
    c.used = now;
    c.frames.clear();
    const { expireMs, maxAgeMs, maxIdleConns } = this.o;
    const life = maxAgeMs > 0 ? Math.min(expireMs, maxAgeMs - (now - c.created)) : expireMs;
    // `expire 0` keeps nothing (CoreDNS: every cached connection is already expired).
    if (this.closed || life <= 0 || (maxIdleConns > 0 && this.idle.length >= maxIdleConns)) {
      c.socket.end();
      return;
    }
    c.idleTimer = setTimeout(() => this.drop(c), life);
    c.idleTimer.unref();
    this.idle.push(c);
  }

  private drop(c: Conn): void {
    clearTimeout(c.idleTimer);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    c.socket.destroy();
  }

  /** Closes every connection; exchanges in flight fail. */
  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) {
      clearTimeout(c.idleTimer);
      c.socket.destroy();
    }
    for (const c of [...this.busy]) c.waiter?.gone(new Error('forward plugin closed'));
  }
}
