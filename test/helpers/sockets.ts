// One UDP socket and one TCP server on the same port number, for test DNS servers. Binding UDP on
// port 0 and then TCP on the number it got fails with EADDRINUSE whenever another process holds
// that TCP port; this helper tries fresh numbers until both bind.
import dgram from 'node:dgram';
import net from 'node:net';

export interface UdpTcpPair {
  port: number;
  udp: dgram.Socket;
  tcp: net.Server;
  /** Closes both. */
  close(): Promise<void>;
}

function bindUdp(sock: dgram.Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, host, () => {
      sock.off('error', reject);
      resolve();
    });
  });
}

function listenTcp(srv: net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => {
      srv.off('error', reject);
      resolve();
    });
  });
}

/**
 * Binds UDP and TCP on `host` at one port number: `port` when given (no retry: the caller wants
 * that number), else a free one, trying up to `attempts` numbers (`tryFirst` ones first). The UDP socket and TCP server
 * come back bound and listening; attach handlers with `udp.on('message')` and
 * `tcp.on('connection')`, or pass `onConnection` for the server.
 */
export async function bindUdpTcp(
  host = '127.0.0.1',
  opts: { port?: number; attempts?: number; tryFirst?: number[]; onConnection?: (sock: net.Socket) => void } = {},
): Promise<UdpTcpPair> {
  const attempts = opts.port === undefined ? (opts.attempts ?? 20) : 1;
  // Numbers to try before asking the kernel for one (a test of this helper names a taken one).
  const first = [...(opts.tryFirst ?? [])];
  const family = net.isIP(host) === 6 ? 'udp6' : 'udp4';
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    const udp = dgram.createSocket(family);
    const wanted = opts.port ?? first.shift();
    try {
      await bindUdp(udp, wanted ?? 0, host);
    } catch (err) {
      udp.close();
      if (opts.port === undefined && wanted !== undefined) {
        last = err;
        continue;
      }
      throw err;
    }
    const port = udp.address().port;
    const tcp = net.createServer(opts.onConnection);
    try {
      await listenTcp(tcp, port, host);
    } catch (err) {
      last = err;
      await new Promise<void>((r) => udp.close(() => r()));
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && opts.port === undefined) continue;
      throw err;
    }
    const close = async (): Promise<void> => {
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    };
    return { port, udp, tcp, close };
  }
  throw new Error(`no port on ${host} free for both UDP and TCP after ${attempts} attempts: ${String(last)}`);
}
