// The contract between listen() and a stream transport whose connections carry DNS messages
// (DNS over HTTPS, gRPC): the transport opens its socket and answers through the handler; listen()
// drains the handler and closes the transport on shutdown.
import type { Logger } from 'pino';
import type { LocalEndpoint } from '../chain/plugin.js';
import type { ListenerSettings, ServerTls, Transport } from '../chain/transport.js';
import type { PacketHandler } from './gate.js';
import type { TcpOptions } from './tcp.js';

export interface StreamListenArgs {
  address: string;
  /** 0 picks a free port; the server reports the bound one. */
  port: number;
  handler: PacketHandler;
  log: Logger;
  /** The connection caps, deadlines and handshake deadline the TCP and DoT listeners use too, with the block's `timeouts` applied. */
  tcp: TcpOptions;
  /** Absent: the transport serves without encryption, as CoreDNS does without a `tls` line. */
  tls?: ServerTls;
  settings: ListenerSettings;
}

export interface StreamServer {
  /** The bound port. */
  readonly port: number;
  /** Stops accepting connections; those open stay until closeConnections(). */
  stopAccepting(): void;
  /** Closes every open connection (after the handler drained). */
  closeConnections(): void;
  /** New certificate files for an open TLS listener (a reload); false when it must be opened again. */
  updateTls?(tls: ServerTls | undefined): boolean;
}

export type OpenStream = (args: StreamListenArgs) => Promise<StreamServer>;

/**
 * Where the handler is told a query arrived: the listener's address, its port as the Corefile key
 * gives it (what the metrics' `server` label and the blocks' zones are matched on, as for UDP and
 * TCP) and the transport.
 */
export function localOf(args: Pick<StreamListenArgs, 'address' | 'port'>, transport: Exclude<Transport, 'dns' | 'tls'>): LocalEndpoint {
  return { address: args.address, port: args.port, transport };
}
