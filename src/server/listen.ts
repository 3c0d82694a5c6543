// Opens the UDP and TCP listeners of one address:port and closes them again.
import type net from 'node:net';
import type { Logger } from 'pino';
import { Gate, type PacketHandler } from './gate.js';
import { listenUdp, type UdpListener } from './udp.js';
import { listenTcp, defaultTcpOptions, type TcpOptions } from './tcp.js';
import type { DotServerTls } from '../chain/registry.js';

export interface Listener {
  address: string;
  port: number;
  /** Stops accepting, lets queries in flight finish (up to drainMs), then closes the sockets. */
  close(drainMs?: number): Promise<void>;
}

/** Explains the bind failures people hit in one line, naming address:port and the fix. */
function bindError(err: NodeJS.ErrnoException, address: string, port: number, proto: 'UDP' | 'TCP'): Error {
  const where = `${address.includes(':') ? `[${address}]` : address}:${port} (${proto})`;
  if (err.code === 'EACCES') {
    return new Error(
      `cannot listen on ${where}: ports below 1024 need privileges. Run as root, grant the capability (sudo setcap cap_net_bind_service=+ep "$(command -v node)"), or use a high port such as --port 1053`,
    );
  }
  if (err.code === 'EADDRINUSE') return new Error(`cannot listen on ${where}: the port is already in use by another process; stop it or choose another --port`);
  if (err.code === 'EADDRNOTAVAIL') return new Error(`cannot listen on ${where}: no interface of this machine has the address ${address}; fix the bind line`);
  return new Error(`cannot listen on ${where}: ${err.message}`);
}

/**
 * `dot` makes it a DNS over TLS listener: TCP only (RFC 7858 has no UDP), inside TLS when `dot.tls`
 * is set, else plain TCP as CoreDNS serves a tls:// block without a tls line.
 */
export async function listen(
  address: string,
  port: number,
  target: () => PacketHandler,
  log: Logger,
  tcpOptions: Partial<TcpOptions> = {},
  dot?: { tls?: DotServerTls },
): Promise<Listener> {
  const handler = new Gate(target);
  let udp: UdpListener | undefined;
  let tcp!: net.Server;
  let actual = port;
  if (dot) {
    try {
      const tls = dot.tls && { tls: dot.tls.options, verifyIfGiven: dot.tls.verifyIfGiven };
      tcp = await listenTcp(address, port, handler, log, { ...defaultTcpOptions, ...tcpOptions }, tls);
    } catch (err) {
      throw bindError(err as NodeJS.ErrnoException, address, port, 'TCP');
    }
    actual = (tcp.address() as net.AddressInfo).port;
  }
  // Port 0 picks a free UDP port and TCP then takes the same number, which another process may
  // hold over TCP: try fresh numbers then (a fixed port is never swapped for another).
  for (let attempt = 1; !dot; attempt++) {
    try {
      udp = await listenUdp(address, port, handler, log);
    } catch (err) {
      throw bindError(err as NodeJS.ErrnoException, address, port, 'UDP');
    }
    const bound = udp;
    actual = bound.socket.address().port;
    try {
      tcp = await listenTcp(address, actual, handler, log, { ...defaultTcpOptions, ...tcpOptions });
      break;
    } catch (err) {
      bound.socket.close();
      if (port === 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 20) continue;
      throw bindError(err as NodeJS.ErrnoException, address, actual, 'TCP');
    }
  }
  const connections = new Set<net.Socket>();
  tcp.on('connection', (socket: net.Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  return {
    address,
    port: actual,
    close: async (drainMs = 2000) => {
      tcp.close();
      await handler.drain(drainMs);
      await new Promise<void>((resolve) => {
        if (udp) {
          udp.flush();
          udp.socket.close(() => resolve());
        } else setTimeout(resolve, 0);
        // Established connections would keep close() waiting for their idle timeout.
        for (const socket of connections) socket.destroy();
        setTimeout(resolve, 1000).unref();
      });
    },
  };
}
