// The TLS side of the stream listeners (DoT, DoH, gRPC): one node:tls server shape, the
// verify-if-given check, and new certificate files for a listener that is already open.
//
// A Corefile reload swaps the secure context, so open connections stay and new ones get the new
// certificate. What the server object itself holds (whether a client certificate is asked for and
// required, and the verify-if-given check its connection handler makes) cannot change in place.
import type net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { ServerTls } from '../chain/transport.js';

/**
 * A TLS server for one transport: the block's certificate and client verification, the
 * transport's ALPN, Nagle off (replies are small and wait on nothing), handshakes bounded by
 * `handshakeTimeoutMs`. A failed handshake is logged at debug and its socket closed.
 */
export function createTlsServer(
  options: tls.TlsOptions,
  alpn: string[],
  handshakeTimeoutMs: number,
  log: Logger,
  what: string,
  onSecure: (socket: tls.TLSSocket) => void,
): tls.Server {
  const server = tls.createServer({ ...options, ALPNProtocols: alpn, noDelay: true, handshakeTimeout: handshakeTimeoutMs }, onSecure);
  server.on('tlsClientError', (err, socket: net.Socket) => {
    log.debug({ err: err.message, client: socket.remoteAddress }, `${what} TLS handshake failed`);
    socket.destroy();
  });
  return server;
}

/**
 * client_auth verify_if_given: a certificate is optional, but one that is given must verify. Node
 * only asks for it (requestCert without rejectUnauthorized), so the check is made here: true when
 * the connection was closed for it.
 */
export function refusesCertificate(socket: tls.TLSSocket, verifyIfGiven: boolean, log: Logger, what: string): boolean {
  if (!verifyIfGiven || socket.authorized || socket.getPeerCertificate().raw === undefined) return false;
  log.debug({ client: socket.remoteAddress, reason: socket.authorizationError }, `${what} client certificate does not verify; closing`);
  socket.destroy();
  return true;
}

/** Applies `next` to `server` in place; false when the listener must be opened again. */
export function updateTlsInPlace(server: tls.Server, current: ServerTls, next: ServerTls | undefined, log: Logger, where: object): boolean {
  if (!next) return false;
  const a = current.options;
  const b = next.options;
  if (a.requestCert !== b.requestCert || a.rejectUnauthorized !== b.rejectUnauthorized || current.verifyIfGiven !== next.verifyIfGiven) return false;
  try {
    server.setSecureContext(b);
  } catch (err) {
    log.warn({ err, ...where }, 'cannot apply the new certificate in place; opening the listener again');
    return false;
  }
  return true;
}
