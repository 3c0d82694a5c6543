// New certificate files for a TLS listener that is already open (a Corefile reload): the secure
// context is swapped, so open connections stay and new ones get the new certificate. What the
// server object itself holds (whether a client certificate is asked for and required, and the
// verify-if-given check its connection handler makes) cannot change in place.
import type tls from 'node:tls';
import type { Logger } from 'pino';
import type { ServerTls } from '../chain/transport.js';

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
