#!/usr/bin/env node
// `clusterdns diff` of two 10k-Service trees (bench/gen-cluster.js: YAML per namespace,
// Deployments and StatefulSets whose pods the emulation derives), NEW being OLD with a pull
// request's worth of edits: the ports of one namespace's Services renamed, one namespace's
// workloads scaled up, one namespace deleted. Baseline in the same run: `records` on OLD (one
// load and listing, where diff does both sides, plus `check` on each). The two commands run
// alternately, ROUNDS times; wall time, CPU time (user + system of the child and its threads) and
// the child's peak RSS (its own getrusage maxrss, written as it exits by a preloaded hook) are
// reported per run and as medians, with the per-round ratios diff/records.
//
// Options: --services N (10000) --pods N (20000) --rounds N (3)
//   --before DIR: another checkout (built) whose bin/clusterdns.js runs the same diff in each round
//   too, as `diff-before`: a before/after of a change in one run.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH, ROOT, option, median, fmt, clockTicks, machine, children, stopChildrenOnSignals } from './lib.js';

const SERVICES = option('--services', 10000, 1, 1000000);
const PODS = option('--pods', 20000, 0, 10000000);
const ROUNDS = option('--rounds', 3, 1, 50);
const beforeAt = process.argv.indexOf('--before');
const BEFORE = beforeAt > 0 ? path.resolve(process.argv[beforeAt + 1] ?? '') : undefined;
if (BEFORE !== undefined && !fs.existsSync(path.join(BEFORE, 'bin', 'clusterdns.js'))) throw new Error(`--before ${BEFORE}: no bin/clusterdns.js there`);

const RSS_HOOK = `const { isMainThread } = require('node:worker_threads');
if (isMainThread) process.on('exit', () => require('node:fs').writeFileSync(process.env.DIFF_RSS_OUT, String(process.resourceUsage().maxRSS)));
`;

/** CPU time (clock ticks) of this process's children that have been waited for: cutime + cstime. */
function childTicks() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[13]) + Number(rest[14]);
}

/** One CLI run: wall ms, CPU ms (all its threads), peak RSS MiB, exit code, stdout. */
function run(args, hook, rssOut, clkTck, root = ROOT) {
  return new Promise((resolve, reject) => {
    fs.rmSync(rssOut, { force: true });
    const ticks = childTicks();
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--require', hook, path.join(root, 'bin', 'clusterdns.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DIFF_RSS_OUT: rssOut },
    });
    children.add(child);
    const out = [];
    let stderr = '';
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 600000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      const ms = performance.now() - t0;
      if (code === null || code > 1) return reject(new Error(`${args[0]} exited ${code ?? signal}: ${stderr.trim().split('\n').slice(-2).join(' ')}`));
      const cpuMs = ((childTicks() - ticks) * 1000) / clkTck;
      resolve({ ms, cpuMs, rssMb: Number(fs.readFileSync(rssOut, 'utf8')) / 1024, code, stdout: Buffer.concat(out).toString('utf8') });
    });
  });
}

/** NEW: OLD with the edits of the header. */
function editTree(oldDir, newDir) {
  fs.cpSync(oldDir, newDir, { recursive: true });
  const files = fs.readdirSync(newDir).sort();
  const [renamed, scaled, deleted] = files;
  const rename = path.join(newDir, renamed);
  fs.writeFileSync(rename, fs.readFileSync(rename, 'utf8').replaceAll('  - name: http\n', '  - name: web-http\n'));
  const scale = path.join(newDir, scaled);
  fs.writeFileSync(scale, fs.readFileSync(scale, 'utf8').replaceAll('replicas: 2\n', 'replicas: 3\n'));
  fs.rmSync(path.join(newDir, deleted));
}

async function main() {
  stopChildrenOnSignals();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-bench-'));
  try {
    const oldDir = path.join(tmp, 'old');
    const newDir = path.join(tmp, 'new');
    execFileSync(process.execPath, [path.join(BENCH, 'gen-cluster.js'), oldDir, String(SERVICES), String(PODS)], { stdio: ['ignore', 'ignore', 'inherit'] });
    editTree(oldDir, newDir);
    const corefile = path.join(tmp, 'Corefile');
    fs.writeFileSync(corefile, 'cluster.local in-addr.arpa ip6.arpa {\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n}\n');
    const hook = path.join(tmp, 'rss-hook.cjs');
    fs.writeFileSync(hook, RSS_HOOK);
    const rssOut = path.join(tmp, 'rss');
    const commands = [
      { label: 'records', args: ['records', '--conf', corefile, '--manifests', oldDir] },
      { label: 'diff', args: ['diff', '--conf', corefile, oldDir, newDir, '--output', 'json', '--exit-code'] },
    ];
    if (BEFORE !== undefined) commands.push({ label: 'diff-before', root: BEFORE, args: commands[1].args });
    const clkTck = clockTicks();
    const runs = new Map(commands.map((c) => [c.label, []]));
    let diffSummary;
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of commands) {
        const r = await run(c.args, hook, rssOut, clkTck, c.root);
        runs.get(c.label).push(r);
        if (c.label !== 'records') {
          if (r.code !== 1) throw new Error(`diff --exit-code exited ${r.code}: the edits changed nothing?`);
          const got = JSON.parse(r.stdout).summary;
          if (diffSummary !== undefined && JSON.stringify(got) !== JSON.stringify(diffSummary))
            throw new Error(`${c.label} found ${JSON.stringify(got)}, diff ${JSON.stringify(diffSummary)}`);
          diffSummary = got;
        }
        console.log(`round ${round} ${c.label}: ${fmt(r.ms, 0)} ms wall, ${fmt(r.cpuMs, 0)} ms CPU, ${fmt(r.rssMb, 0)} MiB peak RSS`);
      }
    }
    const summary = {
      input: {
        services: SERVICES,
        pods: PODS,
        files: fs.readdirSync(oldDir).length,
        edits: 'ports of 1 namespace renamed, 1 namespace scaled 2 -> 3, 1 namespace deleted',
      },
      diff: { summary: diffSummary },
      machine: machine(),
    };
    for (const c of commands) {
      const rs = runs.get(c.label);
      Object.assign((summary[c.label] ??= {}), {
        msMedian: Math.round(median(rs.map((r) => r.ms))),
        cpuMsMedian: Math.round(median(rs.map((r) => r.cpuMs))),
        rssMbMedian: Math.round(median(rs.map((r) => r.rssMb))),
      });
    }
    summary.ratio = {
      wall: Number(fmt(median(runs.get('diff').map((r, i) => r.ms / runs.get('records')[i].ms)), 2)),
      cpu: Number(fmt(median(runs.get('diff').map((r, i) => r.cpuMs / runs.get('records')[i].cpuMs)), 2)),
      rss: Number(fmt(median(runs.get('diff').map((r, i) => r.rssMb / runs.get('records')[i].rssMb)), 2)),
    };
    console.log(`diff/records: wall ${summary.ratio.wall}, CPU ${summary.ratio.cpu}, peak RSS ${summary.ratio.rss} (median of per-round ratios)`);
    if (BEFORE !== undefined) {
      const b = runs.get('diff-before');
      summary.ratioBefore = {
        wall: Number(fmt(median(runs.get('diff').map((r, i) => r.ms / b[i].ms)), 2)),
        cpu: Number(fmt(median(runs.get('diff').map((r, i) => r.cpuMs / b[i].cpuMs)), 2)),
      };
      console.log(`diff/diff-before: wall ${summary.ratioBefore.wall}, CPU ${summary.ratioBefore.cpu} (median of per-round ratios)`);
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
