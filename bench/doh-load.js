// A DNS over HTTPS load client for bench/transports.js: HTTP/2 GET /dns-query?dns= over a few
// connections with many streams outstanding, as dnsperf -m dot keeps queries in flight over TLS.
// dnsperf 2.10's own DoH mode cannot stand in: it keeps one query in flight per connection and
// loses the rest (DNS-OARC/dnsperf#272), which measures dnsperf, not the server.
//
// Prints dnsperf's summary lines (Queries sent/completed/lost, Queries per second, Average
// Latency, Response codes), so the bench reads both with one parser.
//
// node bench/doh-load.js --port P --seconds S --connections C --outstanding N --queries FILE [--ca PEM]
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
}

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

const TYPES = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, ANY: 255 };
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** One query per line of the dnsperf file, id 0 as RFC 8484 asks, base64url for GET. */
const paths = readFileSync(queriesFile, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((line) => {
    const [name, type = 'A'] = line.split(/\s+/);
    const parts = [Buffer.from([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
    for (const label of name.replace(/\.$/, '').split('.')) parts.push(Buffer.from([label.length]), Buffer.from(label));
    parts.push(Buffer.from([0, 0, TYPES[type.toUpperCase()] ?? 1, 0, 1]));
    return `/dns-query?dns=${Buffer.concat(parts).toString('base64url')}`;
  });

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

let sent = 0;
let completed = 0;
let lost = 0;
let latencyNs = 0n;
let next = 0;
let stop = false;
const rcodes = new Map();

function one(session) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    sent++;
    const stream = session.request({ ':path': paths[next++ % paths.length] });
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length >= 12) {
        completed++;
        latencyNs += process.hrtime.bigint() - started;
        const rcode = RCODES[body[3] & 15] ?? `RCODE${body[3] & 15}`;
        rcodes.set(rcode, (rcodes.get(rcode) ?? 0) + 1);
      } else lost++;
      resolve();
    });
    stream.on('error', () => {
      lost++;
      resolve();
    });
    stream.end();
  });
}

async function loop(session) {
  while (!stop) await one(session);
}

const t0 = process.hrtime.bigint();
setTimeout(() => {
  stop = true;
}, seconds * 1000);
const perConnection = Math.max(1, Math.floor(outstanding / connections));
await Promise.all(sessions.flatMap((s) => Array.from({ length: perConnection }, () => loop(s))));
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
for (const s of sessions) s.close();

const pct = (n) => ((100 * n) / Math.max(1, completed)).toFixed(2);
console.log(`DoH load (node ${process.version} http2, ${connections} connections x ${perConnection} streams)

Statistics:

  Queries sent:         ${sent}
  Queries completed:    ${completed}
  Queries lost:         ${lost}

  Response codes:       ${[...rcodes].map(([k, v]) => `${k} ${v} (${pct(v)}%)`).join(', ')}
  Queries per second:   ${(completed / elapsed).toFixed(6)}

  Average Latency (s):  ${(Number(latencyNs) / 1e9 / Math.max(1, completed)).toFixed(6)}
`);
