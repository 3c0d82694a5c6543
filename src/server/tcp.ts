// TCP transport (RFC 7766): 2-byte length framing, many and pipelined queries per connection,
// idle and slow-message timeouts, and a cap on connections.
import net from 'node:net';
import type { PacketHandler } from './gate.js';
import type { Logger } from 'pino';
import type { Reply } from './handler.js';

export interface TcpOptions {
  /** Close a connection with nothing in flight after this long without a message. */
  idleTimeoutMs: number;
  /** Close a connection whose partial message has not completed after this long. */
  readTimeoutMs: number;
  maxConnections: number;
}

export const defaultTcpOptions: TcpOptions = { idleTimeoutMs: 10_000, readTimeoutMs: 3_000, maxConnections: 1024 };

export async function listenTcp(
  address: string,
  port: number,
  handler: PacketHandler,
  log: Logger,
  opts: TcpOptions = defaultTcpOptions,
): Promise<net.Server> {
  const local = { address, port };
  const server = net.createServer({ noDelay: true }, (socket) => serveConnection(socket, handler, log, local, opts));
  // Above the cap Node closes new connections at once instead of leaving them hanging.
  server.maxConnections = opts.maxConnections;
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

function serveConnection(
  socket: net.Socket,
  handler: PacketHandler,
  log: Logger,
  local: { address: string; port: number },
  opts: TcpOptions,
): void {
  const client = { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
  let pending: Buffer = Buffer.alloc(0);
  let inFlight = 0;
  const armTimer = (): void => {
    socket.setTimeout(pending.length > 0 ? opts.readTimeoutMs : opts.idleTimeoutMs);
  };
  armTimer();
  socket.on('timeout', () => {
    if (inFlight > 0 && pending.length === 0) return armTimer();
    socket.destroy();
  });
  socket.on('error', () => socket.destroy());
  const write = (reply: Buffer | null): void => {
    inFlight--;
    if (!reply || socket.destroyed) return;
    // A zone transfer answers with several messages, one frame each, in order.
    const messages = [reply, ...((reply as Reply).more ?? [])];
    const frame = Buffer.allocUnsafe(messages.reduce((n, m) => n + m.length + 2, 0));
    let at = 0;
    for (const m of messages) {
      frame.writeUInt16BE(m.length, at);
      m.copy(frame, at + 2);
      at += m.length + 2;
    }
    socket.write(frame);
  };
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      const len = pending.readUInt16BE(0);
      // A message shorter than a header can never be a query; RFC 7766 leaves closing to us.
      if (len < 12) {
        socket.destroy();
        return;
      }
      if (pending.length < len + 2) break;
      const msg = pending.subarray(2, len + 2);
      pending = pending.subarray(len + 2);
      inFlight++;
      let reply: Buffer | null | Promise<Buffer | null>;
      try {
        reply = handler.handle(Buffer.from(msg), 'tcp', client, local);
      } catch (err) {
        log.error({ err, client: client.address }, 'unexpected error handling a TCP message');
        reply = null;
      }
      if (reply instanceof Promise) {
        reply.then(write, (err: unknown) => {
          log.error({ err }, 'unexpected error handling a TCP message');
          write(null);
        });
      } else {
        write(reply);
      }
    }
    armTimer();
  });
}
