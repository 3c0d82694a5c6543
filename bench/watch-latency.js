// Benchmark: time from a manifest file landing to the manifest watcher's onChange, with file
// system events (the default) against the poll alone (the watch limit set to 0), in one run.
//
// `node bench/watch-latency.js` (after `npm run build`: it runs dist/cluster/read/watch.js) makes, per
// tree size, two identical trees in a temporary directory (one per watcher, so neither sees the
// other's writes), and for --rounds rounds (default 15) adds one Service file to each, written to
// a temporary name and renamed into place, alternating which goes first. The latency of a sample
// is from the rename's return to onChange. Trees: --small files in one directory (default 10) and
// --large files in 100 directories (default 5000), which shows what a look (one walk and stat of
// the tree, two per change with events) costs. One look of each tree is also timed (wall and CPU,
// median of 11) against the baseline's key, in turn: collectManifestFiles, then a stat of each
// file, as the watcher took it before.
// The poll interval is --interval ms (default 2000, the kubernetes plugin's `watch` default).
//
// Options: --rounds N, --interval MS, --small N, --large N.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, option, median, fmt, machine, shuffle } from './lib.js';

const ROUNDS = option('--rounds', 15, 1, 1000);
const INTERVAL = option('--interval', 2000, 10, 60000);
const SMALL = option('--small', 10, 1, 100000);
const LARGE = option('--large', 5000, 1, 200000);
const DIRS_LARGE = 100;

const { ManifestWatcher, fingerprint } = await import(path.join(ROOT, 'dist/cluster/read/watch.js'));
const { collectManifestFiles } = await import(path.join(ROOT, 'dist/cluster/read/yaml-docs.js'));

/** The key as the watcher took it before (the baseline): collectManifestFiles, then a stat of each file. */
function listThenStat(paths) {
  const found = [];
  const h = createHash('sha256');
  for (const file of collectManifestFiles(paths, found)) {
    const st = statSync(file);
    h.update(`${file}\0${st.size}\0${st.mtimeMs}\0${st.ctimeMs}\0${st.ino}\n`);
  }
  for (const f of found) h.update(`${f.file}\0${f.message}\n`);
  return h.digest('hex');
}

/** Wall and CPU (user + system) milliseconds of f(). */
function timed(f) {
  const c = process.cpuUsage();
  const t = performance.now();
  f();
  const wall = performance.now() - t;
  const cpu = process.cpuUsage(c);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

const service = (name, ip) =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  clusterIP: ${ip}\n  ports: [{name: http, port: 80}]\n`;

const ip = (n) => `10.${96 + ((n >> 16) & 31)}.${(n >> 8) & 255}.${n & 255}`;

function makeTree(root, files, dirs) {
  for (let d = 0; d < dirs; d++) mkdirSync(path.join(root, `ns-${d}`), { recursive: true });
  for (let i = 0; i < files; i++) writeFileSync(path.join(root, `ns-${i % dirs}`, `svc-${i}.yaml`), service(`svc-${i}`, ip(i + 1)));
}

function percentile(values, p) {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)];
}

/** A started watcher of `root` whose changes resolve the promise next() hands out. */
function watcherOf(root, options) {
  let notify;
  const w = new ManifestWatcher([root], INTERVAL, () => notify?.(performance.now()), options);
  w.start();
  return {
    w,
    next: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no change within ${3 * INTERVAL + 2000} ms`)), 3 * INTERVAL + 2000);
        notify = (t) => {
          clearTimeout(timer);
          notify = undefined;
          resolve(t);
        };
      }),
  };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-watch-bench-'));
const results = [];
const lookResults = [];
try {
  const trees = [
    { label: `${SMALL} files, 1 directory`, files: SMALL, dirs: 1 },
    { label: `${LARGE} files, ${DIRS_LARGE} directories`, files: LARGE, dirs: DIRS_LARGE },
  ];
  for (const tree of trees) {
    const modes = {};
    for (const mode of ['events', 'polling']) {
      const root = path.join(tmp, `${tree.files}-${mode}`);
      makeTree(root, tree.files, tree.dirs);
      modes[mode] = { root, ...watcherOf(root, mode === 'polling' ? { maxWatches: 0 } : {}), samples: [] };
    }
    if (modes.events.w.mode !== 'events') throw new Error(`events watcher is ${modes.events.w.mode}: ${modes.events.w.pollingReason}`);
    // One look of the tree: this key against the baseline's, alternately.
    const looks = { key: [], baseline: [] };
    for (let i = 0; i < 11; i++) {
      for (const [name, f] of i % 2
        ? [
            ['key', fingerprint],
            ['baseline', listThenStat],
          ]
        : [
            ['baseline', listThenStat],
            ['key', fingerprint],
          ]) {
        looks[name].push(timed(() => f([modes.events.root])));
      }
    }
    // Past the look each watcher makes when it starts.
    await new Promise((r) => setTimeout(r, 300));
    // A poll sample written right after the poll that applied the last one would always wait
    // about two intervals: each waits first a delay spread evenly over one interval.
    const delays = shuffle(
      Array.from({ length: ROUNDS }, (_, i) => ((i + 0.5) * INTERVAL) / ROUNDS),
      22 + tree.files,
    );
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['events', 'polling'] : ['polling', 'events'];
      for (const mode of order) {
        const m = modes[mode];
        if (mode === 'polling') await new Promise((r) => setTimeout(r, delays[round]));
        const dir = path.join(m.root, `ns-${round % tree.dirs}`);
        const name = `added-${round}`;
        const seen = m.next();
        writeFileSync(path.join(dir, `.${name}.tmp`), service(name, ip(tree.files + round + 1)));
        renameSync(path.join(dir, `.${name}.tmp`), path.join(dir, `${name}.yaml`));
        const t0 = performance.now();
        m.samples.push((await seen) - t0);
      }
    }
    for (const mode of ['events', 'polling']) {
      const s = modes[mode].samples;
      results.push({ tree: tree.label, mode, median: median(s), p95: percentile(s, 95), max: Math.max(...s), n: s.length });
      modes[mode].w.stop();
    }
    lookResults.push({ tree: tree.label, looks });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const m = machine();
console.log(`watch latency: ${m.cpu}, ${m.nproc} CPUs, node ${m.node}; poll interval ${INTERVAL} ms, ${ROUNDS} rounds`);
console.log('| tree | mode | median (ms) | p95 (ms) | max (ms) | samples |');
console.log('| --- | --- | ---: | ---: | ---: | ---: |');
for (const r of results) {
  console.log(`| ${r.tree} | ${r.mode} | ${fmt(r.median, 0)} | ${fmt(r.p95, 0)} | ${fmt(r.max, 0)} | ${r.n} |`);
}
console.log('\none look of the tree (median of 11; wall, and CPU of this process):');
console.log('| tree | key | wall (ms) | CPU (ms) |');
console.log('| --- | --- | ---: | ---: |');
for (const r of lookResults) {
  for (const name of ['baseline', 'key']) {
    const label = name === 'key' ? 'fingerprint (one pass)' : 'baseline (collectManifestFiles, then stat)';
    console.log(`| ${r.tree} | ${label} | ${fmt(median(r.looks[name].map((x) => x.wall)), 1)} | ${fmt(median(r.looks[name].map((x) => x.cpu)), 1)} |`);
  }
}
