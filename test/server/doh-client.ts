// DNS over HTTPS clients for the tests (node:http2, node:https, node:http): one request per call,
// every wait bounded.
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';

export interface DohTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
}

export interface DohResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface DohRequest {
  method?: 'GET' | 'POST' | string;
  /** Path and query string, /dns-query?dns=... */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
}

/** The GET path of a query: base64url without padding (RFC 8484 4.1). */
export function getPath(msg: Buffer): string {
  return `/dns-query?dns=${msg.toString('base64url')}`;
}

/** An HTTP/2 connection (TLS when `tls` is given, else prior knowledge); resolves once it is usable. */
export function h2Connect(port: number, tls?: DohTls, timeoutMs = 5000): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    // Headers as long as the server's limit allows, and longer, for the tests of that limit.
    const big = { maxSendHeaderBlockLength: 1 << 20 };
    const session = tls
      ? http2.connect(`https://127.0.0.1:${port}`, { ...tls, ...big, ALPNProtocols: ['h2'] })
      : http2.connect(`http://127.0.0.1:${port}`, big);
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`no HTTP/2 connection to 127.0.0.1:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    session.once('connect', () => {
      clearTimeout(timer);
      session.off('error', onError);
      session.on('error', () => {});
      resolve(session);
    });
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    session.once('error', onError);
  });
}

/** One request on an HTTP/2 connection. */
export function h2Request(session: http2.ClientHttp2Session, r: DohRequest, timeoutMs = 5000): Promise<DohResponse> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': r.method ?? 'GET', ':path': r.path, ...r.headers }, { endStream: r.body === undefined });
    const chunks: Buffer[] = [];
    let headers: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader = {};
    const timer = setTimeout(() => {
      stream.close(http2.constants.NGHTTP2_CANCEL);
      reject(new Error(`no HTTP/2 response within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on('response', (h) => {
      headers = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      clearTimeout(timer);
      if (headers[':status'] === undefined) reject(new Error(`stream ended without a response (code ${stream.rstCode})`));
      else resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks) });
    });
    stream.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    stream.on('close', () => {
      clearTimeout(timer);
      if (headers[':status'] === undefined) reject(new Error(`stream closed without a response (code ${stream.rstCode})`));
    });
    if (r.body !== undefined) stream.end(r.body);
  });
}

/** One request on a fresh HTTP/1.1 connection (TLS when `tls` is given). */
export function h1Request(port: number, r: DohRequest, tls?: DohTls, timeoutMs = 5000): Promise<DohResponse> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, method: r.method ?? 'GET', path: r.path, headers: r.headers ?? {}, agent: false as const, timeout: timeoutMs };
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    };
    const req = tls ? https.request({ ...options, ...tls }, onResponse) : http.request(options, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no HTTP/1.1 response within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(r.body);
  });
}

/** A DNS over HTTPS POST of `msg`. */
export function post(msg: Buffer, type = 'application/dns-message'): DohRequest {
  return { method: 'POST', path: '/dns-query', headers: { 'content-type': type, accept: 'application/dns-message' }, body: msg };
}
