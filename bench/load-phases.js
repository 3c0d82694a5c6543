#!/usr/bin/env node
// Manifest loading alone: loadManifests on one input, in a fresh process per run, with
// the figures the loader is judged by: load time, peak RSS (maxRSS) and the heap the model retains
// after a full collection. Runs each input RUNS times and prints the medians as JSON.
// Usage: node bench/load-phases.js [--dist DIR] [--runs N] INPUT...
//   INPUT is a manifest file or directory (e.g. what bench/gen-list.js or gen-cluster.js wrote).
//   --dist: the compiled tree to load (default ./dist), so two builds can be compared in one run.
// Workload trees get the /9 pod CIDR 100k pods need, as in bench/load-one.js.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  const [, , , dist, input] = process.argv;
  const { loadManifests } = await import(pathToFileURL(path.join(dist, 'cluster/load.js')).href);
  const t0 = performance.now();
  const { model } = loadManifests([input], { podCIDRs: ['10.128.0.0/9', 'fd00:10:244::/56'] });
  const loadMs = performance.now() - t0;
  const maxRssMiB = process.resourceUsage().maxRSS / 1024;
  globalThis.gc();
  globalThis.gc();
  const retainedMiB = process.memoryUsage().heapUsed / 1048576;
  console.log(JSON.stringify({ loadMs, maxRssMiB, retainedMiB, objects: model.objectCount, pods: model.pods.length, slices: model.endpointSlices.length }));
  process.exit(0);
}

const argv = process.argv.slice(2);
let dist = path.join(path.dirname(self), '..', 'dist');
let runs = 3;
const inputs = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--dist') dist = path.resolve(argv[++i]);
  else if (argv[i] === '--runs') runs = Math.min(10, Math.max(1, Number(argv[++i])));
  else inputs.push(argv[i]);
}
if (inputs.length === 0) {
  console.error('usage: node bench/load-phases.js [--dist DIR] [--runs N] INPUT...');
  process.exit(2);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const input of inputs) {
  const samples = [];
  for (let r = 0; r < runs; r++) {
    const out = execFileSync(process.execPath, ['--expose-gc', self, '--child', dist, input], { encoding: 'utf8', timeout: 120_000 });
    samples.push(JSON.parse(out.trim().split('\n').pop()));
  }
  const m = (k) => Math.round(median(samples.map((s) => s[k])));
  console.log(
    JSON.stringify({
      input,
      dist,
      runs,
      loadMs: m('loadMs'),
      maxRssMiB: m('maxRssMiB'),
      retainedMiB: m('retainedMiB'),
      objects: samples[0].objects,
      pods: samples[0].pods,
      slices: samples[0].slices,
    }),
  );
}
