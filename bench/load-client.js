// What the Node load clients of bench/transports.js share (doh-load.js, grpc-load.js): their
// options, the queries of a dnsperf query file as DNS messages, the loop that keeps N queries
// outstanding for S seconds, and dnsperf's summary lines, so the bench reads every client with
// one parser.
import { readFileSync } from 'node:fs';

export function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
}

const TYPES = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, ANY: 255 };
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** One DNS query message per line of a dnsperf query file ("name [type]"); `id(n)` is the n-th's message id. */
export function queryMessages(file, id) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((line, n) => {
      const [name, type = 'A'] = line.split(/\s+/);
      const i = id(n);
      const parts = [Buffer.from([(i >> 8) & 255, i & 255, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0])];
      for (const label of name.replace(/\.$/, '').split('.')) parts.push(Buffer.from([label.length]), Buffer.from(label));
      parts.push(Buffer.from([0, 0, TYPES[type.toUpperCase()] ?? 1, 0, 1]));
      return Buffer.concat(parts);
    });
}

/**
 * Runs `one(target, done)` on each target, `perTarget` at a time, for `seconds`: `one` sends a
 * query and calls `done(reply)` with the DNS reply (undefined: lost). Prints dnsperf's summary
 * lines under `title`.
 */
export async function drive({ targets, perTarget, seconds, title, one }) {
  let sent = 0;
  let completed = 0;
  let lost = 0;
  let latencyNs = 0n;
  let stop = false;
  const rcodes = new Map();
  const query = (target) =>
    new Promise((resolve) => {
      const started = process.hrtime.bigint();
      sent++;
      one(target, (reply) => {
        if (reply && reply.length >= 12) {
          completed++;
          latencyNs += process.hrtime.bigint() - started;
          const rcode = RCODES[reply[3] & 15] ?? `RCODE${reply[3] & 15}`;
          rcodes.set(rcode, (rcodes.get(rcode) ?? 0) + 1);
        } else lost++;
        resolve();
      });
    });
  const loop = async (target) => {
    while (!stop) await query(target);
  };
  const t0 = process.hrtime.bigint();
  setTimeout(() => {
    stop = true;
  }, seconds * 1000);
  await Promise.all(targets.flatMap((t) => Array.from({ length: perTarget }, () => loop(t))));
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  const pct = (n) => ((100 * n) / Math.max(1, completed)).toFixed(2);
  console.log(`${title}

Statistics:

  Queries sent:         ${sent}
  Queries completed:    ${completed}
  Queries lost:         ${lost}

  Response codes:       ${[...rcodes].map(([k, v]) => `${k} ${v} (${pct(v)}%)`).join(', ')}
  Queries per second:   ${(completed / elapsed).toFixed(6)}

  Average Latency (s):  ${(Number(latencyNs) / 1e9 / Math.max(1, completed)).toFixed(6)}
`);
}
