// Benchmark: clusterdns against the floor cost of Node's UDP stack.
//
// `npm run bench` builds, then runs this file. It starts two UDP servers on 127.0.0.1:
//   - baseline: bench/bare-responder.js, which answers every query with a fixed A record;
//   - server:   the real clusterdns (bin/clusterdns.js serve, bench/Corefile, examples/manifests);
// loads each with dnsperf (same settings, bench/queries.txt), alternately, ROUNDS times each,
// reads the CPU time each process spent from /proc/PID/stat, and writes bench/RESULTS.md.
//
// Everything stays on loopback; every run is bounded by dnsperf's -l and a hard kill timeout;
// both servers are stopped (SIGTERM, then SIGKILL after 3 s) whatever happens.
//
// On a machine with 2+ CPUs and taskset (util-linux), the server under test is pinned to CPU 0 and
// dnsperf to CPU 1, so the load generator does not steal the server's core mid-run.
//
// Options: --seconds N (length of each measured run, default 10), --rounds N (default 4),
// --no-pin (let the scheduler place the processes).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH);
const HOST = '127.0.0.1';

function option(name, fallback, min, max) {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`${name}: expected a whole number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
}

const SECONDS = option('--seconds', 10, 1, 120);
const ROUNDS = option('--rounds', 4, 1, 10);
const WARMUP_SECONDS = 2;
// Chosen on a 2-core box where dnsperf shares the machine with the server under test (each pinned
// to its own CPU when possible): with these the bare responder is at its plateau, ~1 CPU busy (more clients or threads did not raise its qps, only latency
// and noise). Outstanding stays below ~190: a larger first burst overflows the default 208 KiB
// socket receive buffer (rmem_default) before Node reads it, and those queries count as lost.
const CLIENTS = 2;
const THREADS = 1;
const OUTSTANDING = 150;
const QPS_CAP = 200000;
const QUERIES = path.join(BENCH, 'queries.txt');
const COREFILE = path.join(BENCH, 'Corefile');
const MANIFESTS = path.join(ROOT, 'examples', 'manifests');
const READY_TIMEOUT_MS = 20000;
const STOP_GRACE_MS = 3000;
const PIN = !process.argv.includes('--no-pin') && os.availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;
const SERVER_CPU = '0';
const DNSPERF_CPU = '1';

/** [command, args] that runs cmd pinned to cpu when pinning is on (taskset execs: same PID). */
function pinned(cpu, cmd, args) {
  return PIN ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];
}

function dnsperfArgs(port, seconds) {
  return ['-s', HOST, '-p', String(port), '-d', QUERIES, '-l', String(seconds), '-c', String(CLIENTS), '-T', String(THREADS), '-Q', String(QPS_CAP), '-q', String(OUTSTANDING)];
}

// ---- 1. dnsperf present? ----------------------------------------------------------------------

function checkDnsperf() {
  const r = spawnSync('dnsperf', ['-h'], { encoding: 'utf8' });
  if (r.error) {
    console.error('bench: dnsperf is not installed (or not on PATH).');
    console.error('Install it with:  apt-get install -y dnsperf   (Debian/Ubuntu package "dnsperf"; run apt-get update first)');
    process.exit(1);
  }
}

function tool(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.error || r.status !== 0 ? null : r.stdout.trim();
}

// ---- 2/3. child processes ---------------------------------------------------------------------

const children = new Set();
/** Set by SIGINT/SIGTERM: no new dnsperf run starts after it. */
let interrupted = false;
/** The dnsperf run in progress, killed if this script is interrupted. */
let loadGenerator = null;

/**
 * Starts `node ARGS`, resolves with { child, port } once a stdout line satisfies readyPort (which
 * returns the port, or null for any other line). Keeps draining stdout/stderr afterwards so a
 * logging server never blocks on a full pipe; keeps the last lines for error messages.
 */
function startNode(label, args, readyPort) {
  const [cmd, argv] = pinned(SERVER_CPU, process.execPath, args);
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
          resolve({ label, child, port, tail });
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

function bareReady(line) {
  const m = /^bare-responder ready (\{.*\})$/.exec(line.trim());
  return m ? JSON.parse(m[1]).port : null;
}

function serverReady(line) {
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
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killed = await Promise.race([child.exited.then(() => false), new Promise((r) => setTimeout(() => r(true), STOP_GRACE_MS))]);
  if (killed && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await Promise.race([child.exited, new Promise((r) => setTimeout(r, STOP_GRACE_MS))]);
  }
}

// ---- 5. CPU time from /proc -------------------------------------------------------------------

/** utime + stime of PID, in clock ticks (fields 14 and 15 of /proc/PID/stat). */
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: split after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14, stime field 15.
  return Number(rest[11]) + Number(rest[12]);
}

// ---- 4. dnsperf -------------------------------------------------------------------------------

function runDnsperf(port, seconds) {
  const args = dnsperfArgs(port, seconds);
  return new Promise((resolve, reject) => {
    if (interrupted) return reject(new Error('interrupted'));
    const [cmd, argv] = pinned(DNSPERF_CPU, 'dnsperf', args);
    const p = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
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
    // dnsperf stops itself after -l seconds plus its query timeout (5 s); this is the backstop.
    const hard = setTimeout(() => p.kill('SIGKILL'), (seconds + 20) * 1000);
    p.once('error', (err) => {
      clearTimeout(hard);
      reject(err);
    });
    p.once('close', (code, signal) => {
      clearTimeout(hard);
      loadGenerator = null;
      if (code !== 0) return reject(new Error(`dnsperf exited with code ${code} signal ${signal}:\n${out.slice(-3000)}`));
      resolve({ args, output: out });
    });
  });
}

function parseDnsperf(output) {
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

async function measure(target, seconds, clkTck) {
  const before = cpuTicks(target.child.pid);
  const { output } = await runDnsperf(target.port, seconds);
  const after = cpuTicks(target.child.pid);
  const r = parseDnsperf(output);
  r.cpuUsPerQuery = (((after - before) / clkTck) * 1e6) / r.completed;
  return r;
}

// ---- 6. report --------------------------------------------------------------------------------

function fmt(n, digits) {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

function best(runs) {
  return {
    qps: Math.max(...runs.map((r) => r.qps)),
    latencyMs: Math.min(...runs.map((r) => r.latencyMs)),
    lost: Math.min(...runs.map((r) => r.lost)),
    cpuUsPerQuery: Math.min(...runs.map((r) => r.cpuUsPerQuery)),
  };
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/**
 * Each round runs the baseline and then the server back to back, so their ratio cancels the
 * machine's slow drift (other tenants, CPU frequency); the median of those ratios resists the
 * odd outlier round that best-of picks up.
 */
function pairedRatios(baseRuns, serverRuns) {
  const n = Math.min(baseRuns.length, serverRuns.length);
  const qps = [];
  const cpu = [];
  for (let i = 0; i < n; i++) {
    qps.push(serverRuns[i].qps / baseRuns[i].qps);
    cpu.push(serverRuns[i].cpuUsPerQuery / baseRuns[i].cpuUsPerQuery);
  }
  return { qps: median(qps), cpu: median(cpu), perRound: qps.map((q, i) => [q, cpu[i]]) };
}

function table(rows) {
  const head = '| target | qps | avg latency ms | lost | CPU us/query |\n| --- | ---: | ---: | ---: | ---: |';
  const body = rows.map(([name, b]) => `| ${name} | ${fmt(b.qps, 0)} | ${fmt(b.latencyMs, 3)} | ${b.lost} | ${fmt(b.cpuUsPerQuery, 2)} |`);
  return [head, ...body].join('\n');
}

function report({ date, machine, command, baseRuns, serverRuns }) {
  const b = best(baseRuns);
  const s = best(serverRuns);
  const paired = pairedRatios(baseRuns, serverRuns);
  const qpsRatio = paired.qps;
  const cpuRatio = paired.cpu;
  const main = table([
    ['baseline (bare Node UDP responder)', b],
    ['clusterdns', s],
  ]);
  const ratios = [
    `- qps ratio server/baseline: **${fmt(qpsRatio, 3)}** (median over rounds of server qps / baseline qps measured back to back; 1.0 = as fast as Node's UDP floor)`,
    `- CPU ratio server/baseline: **${fmt(cpuRatio, 3)}** (median over rounds of CPU time per query, server / baseline; 1.0 = no cost above the floor)`,
    `- per round (qps ratio, CPU ratio): ${paired.perRound.map(([q, c]) => `(${fmt(q, 3)}, ${fmt(c, 3)})`).join(' ')}`,
    `- best-of ratios for comparison: qps ${fmt(s.qps / b.qps, 3)}, CPU ${fmt(s.cpuUsPerQuery / b.cpuUsPerQuery, 3)} (server spends ${fmt(s.cpuUsPerQuery - b.cpuUsPerQuery, 2)} us/query more at best)`,
  ].join('\n');
  const runLines = [];
  const n = Math.max(baseRuns.length, serverRuns.length);
  for (let i = 0; i < n; i++) {
    for (const [name, runs] of [
      ['baseline', baseRuns],
      ['clusterdns', serverRuns],
    ]) {
      const r = runs[i];
      if (r) runLines.push(`| ${i + 1} | ${name} | ${fmt(r.qps, 0)} | ${fmt(r.latencyMs, 3)} | ${r.lost} | ${fmt(r.cpuUsPerQuery, 2)} | ${r.rcodes} |`);
    }
  }
  const md = `# clusterdns benchmark

Written by \`npm run bench\` (bench/run.js); overwritten on every run.

- date: ${date}
- machine: ${machine.nproc} CPUs (${machine.cpu}), Node ${machine.node}, dnsperf ${machine.dnsperf}, ${machine.os}
- command (each target, ${ROUNDS} rounds alternating baseline/server, after a ${WARMUP_SECONDS} s warm-up each):
  \`${command}\`
- placement: ${PIN ? `server under test pinned to CPU ${SERVER_CPU} (taskset), dnsperf to CPU ${DNSPERF_CPU}` : 'not pinned (scheduler decides)'}
- queries: bench/queries.txt (${machine.queries} lines, replayed in a loop); server config: bench/Corefile with examples/manifests

## Result (best of ${ROUNDS} runs per target)

${main}

${ratios}

### All runs

| round | target | qps | avg latency ms | lost | CPU us/query | response codes |
| ---: | --- | ---: | ---: | ---: | ---: | --- |
${runLines.join('\n')}

## How to read this

- **baseline** is bench/bare-responder.js: a node:dgram socket (same synchronous \`lookup\` option as the
  server) that copies the query's ID and question into one fixed A answer. It is the floor: what
  receiving and sending one datagram costs in Node on this machine, with no DNS work at all.
- **clusterdns** is the real server (parse, validate, encoded-answer cache, plugin chain on a miss,
  encode). The query file has only a few dozen distinct questions, so after the first pass nearly
  every answer comes from the server's cache of encoded answers: this measures the hot path that
  repeated questions take, not the cost of building a new answer.
- **qps** is what dnsperf completed per second with ${CLIENTS} client sockets and at most ${OUTSTANDING}
  queries outstanding. dnsperf runs on the same ${machine.nproc}-CPU machine
  (${PIN ? `on its own CPU, ${DNSPERF_CPU}, while the server has CPU ${SERVER_CPU}` : 'unpinned, sharing the CPUs with the server'}); near the
  baseline's rate dnsperf itself needs most of a CPU, so qps is bounded by the box, not only by
  the server: compare the two rows, not the absolute numbers across machines. The **qps ratio**
  is the headline: near 1.0 means the server's own work is small beside Node's UDP cost.
- **CPU us/query** is the server process's user+system CPU time (from /proc/PID/stat, in clock ticks
  of 1/${machine.clkTck} s) during the run divided by the queries completed. It is less sensitive to
  dnsperf's share of the CPU than qps; the difference between the rows is what clusterdns adds per
  query above the floor.
- **avg latency** is mostly queueing: with ${OUTSTANDING} queries in flight, latency is about
  outstanding / qps. **lost** counts queries with no answer within dnsperf's 5 s timeout; anything
  above 0 means drops (socket buffer overflow) and makes that run's qps suspect.
- Each column of the result table is the best value over the runs (highest qps, lowest latency,
  fewest lost, lowest CPU). Runs on a shared 2-CPU box vary by 10-40 % from minute to minute, so the
  headline ratios pair each server run with the baseline run just before it and take the median;
  look at "All runs" before reading much into a few percent.
`;
  const stdoutTable = `${main}\n\n${ratios}\n`;
  return { md, stdoutTable };
}

// ---- main -------------------------------------------------------------------------------------

async function main() {
  checkDnsperf();
  if (!existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) {
    console.error('bench: dist/ is missing; run `npm run build` first (npm run bench does it).');
    process.exit(1);
  }
  const clkTck = Number(tool('getconf', ['CLK_TCK']) ?? 100) || 100;
  const queries = readFileSync(QUERIES, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#')).length;

  let base;
  let server;
  try {
    base = await startNode('baseline (bench/bare-responder.js)', [path.join(BENCH, 'bare-responder.js'), '--address', HOST, '--port', '0'], bareReady);
    // --port 0: the server picks a free loopback port and logs it in the "clusterdns ready" line.
    server = await startNode(
      'clusterdns',
      [path.join(ROOT, 'bin', 'clusterdns.js'), 'serve', '--conf', COREFILE, '--manifests', MANIFESTS, '--port', '0'],
      serverReady,
    );
    console.log(PIN ? `pinning: servers on CPU ${SERVER_CPU}, dnsperf on CPU ${DNSPERF_CPU}` : 'pinning: off');
    console.log(`baseline pid ${base.child.pid} on ${HOST}:${base.port}; clusterdns pid ${server.child.pid} on ${HOST}:${server.port}`);

    let dnsperfVersion = null;
    for (const t of [base, server]) {
      process.stdout.write(`warm-up ${t.label} (${WARMUP_SECONDS} s)... `);
      const r = await measure(t, WARMUP_SECONDS, clkTck);
      dnsperfVersion ??= r.version;
      console.log(`${fmt(r.qps, 0)} qps`);
    }

    const baseRuns = [];
    const serverRuns = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [t, runs] of [
        [base, baseRuns],
        [server, serverRuns],
      ]) {
        process.stdout.write(`round ${round}/${ROUNDS} ${t.label} (${SECONDS} s)... `);
        const r = await measure(t, SECONDS, clkTck);
        runs.push(r);
        console.log(`${fmt(r.qps, 0)} qps, ${fmt(r.latencyMs, 3)} ms, lost ${r.lost}, ${fmt(r.cpuUsPerQuery, 2)} us CPU/query`);
      }
    }

    const command = `${PIN ? `taskset -c ${DNSPERF_CPU} ` : ''}dnsperf ${dnsperfArgs('PORT', SECONDS).join(' ').replace(QUERIES, 'bench/queries.txt')}`;
    const cpus = os.cpus();
    const { md, stdoutTable } = report({
      date: new Date().toISOString(),
      machine: {
        nproc: tool('nproc', []) ?? String(cpus.length),
        cpu: cpus[0]?.model?.trim() ?? 'unknown CPU',
        node: process.version,
        dnsperf: dnsperfVersion ?? 'unknown',
        os: `${os.type()} ${os.release()}`,
        clkTck,
        queries,
      },
      command,
      baseRuns,
      serverRuns,
    });
    writeFileSync(path.join(BENCH, 'RESULTS.md'), md);
    console.log(`\n${stdoutTable}\nwritten to bench/RESULTS.md`);
  } finally {
    for (const t of [server, base]) if (t) await stop(t.child);
    // A start that failed half-way leaves a child without a result object: stop those too.
    for (const c of children) await stop(c);
  }
}

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

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
