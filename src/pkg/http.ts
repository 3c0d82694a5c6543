// The HTTP listeners of the operational plugins (health, ready, prometheus): one listener per
// address, shared by every plugin and server block that names it, each plugin adding its path.
// CoreDNS opens a listener per plugin and per address (with SO_REUSEPORT); one listener with
// several paths answers the same URLs without the kernel spreading connections between twins.
import http from 'node:http';
import type { Socket } from 'node:net';
import { isHostPortError, splitHostPort } from './hostport.js';

export interface HttpAddress {
  /** Host to listen on; '' is every address (Go's `:8080`). */
  host: string;
  port: number;
  /** As written in the Corefile, for messages. */
  text: string;
}

/**
 * Parses an address the way Go's net.SplitHostPort accepts it: `HOST:PORT`, `[IPV6]:PORT` or
 * `:PORT`. Returns the reason when it is not one.
 */
export function parseHttpAddress(text: string): HttpAddress | string {
  const a = splitHostPort(text, { host: 'name', portZero: true, emptyHost: true });
  if (!isHostPortError(a)) return { ...a, text };
  switch (a.problem) {
    case 'no-port':
      return `"${text}" has no port; write HOST:PORT or :PORT, e.g. :8080`;
    case 'colons':
      return `"${text}" has too many colons; write an IPv6 address in brackets, e.g. [::1]:8080`;
    case 'port':
      return `"${text}": port "${a.port}" is not a number from 0 to 65535`;
    case 'host':
      return `"${text}": "${a.host}" is not a host name or IP address`;
  }
}

/**
 * What one HTTP listener may hold. Probes and scrapers open a connection or two at a time; these
 * bounds keep a client that opens many and sends nothing (or headers a byte at a time) from
 * taking the process's file descriptors, which DNS over TCP and reloads need too.
 */
export interface HttpLimits {
  /**
   * Connections open at once per listener. One more is accepted, then the oldest connection
   * with no request being answered is closed (or the new one, when every one is busy), so a
   * probe still gets in while idle connections fill the listener.
   */
  maxConnections: number;
  /**
   * A connection with no request under way (new, or kept alive after one) is closed after this
   * long, and the request headers must arrive within it (else 408).
   */
  idleTimeoutMs: number;
  /** The whole request must arrive within this long (else 408). */
  requestTimeoutMs: number;
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({ maxConnections: 128, idleTimeoutMs: 5000, requestTimeoutMs: 10000 });

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

interface Route {
  handler: RouteHandler;
  refs: number;
}

interface Endpoint {
  server: http.Server;
  routes: Map<string, Route>;
  listening: Promise<number>;
  /** Pending close once the last route went (see LINGER_MS). */
  closing: NodeJS.Timeout | undefined;
}

/**
 * A listener whose last route was released stays up this long, so a reload (old plugins close,
 * then new ones start on the same address) does not refuse the probes and scrapes in between.
 * The listener never keeps the process alive (unref), so a final shutdown does not wait for it.
 */
const LINGER_MS = 1000;

const endpoints = new Map<string, Endpoint>();

/** Go listens on the first address of a host name: for localhost that is 127.0.0.1. */
function listenHost(host: string): string | undefined {
  if (host === '') return undefined;
  if (host === 'localhost') return '127.0.0.1';
  return host;
}

const NOT_FOUND_HEADERS = {
  'content-type': 'text/plain; charset=utf-8',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

function createEndpoint(addr: HttpAddress, key: string, limits: Readonly<HttpLimits>): Endpoint {
  const routes = new Map<string, Route>();
  const { maxConnections, idleTimeoutMs, requestTimeoutMs } = limits;
  // Open connections, oldest first (a Set keeps insertion order), and those answering a request.
  const open = new Set<Socket>();
  const busy = new Set<Socket>();
  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const socket = req.socket;
    busy.add(socket);
    res.once('close', () => busy.delete(socket));
    const path = (req.url ?? '/').split('?')[0]!;
    const route = routes.get(path);
    if (!route) {
      // No route: nothing for a browser to run or sniff, whichever listener this is (the ui page's too).
      res.writeHead(404, NOT_FOUND_HEADERS).end('404 page not found\n');
      return;
    }
    Promise.resolve()
      .then(() => route.handler(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`${err instanceof Error ? err.message : String(err)}\n`);
      });
  };
  const server = http.createServer(
    {
      headersTimeout: idleTimeoutMs,
      requestTimeout: Math.max(requestTimeoutMs, idleTimeoutMs),
      keepAliveTimeout: idleTimeoutMs,
      // Node checks the header and request deadlines this often (default 30 s).
      connectionsCheckingInterval: Math.min(1000, idleTimeoutMs),
    },
    handle,
  );
  // Inactivity of a connection that sent nothing yet; Node's headersTimeout only starts with
  // the first byte. A connection busy answering (a metrics aggregation) is left alone.
  server.timeout = idleTimeoutMs;
  server.on('timeout', (socket: Socket) => {
    if (!busy.has(socket)) socket.destroy();
  });
  const listening = new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      endpoints.delete(key);
      const why =
        err.code === 'EADDRINUSE'
          ? 'the address is already in use'
          : err.code === 'EACCES'
            ? 'permission denied (ports below 1024 need privileges)'
            : err.message;
      reject(new Error(`cannot listen for HTTP on ${addr.text}: ${why}`));
    });
    server.listen({ host: listenHost(addr.host), port: addr.port }, () => {
      server.on('error', () => undefined);
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : addr.port);
    });
  });
  // Neither the listener nor its connections keep the process alive: DNS decides when it exits.
  server.unref();
  server.on('connection', (socket: Socket) => {
    socket.unref();
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
    if (open.size <= maxConnections) return;
    let victim: Socket = socket;
    for (const s of open) {
      if (s !== socket && !busy.has(s)) {
        victim = s;
        break;
      }
    }
    open.delete(victim);
    victim.destroy();
  });
  return { server, routes, listening, closing: undefined };
}

export interface OpenRoute {
  /** The port listened on (the one asked for, or the one picked for port 0). */
  port: number;
  /** Drops this route; the listener closes when its last route goes. */
  release(): Promise<void>;
}

/**
 * Serves `path` on `addr`. Several plugins may open the same path on the same address (one per
 * server block): the first handler answers, and the path stays until every opener released it.
 * `limits` (the opener's App's, from serve's --http-* flags) apply when this opens the listener;
 * one already open for the address keeps those it was opened with.
 */
export async function openRoute(
  addr: HttpAddress,
  path: string,
  handler: RouteHandler,
  limits: Readonly<HttpLimits> = DEFAULT_HTTP_LIMITS,
): Promise<OpenRoute> {
  const key = `${listenHost(addr.host) ?? ''}|${addr.port}`;
  let ep = endpoints.get(key);
  if (!ep || addr.port === 0) {
    ep = createEndpoint(addr, key, limits);
    if (addr.port !== 0) endpoints.set(key, ep);
  }
  const endpoint = ep;
  if (endpoint.closing) {
    clearTimeout(endpoint.closing);
    endpoint.closing = undefined;
  }
  const route = endpoint.routes.get(path);
  if (route && route.refs > 0) route.refs++;
  // A route left by a closed plugin is taken over by the new one (a reload).
  else endpoint.routes.set(path, { handler, refs: 1 });
  let port: number;
  try {
    port = await endpoint.listening;
  } catch (err) {
    endpoint.routes.delete(path);
    throw err;
  }
  let released = false;
  return {
    port,
    release: async () => {
      if (released) return;
      released = true;
      const r = endpoint.routes.get(path);
      if (r && r.refs > 0) r.refs--;
      if ([...endpoint.routes.values()].some((x) => x.refs > 0) || endpoint.closing) return;
      endpoint.closing = setTimeout(() => {
        endpoint.closing = undefined;
        if ([...endpoint.routes.values()].some((x) => x.refs > 0)) return;
        if (endpoints.get(key) === endpoint) endpoints.delete(key);
        endpoint.server.close();
        endpoint.server.closeAllConnections();
      }, LINGER_MS);
      endpoint.closing.unref();
    },
  };
}

/** A URL that reaches `addr` from this machine (for self checks). */
export function localUrl(addr: HttpAddress, port: number, path: string): string {
  const h = listenHost(addr.host);
  const host = h === undefined || h === '0.0.0.0' ? '127.0.0.1' : h === '::' ? '[::1]' : h.includes(':') ? `[${h}]` : h;
  return `http://${host}:${port}${path}`;
}
