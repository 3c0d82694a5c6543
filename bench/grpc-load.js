// A gRPC load client for bench/transports.js: CoreDNS's coredns.dns.DnsService/Query over a few
// HTTP/2 connections (grpc-js channels over TLS) with many calls outstanding, as dnsperf -m dot
// keeps queries in flight. dnsperf has no gRPC mode.
//
// Prints dnsperf's summary lines (Queries sent/completed/lost, Queries per second, Average
// Latency, Response codes), so the bench reads both with one parser.
//
// node bench/grpc-load.js --port P --ca PEM --seconds S --connections C --outstanding N --queries FILE
//   --ca: the server's (self-signed) certificate, which grpc-js must trust to connect.
import { readFileSync } from 'node:fs';
import grpc from '@grpc/grpc-js';

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
if (!port || !queriesFile || !ca) {
  console.error('usage: node bench/grpc-load.js --port P --ca PEM --queries FILE [--seconds S --connections C --outstanding N]');
  process.exit(2);
}

const TYPES = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, ANY: 255 };
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** A DnsPacket message: field 1 (msg, bytes), the DNS message as its payload. */
function dnsPacket(msg) {
  const len = [];
  for (let n = msg.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), msg]);
}

/** The DNS message of a DnsPacket (field 1), or undefined. */
function dnsMessage(buf) {
  if (buf.length < 2 || buf[0] !== 0x0a) return undefined;
  let len = 0;
  let shift = 0;
  let i = 1;
  for (; i < buf.length; i++) {
    len |= (buf[i] & 0x7f) << shift;
    shift += 7;
    if ((buf[i] & 0x80) === 0) break;
  }
  return buf.subarray(i + 1, i + 1 + len);
}

/** One query per line of the dnsperf file, each with its own id. */
const queries = readFileSync(queriesFile, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((line, n) => {
    const [name, type = 'A'] = line.split(/\s+/);
    const parts = [Buffer.from([(n >> 8) & 255, n & 255, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
    for (const label of name.replace(/\.$/, '').split('.')) parts.push(Buffer.from([label.length]), Buffer.from(label));
    parts.push(Buffer.from([0, 0, TYPES[type.toUpperCase()] ?? 1, 0, 1]));
    return dnsPacket(Buffer.concat(parts));
  });

// grpc-js shares one connection among channels with the same options: a channel option of its
// own for each makes them the separate connections dnsperf's clients are.
const clients = Array.from(
  { length: connections },
  (_, i) =>
    new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(readFileSync(ca), null, null, { checkServerIdentity: () => undefined }), {
      'grpc.ssl_target_name_override': 'bench.test',
      'grpc.max_concurrent_streams': outstanding,
      'bench.connection': i,
    }),
);

let sent = 0;
let completed = 0;
let lost = 0;
let latencyNs = 0n;
let next = 0;
let stop = false;
const rcodes = new Map();
const identity = (b) => b;

function one(client) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    sent++;
    client.makeUnaryRequest('/coredns.dns.DnsService/Query', identity, identity, queries[next++ % queries.length], (err, reply) => {
      const msg = err ? undefined : dnsMessage(reply);
      if (msg && msg.length >= 12) {
        completed++;
        latencyNs += process.hrtime.bigint() - started;
        const rcode = RCODES[msg[3] & 15] ?? `RCODE${msg[3] & 15}`;
        rcodes.set(rcode, (rcodes.get(rcode) ?? 0) + 1);
      } else lost++;
      resolve();
    });
  });
}

async function loop(client) {
  while (!stop) await one(client);
}

// Connected before the clock starts: the handshakes are not what is measured.
await Promise.all(clients.map((c) => new Promise((resolve, reject) => c.waitForReady(Date.now() + 10_000, (err) => (err ? reject(err) : resolve())))));
const t0 = process.hrtime.bigint();
setTimeout(() => {
  stop = true;
}, seconds * 1000);
const perConnection = Math.max(1, Math.floor(outstanding / connections));
await Promise.all(clients.flatMap((c) => Array.from({ length: perConnection }, () => loop(c))));
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
for (const c of clients) c.close();

const pct = (n) => ((100 * n) / Math.max(1, completed)).toFixed(2);
console.log(`gRPC load (node ${process.version} @grpc/grpc-js, ${connections} connections x ${perConnection} calls)

Statistics:

  Queries sent:         ${sent}
  Queries completed:    ${completed}
  Queries lost:         ${lost}

  Response codes:       ${[...rcodes].map(([k, v]) => `${k} ${v} (${pct(v)}%)`).join(', ')}
  Queries per second:   ${(completed / elapsed).toFixed(6)}

  Average Latency (s):  ${(Number(latencyNs) / 1e9 / Math.max(1, completed)).toFixed(6)}
`);
