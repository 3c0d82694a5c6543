// HTTP/2 rapid reset (CVE-2023-44487) against DNS over HTTPS: a client opens streams and cancels
// each at once, as fast as it can, writing the frames itself (a well-behaved client library
// would not). Its connection is closed after a bounded number of them, the queries the server
// computed for it stay far below the streams it opened, and another client is answered meanwhile.
import { afterAll, beforeAll, expect, it } from 'vitest';
import tls from 'node:tls';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { DOH_MAX_RESETS_PER_SECOND } from '../../src/server/doh.js';
import { repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { getPath, h2Connect, h2Request, post, type DohTls } from '../server/doh-client.js';
import { frame, openAndCancel, openGet, PREFACE } from '../server/doh-frames.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { buildQuery, T } from '../server/raw.js';

/** Streams the flooding client opens at most. */
const FLOOD = 50_000;
/** Streams written per burst, between which the client lets the server's answer in. */
const BURST = 500;
const kubernetesApi = 'kubernetes.default.svc.cluster.local';

/** Queries the server has computed, from its metrics. */
async function queries(app: App): Promise<number> {
  const { text } = await app.scrapeMetrics();
  let n = 0;
  for (const m of text.matchAll(/^coredns_dns_requests_total\{[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

describeNeeding(['openssl'], 'DoH rapid reset', () => {
  let c: TestCerts;
  let clientTls: DohTls;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    clientTls = { ca: c.read(c.ca), servername: dotHostname };
    app = await buildApp({
      corefileText: `https://cluster.local:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  prometheus 127.0.0.1:0\n  kubernetes cluster.local\n}\n`,
      manifests: [path.join(repoRoot, 'examples/manifests')],
      logger: pino({ level: 'silent' }),
    });
    port = (await app.listen())[0]!.port;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  for (const [what, method, target] of [
    ['GET (answered at once, then reset)', 'GET', getPath(buildQuery({ id: 0, name: kubernetesApi, type: T.A }))],
    ['POST (reset before its body)', 'POST', '/dns-query'],
  ] as const) {
    it(`streams of ${what} opened and cancelled in a flood: the connection is closed, another client answered`, async () => {
      const before = await queries(app);
      const other = await h2Connect(port, clientTls);
      const flood = tls.connect({ host: '127.0.0.1', port, ...clientTls, ALPNProtocols: ['h2'] });
      flood.on('error', () => {});
      // It reads what the server sends (SETTINGS, answers, GOAWAY) and ignores it.
      flood.resume();
      const closed = new Promise<void>((resolve) => flood.once('close', () => resolve()));
      await new Promise<void>((resolve) => flood.once('secureConnect', () => resolve()));
      let opened = 0;
      try {
        // The preface, SETTINGS, and one stream left alone: the frames are well formed, so what
        // the server does with the rest is its answer to the resets.
        flood.write(Buffer.concat([PREFACE, frame(0x4, 0, 0, Buffer.alloc(0)), openGet(1, getPath(buildQuery({ id: 0, name: kubernetesApi, type: T.A })))]));
        opened = 1;
        while (opened < FLOOD && !flood.destroyed && !flood.writableEnded) {
          const burst: Buffer[] = [];
          for (let i = 0; i < BURST; i++, opened++) burst.push(openAndCancel(2 * opened + 1, method, target));
          flood.write(Buffer.concat(burst));
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        await Promise.race([
          closed,
          new Promise((_, reject) => setTimeout(() => reject(new Error('the flooding connection was not closed within 10 s')), 10_000)),
        ]);
        expect((await h2Request(other, post(buildQuery({ id: 0, name: kubernetesApi, type: T.A })))).status).toBe(200);
        const computed = (await queries(app)) - before - 1;
        // The stream left alone was answered.
        expect(computed).toBeGreaterThanOrEqual(1);
        // Closed well before the flood ran out, having cost the server a bounded number of queries.
        expect(opened).toBeLessThan(FLOOD);
        expect(computed).toBeLessThanOrEqual(2 * DOH_MAX_RESETS_PER_SECOND + 1);
        console.log(`rapid reset, ${what}: ${opened} streams written before the close, ${computed} queries computed`);
      } finally {
        flood.destroy();
        other.destroy();
      }
    });
  }
});
