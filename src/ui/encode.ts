// Response bodies for the page's server, gzip-compressed for a client that accepts it: the records
// of a 10k-Service cluster are a 14 MB JSON text and about 0.9 MB gzipped. A body made once (the
// page's script, the records of a generation) is compressed once and sent to every client.
import type http from 'node:http';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';

const gzip = promisify(gzipCallback);

/** Below this, gzip saves less than the headers it adds and costs a round through the thread pool. */
export const MIN_GZIP_BYTES = 1024;

/** A body as sent: its bytes, and gzipped when it is large enough to be worth it. */
export interface Encoded {
  readonly identity: Buffer;
  readonly gzip?: Buffer;
}

/** Compresses on libuv's thread pool (not the event loop): 14 MB takes about 150 ms. */
export async function encode(body: string | Buffer): Promise<Encoded> {
  const identity = typeof body === 'string' ? Buffer.from(body) : body;
  if (identity.length < MIN_GZIP_BYTES) return { identity };
  return { identity, gzip: await gzip(identity) };
}

/**
 * Whether an Accept-Encoding header accepts gzip: `gzip` (or `x-gzip`, or `*` when gzip is not
 * named) with a q-value above 0 (RFC 9110 12.5.3).
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star: boolean | undefined;
  for (const part of header.split(',')) {
    const [token = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const ok = Number.isFinite(weight) && weight > 0;
    if (token.trim() === 'gzip' || token.trim() === 'x-gzip') return ok;
    if (token.trim() === '*') star = ok;
  }
  return star === true;
}

/**
 * Writes `body` with `headers`, gzipped when the request accepts it and a gzipped form exists.
 * Every response says it varies by Accept-Encoding, so a cache keeps the forms apart. HEAD gets
 * the headers of the body GET would get (Node sends no body for HEAD).
 */
export function sendEncoded(req: http.IncomingMessage, res: http.ServerResponse, status: number, headers: Record<string, string>, body: Encoded): void {
  const zipped = body.gzip !== undefined && acceptsGzip(req.headers['accept-encoding']) ? body.gzip : undefined;
  const bytes = zipped ?? body.identity;
  res.writeHead(status, {
    ...headers,
    vary: 'Accept-Encoding',
    ...(zipped ? { 'content-encoding': 'gzip' } : {}),
    'content-length': String(bytes.length),
  });
  res.end(bytes);
}
