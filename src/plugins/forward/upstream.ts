// One upstream of a forward plugin (CoreDNS's plugin/pkg/proxy Proxy): exchanges over UDP and
// TCP with a timer per exchange, the count of failed health checks, and the health-check probe
// (plugin/pkg/proxy/health.go + plugin/pkg/up): after an exchange fails, `. IN NS` is sent at once
// and then every interval until one gets a reply; each failed check counts one fail, a reply
// resets the count. The upstream is down while it has more than max_fails fails. A tls://
// upstream exchanges over TLS (tls-exchange.ts), and so do its health checks.
import type { Logger } from 'pino';
import type { AppMetrics } from '../../metrics/index.js';
import dgram from 'node:dgram';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { encodePacket } from '../../dns/encode.js';
import { FrameReader, frame } from '../../pkg/tcp-frames.js';
import type { ForwardTls, UpstreamAddress } from './config.js';
import { checked, ExchangeError, type ReplyCheck } from './exchange.js';
import { TlsPool } from './tls-exchange.js';

export function randomId(): number {
  return randomBytes(2).readUInt16BE(0);
}

interface Closable {
  destroy(): void;
}

interface HealthOptions {
  /** Where failed checks count (the App's). */
  metrics: AppMetrics;
  intervalMs: number;
  rd: boolean;
  domain: string;
  tcp: boolean;
  /** CoreDNS's health checker read timeout. */
  timeoutMs: number;
}

/** How a tls:// upstream's connections are made and kept. */
export interface TlsUpstreamOptions {
  tls: ForwardTls;
  expireMs: number;
  maxAgeMs: number;
  maxIdleConns: number;
  log?: Logger;
}

/**
 * A health check over TLS connects and shakes hands before it asks: miekg/dns's 2 s dial timeout
 * (which CoreDNS's checker keeps) on top of its 1 s read timeout.
 */
const TLS_HEALTH_DIAL_MS = 2000;

export class Upstream {
  /** Consecutive failed health checks (CoreDNS's Proxy.fails). */
  fails = 0;
  private probing = false;
  private closed = false;
  private readonly open = new Set<Closable>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The connections of a tls:// upstream; undefined for plain DNS. */
  readonly tls: TlsPool | undefined;

  constructor(
    readonly addr: UpstreamAddress,
    private readonly health: HealthOptions,
    tlsOptions?: TlsUpstreamOptions,
  ) {
    if (addr.transport === 'tls') {
      const o = tlsOptions ?? { tls: {}, expireMs: 10_000, maxAgeMs: 0, maxIdleConns: 0 };
      // The upstream's own `%NAME` (setup.ts refuses it together with tls_servername).
      const tls = addr.servername === undefined ? o.tls : { ...o.tls, servername: addr.servername };
      this.tls = new TlsPool({ ...o, tls, host: addr.host, port: addr.port, label: addr.label, metrics: health.metrics });
    }
  }

  get label(): string {
    return this.addr.label;
  }

  /** CoreDNS's Proxy.Down: more fails than maxFails; never down when maxFails is 0. */
  down(maxFails: number): boolean {
    return maxFails !== 0 && this.fails > maxFails;
  }

  /** One query and its reply; a tls:// upstream always answers over TLS, whatever `proto` says. */
  exchange<T>(proto: 'udp' | 'tcp', query: Buffer, check: ReplyCheck<T>, timeoutMs: number): Promise<T> {
    if (this.closed) return Promise.reject(new ExchangeError(this.label, 'forward plugin closed'));
    if (this.tls) return this.tls.exchange(query, check, timeoutMs);
    return proto === 'udp' ? this.udp(query, check, timeoutMs) : this.tcp(query, check, timeoutMs);
  }

  /**
   * The bookkeeping of one exchange: settles once (reply, error, timeout or plugin close),
   * closes the socket, and keeps the exchange closable by close() while it is open.
   */
  private settleOnce<T>(
    proto: 'udp' | 'tcp',
    timeoutMs: number,
    resolve: (value: T) => void,
    reject: (err: Error) => void,
    closeSocket: () => void,
  ): { finish: (err: Error | null, value?: T) => void; settled: () => boolean } {
    let done = false;
    const handle: Closable = { destroy: () => finish(new ExchangeError(this.label, 'closed')) };
    const finish = (err: Error | null, value?: T): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.open.delete(handle);
      closeSocket();
      if (err) reject(err);
      else resolve(value as T);
    };
    const timer = setTimeout(() => finish(new ExchangeError(this.label, `no reply within ${timeoutMs} ms (${proto})`)), timeoutMs);
    this.open.add(handle);
    return { finish, settled: () => done };
  }

  private udp<T>(query: Buffer, check: ReplyCheck<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // A fresh socket per exchange: a random source port per query, and a connected socket
      // only takes datagrams from the upstream's address and port, and hears ICMP refusals.
      const sock = dgram.createSocket(net.isIP(this.addr.host) === 6 ? 'udp6' : 'udp4');
      const { finish, settled } = this.settleOnce<T>('udp', timeoutMs, resolve, reject, () => {
        try {
          sock.close();
        } catch {
          // already closed
        }
      });
      sock.on('error', (err) => finish(new ExchangeError(this.label, `udp: ${err.message}`)));
      sock.on('message', (msg) => {
        const ok = checked(this.label, check, msg, finish);
        if (ok !== undefined) finish(null, ok);
      });
      sock.connect(this.addr.port, this.addr.host, () => {
        if (settled()) return;
        sock.send(query, (err) => {
          if (err) finish(new ExchangeError(this.label, `udp send: ${err.message}`));
        });
      });
    });
  }

  private tcp<T>(query: Buffer, check: ReplyCheck<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const sock = net.connect({ host: this.addr.host, port: this.addr.port });
      const frames = new FrameReader();
      const { finish, settled } = this.settleOnce<T>('tcp', timeoutMs, resolve, reject, () => sock.destroy());
      sock.setNoDelay(true);
      sock.on('error', (err) => finish(new ExchangeError(this.label, `tcp: ${err.message}`)));
      sock.on('close', () => finish(new ExchangeError(this.label, 'tcp: connection closed before a reply')));
      sock.on('connect', () => sock.write(frame([query])));
      sock.on('data', (chunk: Buffer) => {
        frames.push(chunk);
        // Bounded: each pass consumes one whole frame.
        for (let msg = frames.next(); msg && !settled(); msg = frames.next()) {
          const ok = checked(this.label, check, msg, finish);
          if (ok !== undefined) finish(null, ok);
        }
      });
    });
  }

  /** Starts the probe unless one is running (plugin/pkg/up: at most one check loop in flight). */
  healthcheck(): void {
    if (this.probing || this.closed) return;
    this.probing = true;
    void this.probe();
  }

  private async probe(): Promise<void> {
    try {
      // Ends when a check gets a reply or the plugin closes (each pass waits one interval).
      while (!this.closed) {
        if (await this.check()) {
          this.fails = 0;
          return;
        }
        this.fails++;
        this.health.metrics.forwardHealthcheckFailure(this.label);
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            this.timers.delete(t);
            resolve();
          }, this.health.intervalMs);
          t.unref();
          this.timers.add(t);
        });
      }
    } finally {
      this.probing = false;
    }
  }

  /** One health check: `DOMAIN IN NS` (RD unless no_rec); any reply with our ID is healthy. */
  private async check(): Promise<boolean> {
    const id = randomId();
    const msg = encodePacket({
      id,
      type: 'query',
      flags: this.health.rd ? 0x0100 : 0,
      questions: [{ name: this.health.domain, type: 'NS', class: 'IN' }],
    });
    const check = (reply: Buffer): true | undefined => (reply.length >= 12 && reply.readUInt16BE(0) === id ? true : undefined);
    try {
      if (this.closed) return false;
      // Over TLS on a connection of its own (CoreDNS's checker dials tcp-tls for each check,
      // force_tcp or not), so a check proves a new connection and handshake work.
      if (this.tls) await this.tls.exchange(msg, check, TLS_HEALTH_DIAL_MS + this.health.timeoutMs, true);
      else await this.exchange(this.health.tcp ? 'tcp' : 'udp', msg, check, this.health.timeoutMs);
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const h of [...this.open]) h.destroy();
    this.tls?.close();
  }
}
