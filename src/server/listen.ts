// Opens the listener of one transport, address and port (UDP and TCP for dns://, TLS for tls://,
// HTTP for https://, gRPC for grpc://) and closes it again.
import type net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import { Gate, type PacketHandler } from './gate.js';
import { listenUdp, type UdpListener } from './udp.js';
import { listenTcp, defaultTcpOptions, type DotListenOptions, type TcpOptions } from './tcp.js';
import type { ListenerSettings, ServerTls, Transport } from '../chain/transport.js';
import type { OpenStream, StreamServer } from './stream.js';
import { openDoh } from './doh.js';

/** The transports served by a StreamServer, by scheme. */
const streams: Partial<Record<Transport, OpenStream>> = {
  https: openDoh,
  // grpc-js is loaded only when a grpc:// listener opens.
  grpc: async (args) => (await import('./grpc.js')).openGrpc(args),
};

/** What one listener serves: a transport on an address and port, with the settings of its blocks. */
export interface ListenAt {
  address: string;
  port: number;
  transport: Transport;
  tls?: ServerTls;
  settings: ListenerSettings;
}

export interface Listener {
  address: string;
  port: number;
  transport: Transport;
  /** Stops accepting, lets queries in flight finish (up to drainMs), then closes the sockets. */
  close(drainMs?: number): Promise<void>;
  /**
   * Gives the listener the certificate a reload read, keeping its socket and its connections
   * (those already open keep the certificate they shook hands with). True when applied in place;
   * false when the listener must be opened again (TLS added or removed, client_auth changed).
   * Absent on listeners without TLS (dns://).
   */
  updateTls?(tls: ServerTls | undefined): boolean;
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
 * A tls:// listener is TCP only (RFC 7858 has no UDP), inside TLS when `at.tls` is set, else plain
 * TCP as CoreDNS serves a tls:// block without a tls line; https:// and grpc:// likewise.
 */
export async function listen(at: ListenAt, target: () => PacketHandler, log: Logger, tcpOptions: Partial<TcpOptions> = {}): Promise<Listener> {
  const { address, port, transport } = at;
  const handler = new Gate(target);
  const open = streams[transport];
  if (open) return listenStream(open, at, handler, log, { ...defaultTcpOptions, ...tcpOptions, ...streamTimeouts(at.settings) });
  if (transport !== 'dns' && transport !== 'tls') throw new Error(`no listener for ${transport}:// in this build`);
  const dot = transport === 'tls';
  // The Corefile's `timeouts` is more specific than the --tcp-* flags: it wins.
  const opts: TcpOptions = { ...defaultTcpOptions, ...tcpOptions, ...streamTimeouts(at.settings) };
  let udp: UdpListener | undefined;
  let tcp!: net.Server;
  let actual = port;
  // Mutable: a certificate reload changes what later connections are checked against.
  const dotTls: DotListenOptions | undefined = at.tls && { tls: at.tls.options, verifyIfGiven: at.tls.verifyIfGiven };
  if (dot) {
    try {
      tcp = await listenTcp(address, port, handler, log, opts, dotTls);
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
      tcp = await listenTcp(address, actual, handler, log, opts);
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
  const server = tcp;
  let current = at.tls;
  const updateTls = (next: ServerTls | undefined): boolean => {
    if (!current || !next || !dotTls || !(server instanceof tls.Server)) return !current && !next;
    // Whether a client certificate is asked for and required are the server's, not the secure
    // context's: a change there needs a new server.
    const { requestCert, rejectUnauthorized } = next.options;
    if (requestCert !== current.options.requestCert || rejectUnauthorized !== current.options.rejectUnauthorized) return false;
    try {
      server.setSecureContext(next.options);
    } catch (err) {
      log.warn({ err, address, port: actual }, 'cannot apply the new certificate in place; opening the listener again');
      return false;
    }
    dotTls.tls = next.options;
    dotTls.verifyIfGiven = next.verifyIfGiven;
    current = next;
    return true;
  };
  return {
    address,
    port: actual,
    transport,
    ...(dot ? { updateTls } : {}),
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

/** The `timeouts` plugin's settings as TcpOptions, mapped to what each means in CoreDNS (README of timeouts). */
function streamTimeouts(settings: ListenerSettings): Partial<TcpOptions> {
  const t = settings.timeouts;
  const out: Partial<TcpOptions> = {};
  if (t?.readMs !== undefined) out.messageTimeoutMs = t.readMs;
  if (t?.writeMs !== undefined) out.writeTimeoutMs = t.writeMs;
  if (t?.idleMs !== undefined) out.idleTimeoutMs = t.idleMs;
  return out;
}

async function listenStream(open: OpenStream, at: ListenAt, handler: Gate, log: Logger, tcp: TcpOptions): Promise<Listener> {
  let server: StreamServer;
  try {
    server = await open({ address: at.address, port: at.port, handler, log, tcp, ...(at.tls ? { tls: at.tls } : {}), settings: at.settings });
  } catch (err) {
    throw bindError(err as NodeJS.ErrnoException, at.address, at.port, 'TCP');
  }
  return {
    address: at.address,
    port: server.port,
    transport: at.transport,
    ...(server.updateTls ? { updateTls: (next: ServerTls | undefined) => server.updateTls!(next) } : {}),
    close: async (drainMs = 2000) => {
      server.stopAccepting();
      await handler.drain(drainMs);
      server.closeConnections();
    },
  };
}
