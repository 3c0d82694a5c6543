// Shared pieces of the benchmarks (bench/run.js, bench/scale-serve.js): child processes pinned
// to a CPU and stopped by PID, dnsperf runs and their parsing, CPU time from /proc.
//
// On a machine with 2+ CPUs and taskset (util-linux), servers under test are pinned to CPU 0 and
// load generators to CPU 1, so the load generator does not steal the server's core mid-run.
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.dirname(BENCH);
export const HOST = '127.0.0.1';
export const SERVER_CPU = '0';
export const LOAD_CPU = '1';
const READY_TIMEOUT_MS = 120000;
const STOP_GRACE_MS = 3000;

export const PIN = !process.argv.includes('--no-pin') && os.availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;

// Chosen on a 2-core box where dnsperf shares the machine with the server under test (each pinned
// to its own CPU when possible): with these the bare responder is at its plateau, ~1 CPU busy
// (more clients or threads did not raise its qps, only latency and noise). Outstanding stays
// below ~190: a larger first burst overflows the default 208 KiB socket receive buffer
// (rmem_default) before Node reads it, and those queries count as lost.
export const DNSPERF = { clients: 2, threads: 1, outstanding: 150, qpsCap: 200000 };

export function option(name, fallback, min, max) {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`${name}: expected a whole number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
}

/** [command, args] that runs cmd pinned to cpu when pinning is on (taskset execs: same PID). */
export function pinned(cpu, cmd, args) {
  return PIN ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
}

export function tool(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.error || r.status !== 0 ? null : r.stdout.trim();
}

export function checkDnsperf() {
  const r = spawnSync('dnsperf', ['-h'], { encoding: 'utf8' });
  if (r.error) {
    console.error('bench: dnsperf is not installed (or not on PATH).');
    console.error('Install it with:  apt-get install -y dnsperf   (Debian/Ubuntu package "dnsperf"; run apt-get update first)');
    process.exit(1);
  }
}

export const children = new Set();
/** Set by SIGINT/SIGTERM: no new load run starts after it. */
let interrupted = false;
/** The load generator in progress, killed if the script is interrupted. */
let loadGenerator = null;

/**
 * Starts `node ARGS` pinned to the server CPU, resolves with { child, port, tail, startedAt }
 * once a stdout line satisfies readyPort (which returns the port, or null for any other line).
 * Keeps draining stdout/stderr afterwards so a logging server never blocks on a full pipe.
 */
export function startNode(label, args, readyPort, opts = {}) {
  const [cmd, argv] = pinned(SERVER_CPU, process.execPath, args);
  const startedAt = performance.now();
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  children.add(child);
  const tail = [];
  const remember = (line) => {
    tail.push(line);
    if (tail.length > 20) tail.shift();
  };
  child.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => chunk.split('\n').filter(Boolean).forEach(remember));
  return new Promise((resolve, reject) => {
    let ready = false;
    let partial = '';
    const timer = setTimeout(() => {
      if (!ready) reject(new Error(`${label} did not get ready within ${READY_TIMEOUT_MS / 1000} s; last output:\n${tail.join('\n')}`));
    }, READY_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > 65536) partial = '';
      for (const line of lines) {
        remember(line);
        if (ready) continue;
        const port = readyPort(line);
        if (port) {
          ready = true;
          clearTimeout(timer);
          resolve({ label, child, port, tail, startedAt, readyAt: performance.now() });
        }
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${label} could not start: ${err.message}`));
    });
    void child.exited.then(({ code, signal }) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new Error(`${label} exited before it was ready (code ${code}, signal ${signal}); last output:\n${tail.join('\n')}`));
    });
  });
}

const QTYPES = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, TXT: 16, AAAA: 28, SRV: 33 };

/** A standard query (RD set, one question of class IN) for `name` and type `type` (a name or number). */
export function encodeQuery(name, type = 'A', id = 0) {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  const q = Buffer.alloc(12 + labels.reduce((n, l) => n + l.length + 1, 0) + 5);
  q.writeUInt16BE(id, 0);
  q.writeUInt16BE(0x0100, 2);
  q.writeUInt16BE(1, 4);
  let off = 12;
  for (const l of labels) {
    q[off++] = l.length;
    off += q.write(l, off, 'latin1');
  }
  q[off++] = 0;
  q.writeUInt16BE(typeof type === 'number' ? type : (QTYPES[type] ?? 1), off);
  q.writeUInt16BE(1, off + 2);
  return q;
}

/** A port free on 127.0.0.1 for both UDP and TCP at the time of the call. */
export async function freePort() {
  const net = await import('node:net');
  const dgram = await import('node:dgram');
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(0, HOST, () => {
        const p = srv.address().port;
        srv.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise((resolve) => {
      const sock = dgram.createSocket('udp4');
      sock.once('error', () => resolve(false));
      sock.bind(port, HOST, () => sock.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no free port on 127.0.0.1 for both UDP and TCP');
}

export function bareReady(line) {
  const m = /^bare-responder ready (\{.*\})$/.exec(line.trim());
  return m ? JSON.parse(m[1]).port : null;
}

export function serverReady(line) {
  if (!line.includes('clusterdns ready')) return null;
  try {
    const entry = JSON.parse(line);
    const l = (entry.listeners ?? []).find((x) => x.address === HOST) ?? entry.listeners?.[0];
    return l?.port ?? null;
  } catch {
    return null;
  }
}

/** SIGTERM, then SIGKILL after STOP_GRACE_MS; by PID, one child at a time. */
export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killed = await Promise.race([child.exited.then(() => false), new Promise((r) => setTimeout(() => r(true), STOP_GRACE_MS))]);
  if (killed && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await Promise.race([child.exited, new Promise((r) => setTimeout(r, STOP_GRACE_MS))]);
  }
}

/** utime + stime of PID and its descendants (--workers), in clock ticks (fields 14 and 15 of /proc/PID/stat). */
export function cpuTicks(pid) {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: split after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(rest[11]) + Number(rest[12]);
    } catch {
      /* exited meanwhile */
    }
  }
  return total;
}

/** PIDs of a process and its descendants. */
export function processTree(pid) {
  const out = [pid];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      for (const k of kids ? kids.split(' ') : []) out.push(...processTree(Number(k)));
    }
  } catch {
    /* exited meanwhile */
  }
  return out;
}

/** Peak and current RSS of PID in bytes (VmHWM, VmRSS of /proc/PID/status). */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

/** RSS of a process and its descendants (a primary and its workers): summed now and peak, and each one's peak. */
export function treeRss(pid) {
  let peak = 0;
  let now = 0;
  const each = [];
  for (const p of processTree(pid)) {
    try {
      const r = rssOf(p);
      peak += r.peak;
      now += r.now;
      each.push(r.peak);
    } catch {
      /* exited */
    }
  }
  return { peak, now, each };
}

/** One A query over UDP; resolves with the whole reply, or null after timeoutMs. */
export function udpReply(port, name, timeoutMs = 1000) {
  const q = encodeQuery(name, 'A', 0x4242);
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      resolve(null);
    }, timeoutMs);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m);
    });
    s.send(q, port, HOST);
  });
}

/** One A query over UDP; resolves with the reply's rcode and answer count, or null after timeoutMs. */
export async function udpAsk(port, name, timeoutMs = 1000) {
  const m = await udpReply(port, name, timeoutMs);
  return m && { rcode: m[3] & 15, answers: m.readUInt16BE(6) };
}

export function dnsperfArgs(port, seconds, queries) {
  return [
    '-s',
    HOST,
    '-p',
    String(port),
    '-d',
    queries,
    '-l',
    String(seconds),
    '-c',
    String(DNSPERF.clients),
    '-T',
    String(DNSPERF.threads),
    '-Q',
    String(DNSPERF.qpsCap),
    '-q',
    String(DNSPERF.outstanding),
  ];
}

/** Runs a load generator pinned to the load CPU; resolves with its output. Bounded by hardSeconds. */
export function runLoad(cmd, args, hardSeconds) {
  return new Promise((resolve, reject) => {
    if (interrupted) return reject(new Error('interrupted'));
    const [c, argv] = pinned(LOAD_CPU, cmd, args);
    const p = spawn(c, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    loadGenerator = p;
    let out = '';
    const keep = (chunk) => {
      // Timeout lines can be many; the summary is at the end, so keep the head and the tail.
      out += chunk;
      if (out.length > 200000) out = out.slice(0, 2000) + out.slice(-100000);
    };
    p.stdout.setEncoding('utf8');
    p.stderr.setEncoding('utf8');
    p.stdout.on('data', keep);
    p.stderr.on('data', keep);
    const hard = setTimeout(() => p.kill('SIGKILL'), hardSeconds * 1000);
    p.once('error', (err) => {
      clearTimeout(hard);
      reject(err);
    });
    p.once('close', (code, signal) => {
      clearTimeout(hard);
      loadGenerator = null;
      if (code !== 0) return reject(new Error(`${cmd} exited with code ${code} signal ${signal}:\n${out.slice(-3000)}`));
      resolve(out);
    });
  });
}

/** dnsperf stops itself after -l seconds plus its query timeout (5 s); +20 s is the backstop. */
export function runDnsperf(port, seconds, queries) {
  return runLoad('dnsperf', dnsperfArgs(port, seconds, queries), seconds + 20);
}

export function parseDnsperf(output) {
  const num = (re) => {
    const m = re.exec(output);
    return m ? Number(m[1]) : NaN;
  };
  const r = {
    sent: num(/Queries sent:\s+(\d+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    qps: num(/Queries per second:\s+([\d.]+)/),
    latencyMs: num(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
    rcodes: (/Response codes:\s+(.*)/.exec(output)?.[1] ?? '').trim(),
    version: /Version\s+(\S+)/.exec(output)?.[1] ?? null,
  };
  if (!Number.isFinite(r.completed) || !Number.isFinite(r.qps)) throw new Error(`could not parse dnsperf output:\n${output.slice(-3000)}`);
  if (r.completed === 0) throw new Error(`no query was answered:\n${output.slice(-3000)}`);
  return r;
}

/** One dnsperf run against target with the CPU time the target spent per completed query. */
export async function measure(target, seconds, queries, clkTck) {
  const before = cpuTicks(target.child.pid);
  const output = await runDnsperf(target.port, seconds, queries);
  const after = cpuTicks(target.child.pid);
  const r = parseDnsperf(output);
  r.cpuUsPerQuery = (((after - before) / clkTck) * 1e6) / r.completed;
  return r;
}

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export function fmt(n, digits) {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

export function clockTicks() {
  return Number(tool('getconf', ['CLK_TCK']) ?? 100) || 100;
}

export function machine() {
  const cpus = os.cpus();
  return {
    nproc: tool('nproc', []) ?? String(cpus.length),
    cpu: cpus[0]?.model?.trim() ?? 'unknown CPU',
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  };
}

/** Stops every child (and the load generator) on SIGINT/SIGTERM, then exits 130. */
export function stopChildrenOnSignals() {
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`\nbench: ${sig}, stopping the servers`);
      if (loadGenerator && loadGenerator.exitCode === null) loadGenerator.kill('SIGKILL');
      void Promise.all([...children].map(stop)).then(() => {
        if (loadGenerator && loadGenerator.exitCode === null) loadGenerator.kill('SIGKILL');
        process.exit(130);
      });
    });
  }
}

/** Distinct names of the miss-path scenario (bench/scale-serve.js, bench/miss-path.js). */
export const MISS_NAMES = 50000;

/** Deterministic shuffle (mulberry32), so every run asks the same sequence. */
export function shuffle(xs, seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

/**
 * The query files in `dir` from a gen-list names file: hot.txt (40 hits) and miss.txt
 * (MISS_NAMES names, shuffled the same way every run).
 */
export function writeQueryFiles(dir, names) {
  const hits = names.hits;
  const hot = path.join(dir, 'hot.txt');
  writeFileSync(
    hot,
    hits
      .slice(0, 40)
      .map((h) => `${h}.svc.cluster.local A`)
      .join('\n') + '\n',
  );
  // A fifth A hits, a fifth AAAA (NODATA: the services are IPv4 only), three fifths the NXDOMAINs
  // a pod's ndots:5 search walk sends before the name itself.
  const fifth = Math.floor(MISS_NAMES / 5);
  const lines = [];
  for (let i = 0; i < fifth; i++) lines.push(`${hits[i % hits.length]}.svc.cluster.local A`);
  for (let i = 0; i < fifth; i++) lines.push(`${hits[(i + fifth) % hits.length]}.svc.cluster.local AAAA`);
  for (let i = 0; lines.length < MISS_NAMES; i++) {
    const h = hits[i % hits.length];
    const ns = h.split('.')[1];
    const suffix = [`${ns}.svc.cluster.local`, 'svc.cluster.local', 'cluster.local'][Math.floor(i / hits.length) % 3];
    lines.push(`${h}.svc.cluster.local.${suffix} A`);
  }
  const miss = path.join(dir, 'miss.txt');
  writeFileSync(miss, shuffle(lines, 0x5ca1e).join('\n') + '\n');
  return { hot, miss, lines, distinct: new Set(lines).size };
}
