// UDP transport: one socket per listen address. Knows nothing about DNS beyond handing
// datagrams to the handler and sending back what it returns.
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { PacketHandler } from './gate.js';
import type { Logger } from 'pino';

/**
 * Replies always go to an IP literal of the socket's own family; answering the lookup
 * synchronously skips dns.lookup's deferral that dgram.send would otherwise pay per datagram.
 */
function literalLookup(family: 4 | 6) {
  return (address: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, address: string, family: number) => void): void => {
    cb(null, address, family);
  };
}

export async function listenUdp(address: string, port: number, handler: PacketHandler, log: Logger): Promise<dgram.Socket> {
  const socket = dgram.createSocket({
    type: isIPv6(address) ? 'udp6' : 'udp4',
    // '::' without bind serves IPv4 too (dual-stack), as CoreDNS listening on every address.
    ipv6Only: isIPv6(address) && address !== '::',
    lookup: literalLookup(isIPv6(address) ? 6 : 4) as unknown as dgram.SocketOptions['lookup'],
  });
  const local = { address, port };
  socket.on('message', (msg, rinfo) => {
    let reply: Buffer | null | Promise<Buffer | null>;
    try {
      // rinfo already has the address and port the handler needs: no copy per datagram.
      reply = handler.handle(msg, 'udp', rinfo, local);
    } catch (err) {
      log.error({ err, client: rinfo.address }, 'unexpected error handling a UDP packet');
      return;
    }
    if (reply instanceof Promise) {
      reply.then(
        (r) => r && socket.send(r, rinfo.port, rinfo.address),
        (err: unknown) => log.error({ err }, 'unexpected error handling a UDP packet'),
      );
    } else if (reply) {
      socket.send(reply, rinfo.port, rinfo.address);
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, address, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  // Only after the bind: a bind failure is the caller's to explain in one line, not a logged stack.
  socket.on('error', (err) => log.error({ err, address, port }, 'UDP socket error'));
  return socket;
}
