#!/usr/bin/env node
// `clusterdns records` at real-cluster scale: one `kubectl get -A -o json`-style List (bench/gen-list.js;
// default 10,000 Services and 10,000 EndpointSlices of 10 ready endpoints = 100,000 endpoints) with
// `kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure }`, its output read through a
// pipe as a shell redirect would. Reports wall time and CPU time (user + system of the child, from
// this process's cutime/cstime) per run, its peak RSS (the child's own getrusage maxrss, written as
// it exits by a preloaded hook), and the output's size and SHA-256.
//
// With --base DIR (a checkout of another commit with its dist/ built), the two builds run
// alternately in the same run and the ratios head/base are reported; the outputs must be byte
// for byte the same, else the bench fails.
//
// Options: --services N (10000) --endpoints N per service (10) --rounds N (3) --base DIR
// --output json (the JSON listing instead of the zone file) --list FILE (an existing List).
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH, ROOT, option, median, fmt, clockTicks, machine, children, stopChildrenOnSignals } from './lib.js';

const SERVICES = option('--services', 10000, 1, 1000000);
const ENDPOINTS = option('--endpoints', 10, 1, 1000);
const ROUNDS = option('--rounds', 3, 1, 50);
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const BASE = arg('--base') ? path.resolve(arg('--base')) : undefined;
const JSON_OUTPUT = arg('--output') === 'json';

/** CPU time (clock ticks) of this process's children that have been waited for: cutime + cstime. */
function childTicks() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[13]) + Number(rest[14]);
}

/**
 * A script preloaded into each run: writes the process's peak RSS (KiB) to $RECORDS_RSS_OUT when
 * it exits (the load worker's exit is the process's too: only the main thread writes).
 */
const RSS_HOOK = `const { isMainThread } = require('node:worker_threads');
if (isMainThread) process.on('exit', () => require('node:fs').writeFileSync(process.env.RECORDS_RSS_OUT, String(process.resourceUsage().maxRSS)));
`;

/** One `records` run of the build at `root`: wall ms, CPU ms, peak RSS, output bytes and hash. */
function run(root, corefile, list, clkTck, hook, rssOut) {
  return new Promise((resolve, reject) => {
    fs.rmSync(rssOut, { force: true });
    const args = [
      '--require',
      hook,
      path.join(root, 'bin', 'clusterdns.js'),
      'records',
      '--conf',
      corefile,
      '--manifests',
      list,
      ...(JSON_OUTPUT ? ['--output', 'json'] : []),
    ];
    const ticks = childTicks();
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RECORDS_RSS_OUT: rssOut } });
    children.add(child);
    const hash = createHash('sha256');
    let bytes = 0;
    let lines = 0;
    let stderr = '';
    child.stdout.on('data', (b) => {
      hash.update(b);
      bytes += b.length;
      for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) lines++;
    });
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 300000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${root}: records exited ${code ?? signal}: ${stderr.trim().split('\n').slice(-2).join(' ')}`));
      const rssMb = Number(fs.readFileSync(rssOut, 'utf8')) / 1024;
      resolve({ ms, cpuMs: ((childTicks() - ticks) * 1000) / clkTck, rssMb, bytes, lines, sha256: hash.digest('hex') });
    });
  });
}

async function main() {
  stopChildrenOnSignals();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-records-'));
  try {
    let list = arg('--list');
    if (!list) {
      list = path.join(tmp, 'list.json');
      execFileSync(process.execPath, [path.join(BENCH, 'gen-list.js'), list, String(SERVICES), String(ENDPOINTS)], { stdio: ['ignore', 'ignore', 'inherit'] });
    }
    const corefile = path.join(tmp, 'Corefile');
    fs.writeFileSync(
      corefile,
      'cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n    }\n}\n',
    );
    const clkTck = clockTicks();
    const hook = path.join(tmp, 'rss-hook.cjs');
    fs.writeFileSync(hook, RSS_HOOK);
    const rssOut = path.join(tmp, 'rss');
    const targets = [...(BASE ? [{ label: 'base', root: BASE }] : []), { label: 'head', root: ROOT }];
    const runs = new Map(targets.map((t) => [t.label, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const t of targets) {
        const r = await run(t.root, corefile, list, clkTck, hook, rssOut);
        runs.get(t.label).push(r);
        console.log(
          `round ${round} ${t.label}: ${fmt(r.ms, 0)} ms wall, ${fmt(r.cpuMs, 0)} ms CPU, ${fmt(r.rssMb, 0)} MiB peak RSS, ${r.lines} lines, ${r.bytes} bytes`,
        );
      }
    }
    const summary = {
      input: { services: SERVICES, endpoints: SERVICES * ENDPOINTS, bytes: fs.statSync(list).size },
      output: JSON_OUTPUT ? 'json' : 'text',
      machine: machine(),
    };
    for (const t of targets) {
      const rs = runs.get(t.label);
      summary[t.label] = {
        msMedian: Math.round(median(rs.map((r) => r.ms))),
        cpuMsMedian: Math.round(median(rs.map((r) => r.cpuMs))),
        rssMbMedian: Math.round(median(rs.map((r) => r.rssMb))),
        lines: rs[0].lines,
        bytes: rs[0].bytes,
        sha256: rs[0].sha256,
      };
      if (rs.some((r) => r.sha256 !== rs[0].sha256)) throw new Error(`${t.label}: the output differs between runs`);
    }
    if (BASE) {
      if (summary.base.sha256 !== summary.head.sha256) throw new Error('head and base print different output');
      // Paired per round: the runs of one round are back to back, so they share the machine's load.
      summary.ratio = {
        wall: Number(fmt(median(runs.get('head').map((r, i) => r.ms / runs.get('base')[i].ms)), 3)),
        cpu: Number(fmt(median(runs.get('head').map((r, i) => r.cpuMs / runs.get('base')[i].cpuMs)), 3)),
        rss: Number(fmt(median(runs.get('head').map((r, i) => r.rssMb / runs.get('base')[i].rssMb)), 3)),
      };
      console.log(
        `head/base: wall ${summary.ratio.wall}, CPU ${summary.ratio.cpu}, peak RSS ${summary.ratio.rss} (median of per-round ratios); outputs identical`,
      );
    }
    console.log(JSON.stringify(summary));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
