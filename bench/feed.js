#!/usr/bin/env node
// A new small Service file beside a large tree: a full load of the tree
// against the feed's reload (src/cluster/feed.ts), which reads only the new file and plays the
// control plane again where something changed, in one process, alternating which goes first.
// Prints per-run ms and the medians, the feed's split (check: listing and versions; read: the
// changed files; merge; emulate: the control plane), then reloads after a new Deployment file
// each (its pods selected by one of the new Services), the no-change reload, and the heap each
// keeps after a full collection (a child process each: the model alone, and the feed with its
// model).
// Both load as the kubernetes plugin does: with an admission history (default budget).
// Usage: node bench/feed.js [--dist DIR] [--runs N] DIR
//   DIR: a manifest directory, e.g. one holding `node bench/gen-list.js DIR/list.json 10000 10`.
//   The bench adds and removes its own files (zz-feed-bench-*.yaml) there.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);
const argv = process.argv.slice(2);
let dist = path.join(path.dirname(self), '..', 'dist');
let runs = 5;
let child;
const inputs = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--dist') dist = path.resolve(argv[++i]);
  else if (argv[i] === '--runs') runs = Math.min(20, Math.max(1, Number(argv[++i])));
  else if (argv[i] === '--child') child = argv[++i];
  else inputs.push(argv[i]);
}
if (inputs.length !== 1) {
  console.error('usage: node bench/feed.js [--dist DIR] [--runs N] DIR');
  process.exit(2);
}
const dir = path.resolve(inputs[0]);
const { loadManifests } = await import(pathToFileURL(path.join(dist, 'cluster/load.js')).href);
const { ManifestFeed } = await import(pathToFileURL(path.join(dist, 'cluster/feed.js')).href);
const cluster = { podCIDRs: ['10.128.0.0/9', 'fd00:10:244::/56'] };

if (child) {
  // The heap each way keeps between loads.
  let kept;
  if (child === 'full') kept = loadManifests([dir], cluster, undefined, {}).model;
  else {
    const feed = new ManifestFeed([dir], { cluster, history: {} });
    kept = [feed, feed.load().model];
  }
  globalThis.gc();
  globalThis.gc();
  console.log(JSON.stringify({ heapMiB: process.memoryUsage().heapUsed / 1048576, rssMiB: process.memoryUsage().rss / 1048576, kept: kept !== undefined }));
  process.exit(0);
}

const own = (f) => f.startsWith('zz-feed-bench-');
const clean = () => {
  for (const f of readdirSync(dir)) if (own(f)) rmSync(path.join(dir, f));
};
clean();
const serviceFile = (i) => {
  const file = path.join(dir, `zz-feed-bench-${i}.yaml`);
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: feed-bench-${i}\n  namespace: default\nspec:\n  selector:\n    app: feed-bench-${i}\n  ports:\n  - port: 80\n`,
  );
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x);

const feed = new ManifestFeed([dir], { cluster, history: {} });
let t = performance.now();
const first = feed.load();
const firstMs = performance.now() - t;
let previous = first.history;
const full = () => {
  const t0 = performance.now();
  const r = loadManifests([dir], cluster, undefined, { previous });
  previous = r.history;
  return { ms: performance.now() - t0, services: r.model.services.length };
};
const reload = () => {
  const t0 = performance.now();
  const r = feed.reload();
  return { ms: performance.now() - t0, services: r.model.services.length, reread: r.reread.length, full: r.full, timings: r.timings };
};
const fulls = [];
const feeds = [];
for (let i = 0; i < runs; i++) {
  serviceFile(i);
  // Each takes the change once; which goes first alternates (a collection owed by one lands on the next).
  const [a, b] = i % 2 === 0 ? [full(), reload()] : [reload(), full()].reverse();
  if (a.services !== b.services || b.full || b.reread !== 1) throw new Error(`feed and full load differ: ${JSON.stringify({ a, b })}`);
  fulls.push(a.ms);
  feeds.push(b);
  console.log(
    JSON.stringify({ run: i, fullMs: round(a.ms), feedMs: round(b.ms), split: Object.fromEntries(Object.entries(b.timings).map(([k, v]) => [k, round(v)])) }),
  );
}
// A workload lands: a Deployment whose pods the Service of the same run selects. Its namespace's
// pods are derived again, every pod's address is probed again, and that Service gets its slice.
const workloadReloads = [];
for (let i = 0; i < runs; i++) {
  writeFileSync(
    path.join(dir, `zz-feed-bench-deploy-${i}.yaml`),
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: feed-bench-${i}\n  namespace: default\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      app: feed-bench-${i}\n  template:\n    metadata:\n      labels:\n        app: feed-bench-${i}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.27\n`,
  );
  const r = reload();
  if (r.full || r.reread !== 1) throw new Error(`the Deployment's reload read ${r.reread} files (full: ${r.full})`);
  workloadReloads.push(r);
  console.log(JSON.stringify({ workloadRun: i, feedMs: round(r.ms), split: Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, round(v)])) }));
}
t = performance.now();
const idle = feed.reload();
const idleMs = performance.now() - t;
clean();

const heap = (mode) =>
  JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', self, '--dist', dist, '--child', mode, dir], { encoding: 'utf8', timeout: 300_000 })
      .trim()
      .split('\n')
      .pop(),
  );
const heapFull = heap('full');
const heapFeed = heap('feed');
const split = (k) => round(median(feeds.map((f) => f.timings[k])));
console.log(
  JSON.stringify({
    dir,
    runs,
    firstLoadMs: round(firstMs),
    fullMs: round(median(fulls)),
    feedMs: round(median(feeds.map((f) => f.ms))),
    ratio: Number((median(fulls) / median(feeds.map((f) => f.ms))).toFixed(2)),
    feedSplitMs: { check: split('check'), read: split('read'), merge: split('merge'), emulate: split('emulate') },
    workloadFeedMs: round(median(workloadReloads.map((f) => f.ms))),
    workloadEmulateMs: round(median(workloadReloads.map((f) => f.timings.emulate))),
    noChangeReloadMs: round(idleMs),
    noChangeSplitMs: Object.fromEntries(Object.entries(idle.timings).map(([k, v]) => [k, round(v)])),
    keptHeapMiB: { fullModel: round(heapFull.heapMiB), feedAndModel: round(heapFeed.heapMiB) },
  }),
);
