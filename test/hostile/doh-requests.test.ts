// Hostile DNS over HTTPS requests: oversized and malformed bodies and `dns=` values, headers past
// the limit, wrong content types, an UPDATE, and a client that never reads its replies. Each gets
// its HTTP error (or its connection closed) within a bound, and another client is answered after.
import { afterAll, beforeAll, expect, it } from 'vitest';
import tls from 'node:tls';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { DOH_MAX_DNS_PARAM, DOH_MAX_MESSAGE_BYTES } from '../../src/server/doh-request.js';
import { DOH_MAX_HEADER_BYTES } from '../../src/server/doh.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { getPath, h1Request, h2Connect, h2Request, post, type DohRequest, type DohTls } from '../server/doh-client.js';
import { openGet, PREFACE, settingsWindow } from '../server/doh-frames.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { buildQuery, encodeHeader, encodeQuestion, encodeRr, Opcode, T } from '../server/raw.js';

const kubernetesApi = 'kubernetes.default.svc.cluster.local';
const writeTimeoutMs = 500;

describeNeeding(['openssl'], 'hostile DoH requests', () => {
  let c: TestCerts;
  let clientTls: DohTls;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    clientTls = { ca: c.read(c.ca), servername: dotHostname };
    app = await buildApp({
      corefileText: `https://cluster.local:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  kubernetes cluster.local\n}\n`,
      manifests: [path.join(repoRoot, 'examples/manifests')],
      logger: pino({ level: process.env.DOH_DEBUG ? 'debug' : 'silent' }),
      tcp: { writeTimeoutMs, idleTimeoutMs: 1500 },
    });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  const query = (): Buffer => buildQuery({ id: 0, name: kubernetesApi, type: T.A });

  /** Another client is answered over a fresh connection of each protocol. */
  async function othersAnswered(): Promise<void> {
    const session = await h2Connect(port, clientTls);
    try {
      expect((await h2Request(session, post(query()))).status).toBe(200);
    } finally {
      session.destroy();
    }
    expect((await h1Request(port, { path: getPath(query()) }, clientTls)).status).toBe(200);
  }

  /** The status of one request over HTTP/2 and over HTTP/1.1, or 'closed' when the server dropped it. */
  async function statuses(r: DohRequest): Promise<[number | 'closed', number | 'closed']> {
    const session = await h2Connect(port, clientTls);
    try {
      const h2 = await h2Request(session, r).then(
        (res) => res.status,
        () => 'closed' as const,
      );
      const h1 = await h1Request(port, r, clientTls).then(
        (res) => res.status,
        () => 'closed' as const,
      );
      return [h2, h1];
    } finally {
      session.destroy();
    }
  }

  it('a POST body over 65,535 bytes is a bad request, declared or not', async () => {
    const big = Buffer.alloc(DOH_MAX_MESSAGE_BYTES + 1, 0x41);
    expect(await statuses(post(big))).toEqual([400, 400]);
    // Sent without a length (HTTP/1.1 chunked, HTTP/2 DATA frames), cut off at the limit.
    const session = await h2Connect(port, clientTls);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message' });
      stream.on('error', () => {});
      const status = new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
      for (let i = 0; i < 8; i++) stream.write(Buffer.alloc(16 * 1024, 0x41));
      stream.end();
      expect(await status).toBe(400);
    } finally {
      session.destroy();
    }
    await othersAnswered();
  });

  it('malformed and oversized dns= values are bad requests', async () => {
    const values: [string, string][] = [
      ['empty', ''],
      ['one character (no whole byte)', 'A'],
      ['percent signs', '%%%%'],
      ['spaces', 'AAAA%20AAAA'],
      ['a response', Buffer.concat([encodeHeader({ id: 0, qr: true, qdcount: 1 }), encodeQuestion(kubernetesApi, T.A)]).toString('base64url')],
      [
        'two questions',
        Buffer.concat([encodeHeader({ id: 0, qdcount: 2 }), encodeQuestion(kubernetesApi, T.A), encodeQuestion(kubernetesApi, T.A)]).toString('base64url'),
      ],
      ['a truncated question', query().subarray(0, 20).toString('base64url')],
      ['trailing bytes', Buffer.concat([query(), Buffer.from([1, 2, 3])]).toString('base64url')],
    ];
    for (const [what, v] of values) expect(await statuses({ path: `/dns-query?dns=${v}` }), what).toEqual([400, 400]);
    // Past the longest message: HTTP/1.1 reads it and refuses it; HTTP/2's header decoder (nghttp2)
    // takes no header field over 64 KiB and closes the connection (COMPRESSION_ERROR) first.
    const [h2, h1] = await statuses({ path: `/dns-query?dns=${'A'.repeat(DOH_MAX_DNS_PARAM + 1)}` });
    expect([400, 'closed']).toContain(h2);
    expect(h1).toBe(400);
    await othersAnswered();
  });

  it('headers past the limit are refused before any DNS work', async () => {
    const [h2, h1] = await statuses({ path: `/dns-query?dns=${'A'.repeat(DOH_MAX_HEADER_BYTES + 1024)}` });
    // HTTP/2 resets the stream (or answers 431); HTTP/1.1 answers 431.
    expect([431, 'closed']).toContain(h2);
    expect(h1).toBe(431);
    await othersAnswered();
  });

  it('POSTs of another content type, or none, are 415', async () => {
    for (const type of ['text/plain', 'application/dns-json', 'application/octet-stream', 'application/dns-messagex']) {
      expect(await statuses(post(query(), type)), type).toEqual([415, 415]);
    }
    const { headers: _, ...bare } = post(query());
    expect(await statuses(bare)).toEqual([415, 415]);
    await othersAnswered();
  });

  it('an UPDATE carrying records is refused with 400 (the request filter), over both protocols', async () => {
    const update = Buffer.concat([
      encodeHeader({ id: 0, opcode: Opcode.UPDATE, qdcount: 1, nscount: 1 }),
      encodeQuestion('cluster.local', T.SOA),
      encodeRr('evil.cluster.local', T.A, 1, 300, Buffer.from([6, 6, 6, 6])),
    ]);
    expect(await statuses(post(update))).toEqual([400, 400]);
    expect(await statuses({ path: getPath(update) })).toEqual([400, 400]);
    await othersAnswered();
  });

  it('an HTTP/1.1 client that pipelines requests and never reads its replies is closed; others are answered', async () => {
    const greedy = tls.connect({ host: '127.0.0.1', port, ...clientTls, ALPNProtocols: ['http/1.1'] });
    greedy.on('error', () => {});
    await new Promise<void>((resolve) => greedy.once('secureConnect', () => resolve()));
    const closed = closing(greedy, 'the HTTP/1.1 client that never reads');
    // Never read: paused, with no data listener. Enough requests that their replies overflow the
    // socket buffers of both ends (bounded). Node's HTTP/1.1 parser stops reading a connection
    // whose replies back up, and closes it when the client keeps sending.
    greedy.pause();
    const request = Buffer.from(`GET ${getPath(query())} HTTP/1.1\r\nhost: ${dotHostname}\r\n\r\n`, 'latin1');
    const batch = Buffer.concat(Array.from({ length: 1000 }, () => request));
    for (let i = 0; i < 60 && !greedy.destroyed; i++) {
      greedy.write(batch);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await othersAnswered();
    await closed;
    await othersAnswered();
  });

  it('an HTTP/2 client that opens streams and takes no reply data is cut off at the write deadline; others are answered', async () => {
    const stingy = tls.connect({ host: '127.0.0.1', port, ...clientTls, ALPNProtocols: ['h2'] });
    stingy.on('error', () => {});
    await new Promise<void>((resolve) => stingy.once('secureConnect', () => resolve()));
    const closed = closing(stingy, 'the HTTP/2 client that takes no data');
    // It reads frames (so the socket is not what blocks) but grants a window of 0: every reply
    // stays in the server until the write deadline cancels its stream, and the connection,
    // idle then, is closed.
    stingy.resume();
    const frames = [PREFACE, settingsWindow(0)];
    for (let i = 0; i < 50; i++) frames.push(openGet(2 * i + 1, getPath(query())));
    const opened = Date.now();
    stingy.write(Buffer.concat(frames));
    await othersAnswered();
    await closed;
    expect(Date.now() - opened).toBeGreaterThanOrEqual(writeTimeoutMs - 50);
    await othersAnswered();
  });
});

/** A connection's close, as a promise that gives up after 15 s. */
function closing(s: tls.TLSSocket, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const give = setTimeout(() => reject(new Error(`${what} was not closed within 15 s`)), 15_000);
    s.once('close', () => {
      clearTimeout(give);
      resolve();
    });
  });
}
