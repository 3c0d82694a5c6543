// Benchmark: start-up of the CLI, this tree against a baseline commit built in the same run.
//
// `node bench/startup.js` (after `npm run build`) extracts the baseline commit (--base, default
// 5abedd4: the tree before the bundled start-up) with `git archive` into a temporary
// directory, links node_modules, compiles it with this tree's tsc, then runs each variant
// alternately, --rounds times (default 5), in a rotating order:
//   - base:      the baseline's bin/clusterdns.js;
//   - unbundled: this tree with CLUSTERDNS_BUNDLE=0 (the compiled modules; only when a bundle exists);
//   - current:   this tree's bin/clusterdns.js (the bundle when `npm run build` made one).
// Scenarios:
//   - help:  `clusterdns --help`, wall and CPU time to exit;
//   - check: `clusterdns check --manifests examples/manifests`, wall and CPU to exit;
//   - serve: `clusterdns serve --conf examples/Corefile --manifests examples/manifests --port 0`:
//            wall to the "clusterdns ready" line, to the first answer (an A query sent then), and
//            CPU of the process (all its threads) at the ready line.
// CPU of a command is its rusage as the shell's `times` reports it (clock ticks); of the server,
// /proc/PID/stat at the ready line (n/a without /proc). Best (min) and median of the rounds, and
// base/current ratios of the best: the machine is shared, the minimum is the least disturbed run.
//
// Options: --rounds N, --base COMMIT.
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, HOST, option, startNode, serverReady, stop, cpuTicks, encodeQuery, median, fmt, clockTicks, machine, stopChildrenOnSignals } from './lib.js';

const ROUNDS = option('--rounds', 5, 1, 50);
const baseArg = process.argv.indexOf('--base');
const BASE = baseArg >= 0 ? process.argv[baseArg + 1] : '5abedd4';
const CLK_TCK = clockTicks();
const HAS_PROC = existsSync('/proc/self/stat');
const CURRENT_BIN = path.join(ROOT, 'bin', 'clusterdns.js');
const QUERY_NAME = 'kubernetes.default.svc.cluster.local';
const SERVE_ARGS = ['serve', '--conf', 'examples/Corefile', '--manifests', 'examples/manifests', '--port', '0'];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error || r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
  return r.stdout;
}

/** The baseline tree, compiled: { dir, sha }. */
function buildBase() {
  const sha = run('git', ['rev-parse', '--verify', `${BASE}^{commit}`]).trim();
  const dir = mkdtempSync(path.join(os.tmpdir(), `clusterdns-startup-${sha.slice(0, 7)}-`));
  const tar = path.join(dir, 'tree.tar');
  run('git', ['archive', '--format=tar', '-o', tar, sha]);
  run('tar', ['-xf', tar, '-C', dir]);
  rmSync(tar);
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: dir });
  // A baseline that bundles too (a later --base) is measured as it ships.
  if (existsSync(path.join(dir, 'scripts', 'bundle.js'))) run(process.execPath, ['scripts/bundle.js'], { cwd: dir });
  return { dir, sha };
}

/** Wall ms and CPU ms of one command run to its exit; CPU from the shell's `times` (children's user + system). */
function timeCommand(bin, args, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/bin/sh', ['-c', '"$@" >/dev/null 2>&1; echo "exit $?"; times', 'sh', process.execPath, bin, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c) => (out += c));
    child.once('error', reject);
    child.once('exit', () => {
      const wall = performance.now() - started;
      const lines = out.trim().split('\n');
      const code = /^exit (\d+)/.exec(lines[0] ?? '')?.[1];
      // `times`: the shell's user and system time, then its children's (bash: 0m0.380s, dash: 0m0.380000s).
      const secs = [...(lines[2] ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      if (code !== '0' || secs.length !== 2) return reject(new Error(`${args.join(' ')} failed (exit ${code}): ${out}`));
      resolve({ wall, cpu: (secs[0] + secs[1]) * 1000 });
    });
  });
}

function firstAnswer(port) {
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket('udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error('no answer within 5 s'));
    }, 5000);
    sock.once('message', () => {
      clearTimeout(timer);
      sock.close();
      resolve();
    });
    sock.send(encodeQuery(QUERY_NAME, 'A', 1), port, HOST);
  });
}

async function timeServe(bin, env) {
  const s = await startNode('clusterdns', [bin, ...SERVE_ARGS], serverReady, { env });
  try {
    const cpu = HAS_PROC ? (cpuTicks(s.child.pid) * 1000) / CLK_TCK : NaN;
    await firstAnswer(s.port);
    return { ready: s.readyAt - s.startedAt, answer: performance.now() - s.startedAt, cpu };
  } finally {
    await stop(s.child);
  }
}

const SCENARIOS = [
  { name: 'help', measure: (v) => timeCommand(v.bin, ['--help'], v.env), fields: ['wall', 'cpu'] },
  { name: 'check', measure: (v) => timeCommand(v.bin, ['check', '--manifests', 'examples/manifests'], v.env), fields: ['wall', 'cpu'] },
  { name: 'serve', measure: (v) => timeServe(v.bin, v.env), fields: ['ready', 'answer', 'cpu'] },
];

async function main() {
  stopChildrenOnSignals();
  const m = machine();
  console.log(`startup bench: ${m.nproc} CPUs (${m.cpu}), Node ${m.node}, ${ROUNDS} rounds`);
  const base = buildBase();
  const variants = [{ name: `base ${base.sha.slice(0, 7)}`, bin: path.join(base.dir, 'bin', 'clusterdns.js'), env: {} }];
  if (existsSync(path.join(ROOT, 'dist', 'bundle', 'cli.js'))) variants.push({ name: 'unbundled', bin: CURRENT_BIN, env: { CLUSTERDNS_BUNDLE: '0' } });
  variants.push({ name: 'current', bin: CURRENT_BIN, env: {} });
  const results = new Map(); // `${scenario}/${variant}` -> array of measurements
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const sc of SCENARIOS) {
        for (let i = 0; i < variants.length; i++) {
          const v = variants[(i + round) % variants.length];
          const key = `${sc.name}/${v.name}`;
          if (!results.has(key)) results.set(key, []);
          results.get(key).push(await sc.measure(v));
        }
      }
    }
  } finally {
    rmSync(base.dir, { recursive: true, force: true });
  }
  const baseName = variants[0].name;
  console.log('\nms, best of the rounds (median in brackets); ratio = base best / this best');
  for (const sc of SCENARIOS) {
    for (const f of sc.fields) {
      const best = (v) => Math.min(...results.get(`${sc.name}/${v.name}`).map((r) => r[f]));
      const cells = variants.map((v) => {
        const xs = results.get(`${sc.name}/${v.name}`).map((r) => r[f]);
        const ratio = v.name === baseName ? '' : ` x${fmt(best(variants[0]) / best(v), 2)}`;
        return `${v.name} ${fmt(best(v), 0)} (${fmt(median(xs), 0)})${ratio}`;
      });
      console.log(`  ${`${sc.name} ${f}`.padEnd(13)} ${cells.join(' | ')}`);
    }
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
