// A DNS over HTTPS load client for bench/transports.js: HTTP/2 GET /dns-query?dns= over a few
// connections with many streams outstanding, as dnsperf -m dot keeps queries in flight over TLS.
// dnsperf 2.10's own DoH mode cannot stand in: it keeps one query in flight per connection and
// loses the rest (DNS-OARC/dnsperf#272), which measures dnsperf, not the server.
//
// Prints dnsperf's summary lines (load-client.js).
//
// node bench/doh-load.js --port P --seconds S --connections C --outstanding N --queries FILE [--ca PEM]
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { arg, drive, queryMessages } from './load-client.js';

const port = Number(arg('--port'));
const seconds = Number(arg('--seconds', '10'));
const connections = Number(arg('--connections', '2'));
const outstanding = Number(arg('--outstanding', '150'));
const queriesFile = arg('--queries');
const ca = arg('--ca');
if (!port || !queriesFile) {
  console.error('usage: node bench/doh-load.js --port P --queries FILE [--seconds S --connections C --outstanding N --ca PEM]');
  process.exit(2);
}

/** Each query with id 0, as RFC 8484 asks, base64url for GET. */
const paths = queryMessages(queriesFile, () => 0).map((m) => `/dns-query?dns=${m.toString('base64url')}`);

const sessions = await Promise.all(
  Array.from(
    { length: connections },
    () =>
      new Promise((resolve, reject) => {
        const s = http2.connect(
          `https://127.0.0.1:${port}`,
          ca ? { ca: readFileSync(ca), servername: 'localhost', checkServerIdentity: () => undefined } : { rejectUnauthorized: false },
        );
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      }),
  ),
);

let next = 0;
const perConnection = Math.max(1, Math.floor(outstanding / connections));
await drive({
  targets: sessions,
  perTarget: perConnection,
  seconds,
  title: `DoH load (node ${process.version} http2, ${connections} connections x ${perConnection} streams)`,
  one: (session, done) => {
    const stream = session.request({ ':path': paths[next++ % paths.length] });
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => done(Buffer.concat(chunks)));
    stream.on('error', () => done(undefined));
    stream.end();
  },
});
for (const s of sessions) s.close();
