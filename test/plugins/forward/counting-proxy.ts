// A TCP proxy on loopback in front of a DNS over TLS upstream: it counts the connections the
// forwarder opens (the TLS passes through untouched), can point at no upstream (connections are
// closed at once, as by a server that is down), and can cut the connections it carries, at once
// or when the client next sends on them (a server closing an idle connection as a query arrives).
import net from 'node:net';

export class CountingProxy {
  /** Connections accepted since the start. */
  accepted = 0;
  /** Where connections go; undefined closes each at once. */
  target: number | undefined;
  port = 0;
  private readonly sockets = new Set<net.Socket>();
  /** Client connections closed, unforwarded, when they next send. */
  private readonly doomed = new Set<net.Socket>();
  private readonly server: net.Server;

  constructor(target?: number) {
    this.target = target;
    this.server = net.createServer((c) => {
      this.accepted++;
      this.sockets.add(c);
      c.on('error', () => c.destroy()).on('close', () => this.sockets.delete(c));
      if (this.target === undefined) return void c.destroy();
      const u = net.connect(this.target, '127.0.0.1');
      this.sockets.add(u);
      const drop = (): void => {
        c.destroy();
        u.destroy();
        this.sockets.delete(u);
        this.doomed.delete(c);
      };
      c.on('data', (b: Buffer) => (this.doomed.has(c) ? drop() : u.write(b)));
      u.pipe(c);
      c.on('close', drop);
      u.on('error', drop).on('close', drop);
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Connections open through the proxy now (each counts its two sockets once). */
  get open(): number {
    return [...this.sockets].filter((s) => s.localPort === this.port).length;
  }

  /** Closes every connection it carries (an upstream dropping idle clients). */
  cut(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** The connections open now are closed when the client next sends on them, without forwarding it. */
  cutOnNextSend(): void {
    for (const s of this.sockets) if (s.localPort === this.port) this.doomed.add(s);
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }
}
