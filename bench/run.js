// Benchmark: clusterdns against the floor cost of Node's UDP stack. Rewrites the head of
// bench/RESULTS.md; the marked sections other scripts write are kept.
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
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  BENCH,
  ROOT,
  HOST,
  PIN,
  DNSPERF,
  SERVER_CPU,
  LOAD_CPU as DNSPERF_CPU,
  option,
  checkDnsperf,
  startNode,
  bareReady,
  serverReady,
  stop,
  children,
  measure as measureWith,
  dnsperfArgs,
  median,
  fmt,
  clockTicks,
  machine as machineFacts,
  stopChildrenOnSignals,
} from './lib.js';

const SECONDS = option('--seconds', 10, 1, 120);
const ROUNDS = option('--rounds', 4, 1, 10);
const WARMUP_SECONDS = 2;
const CLIENTS = DNSPERF.clients;
const OUTSTANDING = DNSPERF.outstanding;
const QUERIES = path.join(BENCH, 'queries.txt');
const COREFILE = path.join(BENCH, 'Corefile');
const MANIFESTS = path.join(ROOT, 'examples', 'manifests');

const measure = (target, seconds, clkTck) => measureWith(target, seconds, QUERIES, clkTck);

// ---- 6. report --------------------------------------------------------------------------------

function best(runs) {
  return {
    qps: Math.max(...runs.map((r) => r.qps)),
    latencyMs: Math.min(...runs.map((r) => r.latencyMs)),
    lost: Math.min(...runs.map((r) => r.lost)),
    cpuUsPerQuery: Math.min(...runs.map((r) => r.cpuUsPerQuery)),
  };
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
    `- best-of ratios for comparison: qps ${fmt(s.qps / b.qps, 3)}, CPU ${fmt(s.cpuUsPerQuery / b.cpuUsPerQuery, 3)} (server spends ${fmt(Math.abs(s.cpuUsPerQuery - b.cpuUsPerQuery), 2)} us/query ${s.cpuUsPerQuery >= b.cpuUsPerQuery ? 'more' : 'less'} at best)`,
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

Written by \`npm run bench\` (bench/run.js): this head is rewritten on every run, the marked sections below by the script each names.

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
  server) that copies the query's ID and question into one fixed A answer. It is the floor of a
  naive responder: what receiving and sending one datagram at a time costs in Node on this
  machine, with no DNS work at all. The server sends differently: replies it answers at once are
  held while the event loop reads the datagrams already waiting and are sent back to back (see
  src/server/udp.ts), and on loopback in a virtual machine that makes each send cheaper, so the
  server can beat this floor (ratios above 1). \`node bench/miss-path.js --hot --bare-hold\`
  measures against a bare responder that batches its sends the same way.
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
  const clkTck = clockTicks();
  const queries = readFileSync(QUERIES, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#')).length;

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

    const command = `${PIN ? `taskset -c ${DNSPERF_CPU} ` : ''}dnsperf ${dnsperfArgs('PORT', SECONDS, QUERIES).join(' ').replace(QUERIES, 'bench/queries.txt')}`;
    const { md, stdoutTable } = report({
      date: new Date().toISOString(),
      machine: { ...machineFacts(), dnsperf: dnsperfVersion ?? 'unknown', clkTck, queries },
      command,
      baseRuns,
      serverRuns,
    });
    // The other scripts' sections (between <!-- NAME:start --> and <!-- NAME:end -->) stay: each
    // script replaces only its own, and hand-written before/after records are kept.
    const resultsFile = path.join(BENCH, 'RESULTS.md');
    const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
    const sections = previous.match(/<!-- ([\w:-]+):start -->[\s\S]*?<!-- \1:end -->/g) ?? [];
    writeFileSync(resultsFile, sections.length > 0 ? `${md.trimEnd()}\n\n${sections.join('\n\n')}\n` : md);
    console.log(`\n${stdoutTable}\nwritten to bench/RESULTS.md`);
  } finally {
    for (const t of [server, base]) if (t) await stop(t.child);
    // A start that failed half-way leaves a child without a result object: stop those too.
    for (const c of children) await stop(c);
  }
}

stopChildrenOnSignals();

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
