// Baseline for bench/run.js: the least a Node UDP DNS responder can do. It answers every query
// with one fixed A record (10.96.0.1, TTL 30), copying the query's ID, RD bit and question, so the
// cost measured is Node's UDP stack (recv, one small Buffer, send) and nothing else.
//
// Usage: node bench/bare-responder.js [--port N] [--address 127.0.0.1] [--hold]
// --hold sends replies as the server's UDP listener does (src/server/udp.ts): held while the
// event loop reads the datagrams already waiting, then sent back to back (setImmediate). Without
// it every reply is sent at once: the floor of a naive responder. With it: the floor of one that
// batches its sends the same way, so a ratio against it shows the server's own work alone.
// Prints one line "bare-responder ready {"address":...,"port":N}" on stdout once bound; port 0
// (the default) picks a free port. Stops on SIGTERM/SIGINT.
import dgram from 'node:dgram';

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const address = arg('--address', '127.0.0.1');
const port = Number(arg('--port', '0'));
const hold = process.argv.includes('--hold');

// The answer section: a pointer to the question name (offset 12), type A, class IN, TTL 30,
// RDLENGTH 4, 10.96.0.1.
const ANSWER = Buffer.from([0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x1e, 0x00, 0x04, 10, 96, 0, 1]);

/** Offset just past the question (name + QTYPE + QCLASS), or -1 when it does not parse. */
function questionEnd(msg) {
  let off = 12;
  // At most 128 labels fit in a 255-octet name: the loop is bounded.
  for (let labels = 0; labels < 128 && off < msg.length; labels++) {
    const len = msg[off];
    if (len === 0) return off + 5 <= msg.length ? off + 5 : -1;
    if (len > 63) return -1; // compression is not valid in a query's question here
    off += len + 1;
  }
  return -1;
}

// Same as the server's socket: replies go to an IP literal, resolved synchronously.
function literalLookup(addr, _opts, cb) {
  cb(null, addr, 4);
}

const socket = dgram.createSocket({ type: 'udp4', lookup: literalLookup });
socket.on('message', (msg, rinfo) => {
  if (msg.length < 17 || (msg[2] & 0x80) !== 0) return; // too short, or a response
  const qend = questionEnd(msg);
  if (qend < 0) return;
  const out = Buffer.allocUnsafe(qend + ANSWER.length);
  msg.copy(out, 0, 0, qend);
  out[2] = 0x84 | (msg[2] & 0x01); // QR, AA, RD copied; opcode QUERY
  out[3] = 0x00; // RA=0, RCODE NOERROR
  out.writeUInt16BE(1, 4); // QDCOUNT
  out.writeUInt16BE(1, 6); // ANCOUNT
  out.writeUInt32BE(0, 8); // NSCOUNT, ARCOUNT
  ANSWER.copy(out, qend);
  if (!hold) return socket.send(out, rinfo.port, rinfo.address);
  if (held.length === 0) setImmediate(flush);
  held.push(out);
  heldTo.push(rinfo);
});
const held = [];
const heldTo = [];
function flush() {
  for (let i = 0; i < held.length; i++) socket.send(held[i], heldTo[i].port, heldTo[i].address);
  held.length = 0;
  heldTo.length = 0;
}
socket.on('error', (err) => {
  process.stderr.write(`bare-responder: ${err.message}\n`);
  process.exit(1);
});
socket.bind(port, address, () => {
  const a = socket.address();
  process.stdout.write(`bare-responder ready ${JSON.stringify({ address: a.address, port: a.port })}\n`);
});

const stop = () => socket.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
