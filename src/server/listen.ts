// Opens the UDP and TCP listeners of one address:port and closes them again.
import type dgram from 'node:dgram';
import type net from 'node:net';
import type { Logger } from 'pino';
import { Gate, type PacketHandler } from './gate.js';
import { listenUdp } from './udp.js';
import { listenTcp, defaultTcpOptions, type TcpOptions } from './tcp.js';

export interface Listener {
  address: string;
  port: number;
  /** Stops accepting, lets queries in flight finish (up to drainMs), then closes the sockets. */
  close(drainMs?: number): Promise<void>;
}

/** Explains the two bind failures people hit, with the fix. */
function bindError(err: NodeJS.ErrnoException, address: string, port: number): Error {
  if (err.code === 'EACCES') {
    return new Error(
      `cannot listen on ${address} port ${port}: ports below 1024 need privileges. Run as root, grant the capability (sudo setcap cap_net_bind_service=+ep "$(command -v node)"), or use a high port such as --port 1053`,
    );
  }
  if (err.code === 'EADDRINUSE') return new Error(`cannot listen on ${address} port ${port}: the port is already in use; stop the other server or choose another --port`);
  if (err.code === 'EADDRNOTAVAIL') return new Error(`cannot listen on ${address}: no interface of this machine has that address; fix the bind line`);
  return new Error(`cannot listen on ${address} port ${port}: ${err.message}`);
}

export async function listen(
  address: string,
  port: number,
  target: () => PacketHandler,
  log: Logger,
  tcpOptions: Partial<TcpOptions> = {},
): Promise<Listener> {
  const handler = new Gate(target);
  let udp: dgram.Socket;
  try {
    udp = await listenUdp(address, port, handler, log);
  } catch (err) {
    throw bindError(err as NodeJS.ErrnoException, address, port);
  }
  // Port 0 picks a free UDP port; TCP then takes the same number.
  const actual = udp.address().port;
  let tcp: net.Server;
  try {
    tcp = await listenTcp(address, actual, handler, log, { ...defaultTcpOptions, ...tcpOptions });
  } catch (err) {
    udp.close();
    throw bindError(err as NodeJS.ErrnoException, address, actual);
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
        udp.close(() => resolve());
        // Established connections would keep close() waiting for their idle timeout.
        for (const socket of connections) socket.destroy();
        setTimeout(resolve, 1000).unref();
      });
    },
  };
}
