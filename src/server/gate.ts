// The handler a listener calls: forwards to whatever handler is current (a reload swaps it
// without touching sockets), and on shutdown stops taking new packets and lets the ones in
// flight finish, within a bound.
import type { Protocol } from '../chain/plugin.js';
import type { Endpoint, LocalEndpoint } from '../chain/plugin.js';

export interface PacketHandler {
  handle(msg: Buffer, protocol: Protocol, client: Endpoint, local: LocalEndpoint): Buffer | null | Promise<Buffer | null>;
}

export class Gate implements PacketHandler {
  private inflight = 0;
  private closing = false;
  private drained: (() => void) | undefined;

  constructor(private readonly target: () => PacketHandler) {}

  handle(msg: Buffer, protocol: Protocol, client: Endpoint, local: LocalEndpoint): Buffer | null | Promise<Buffer | null> {
    if (this.closing) return null;
    const reply = this.target().handle(msg, protocol, client, local);
    if (!(reply instanceof Promise)) return reply;
    this.inflight++;
    return reply.finally(() => {
      this.inflight--;
      // Let the transport send this reply before the listener closes its socket.
      if (this.inflight === 0 && this.drained) setImmediate(this.drained);
    });
  }

  /** Stops accepting packets; resolves when none is in flight or after timeoutMs. */
  drain(timeoutMs: number): Promise<void> {
    this.closing = true;
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
      setTimeout(resolve, timeoutMs).unref();
    });
  }
}
