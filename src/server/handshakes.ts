// The TLS handshakes in progress on one listener, and who gives way when there are too many.
import type net from 'node:net';
import type tls from 'node:tls';

/**
 * TLS connections (DoT, DoH, gRPC) still in their handshake, held to the same caps as connections (per
 * client address and per listener). At a cap the newcomer takes the slot of the oldest
 * handshake, so clients that stall their handshakes cannot keep others out; the handshake
 * deadline closes those that are not displaced.
 */
export class Handshakes {
  /** Insertion order is age order. */
  private readonly sockets = new Map<string, net.Socket>();

  constructor(private readonly opts: { readonly maxConnections: number; readonly maxConnectionsPerClient: number }) {}

  add(raw: net.Socket): void {
    const address = raw.remoteAddress ?? '';
    let mine = 0;
    for (const s of this.sockets.values()) if (s.remoteAddress === address) mine++;
    if (mine >= this.opts.maxConnectionsPerClient) this.evictOldest((s) => s.remoteAddress === address);
    if (this.sockets.size >= this.opts.maxConnections) this.evictOldest(() => true);
    const key = `${address}|${raw.remotePort}`;
    this.sockets.set(key, raw);
    raw.once('close', () => {
      if (this.sockets.get(key) === raw) this.sockets.delete(key);
    });
  }

  done(socket: tls.TLSSocket): void {
    this.sockets.delete(`${socket.remoteAddress ?? ''}|${socket.remotePort}`);
  }

  private evictOldest(which: (s: net.Socket) => boolean): void {
    for (const [key, s] of this.sockets) {
      if (!which(s)) continue;
      this.sockets.delete(key);
      s.destroy();
      return;
    }
  }
}
