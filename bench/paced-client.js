#!/usr/bin/env node
// A paced UDP load for bench/scale-serve.js: sends QPS queries per second for SECONDS from one
// socket, cycling through NAMES (one per line: "name type"), matches replies by ID, and prints
// one JSON line: sent, answered, lost (no reply within 2 s of the end), latency percentiles, and
// the worst one-second window. Used to see what a reload costs a client that never stops asking.
// Usage: node bench/paced-client.js PORT QPS SECONDS NAMES_FILE
import dgram from 'node:dgram';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { encodeQuery } from './lib.js';

const [portArg, qpsArg, secondsArg, namesFile] = process.argv.slice(2);
const port = Number(portArg);
const qps = Number(qpsArg);
const seconds = Number(secondsArg);
const queries = fs
  .readFileSync(namesFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [name, type] = line.trim().split(/\s+/);
    return encodeQuery(name, type ?? 'A');
  });

const sock = dgram.createSocket('udp4');
const sentAt = new Float64Array(65536).fill(-1);
const latencies = [];
let sent = 0;
let answered = 0;
const perSecond = new Map();
sock.on('message', (m) => {
  const id = m.readUInt16BE(0);
  const t0 = sentAt[id];
  if (t0 < 0) return;
  sentAt[id] = -1;
  answered++;
  latencies.push(performance.now() - t0);
});
const start = performance.now();
const total = Math.round(qps * seconds);
await new Promise((resolve) => {
  const tick = () => {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * qps));
    while (sent < due) {
      const id = sent & 0xffff;
      if (sentAt[id] >= 0) {
        // Never answered and its ID comes round again: lost.
        sentAt[id] = -1;
      }
      const q = queries[sent % queries.length];
      q.writeUInt16BE(id, 0);
      sentAt[id] = performance.now();
      sock.send(q, port, '127.0.0.1');
      const sec = Math.floor((sentAt[id] - start) / 1000);
      perSecond.set(sec, (perSecond.get(sec) ?? 0) + 1);
      sent++;
    }
    if (sent >= total) resolve();
    else setTimeout(tick, 1);
  };
  tick();
});
await new Promise((r) => setTimeout(r, 2000));
sock.close();
latencies.sort((a, b) => a - b);
const pct = (p) => (latencies.length ? Number(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(3)) : null);
console.log(
  JSON.stringify({
    sent,
    answered,
    lost: sent - answered,
    p50ms: pct(50),
    p99ms: pct(99),
    p999ms: pct(99.9),
    maxms: latencies.length ? Number(latencies[latencies.length - 1].toFixed(3)) : null,
    seconds: Number(((performance.now() - start) / 1000 - 2).toFixed(1)),
  }),
);
