// A gRPC load client for bench/transports.js: CoreDNS's coredns.dns.DnsService/Query over a few
// HTTP/2 connections (grpc-js channels over TLS) with many calls outstanding, as dnsperf -m dot
// keeps queries in flight. dnsperf has no gRPC mode.
//
// Prints dnsperf's summary lines (load-client.js).
//
// node bench/grpc-load.js --port P --ca PEM --seconds S --connections C --outstanding N --queries FILE
//   --ca: the server's (self-signed) certificate, which grpc-js must trust to connect.
import { readFileSync } from 'node:fs';
import grpc from '@grpc/grpc-js';
import { arg, drive, queryMessages } from './load-client.js';

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

/** Each query with its own id. */
const queries = queryMessages(queriesFile, (n) => n).map(dnsPacket);

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
const identity = (b) => b;

// Connected before the clock starts: the handshakes are not what is measured.
await Promise.all(clients.map((c) => new Promise((resolve, reject) => c.waitForReady(Date.now() + 10_000, (err) => (err ? reject(err) : resolve())))));
let next = 0;
const perConnection = Math.max(1, Math.floor(outstanding / connections));
await drive({
  targets: clients,
  perTarget: perConnection,
  seconds,
  title: `gRPC load (node ${process.version} @grpc/grpc-js, ${connections} connections x ${perConnection} calls)`,
  one: (client, done) =>
    client.makeUnaryRequest('/coredns.dns.DnsService/Query', identity, identity, queries[next++ % queries.length], (err, reply) =>
      done(err ? undefined : dnsMessage(reply)),
    ),
});
for (const c of clients) c.close();
