#!/usr/bin/env node
// What a kubernetes (re)load costs the serving thread, for issue #10: one load of a manifest list
// through the loader thread (dist/plugins/kubernetes/loader.js) with the serving thread otherwise
// idle, and the same build in this thread for the worker-side figures. Reports, as JSON:
// - buildMs: the worker's work after parsing (the store's parts, the slice image), in-thread;
// - bytes: structured-clone size of what the worker posts; transferred: buffers moved, uncopied;
// - wallMs: first message to store ready; busyMs: serving-thread time spent in that window
//   (event-loop utilisation); maxBlockMs: the longest the event loop was held (one message);
// - heapMiB: this thread's heap after gc with the first loaded store held, minus before it
//   (the transferred buffers are outside the heap: add `transferred`).
// Usage: node --expose-gc bench/store-image.js LIST.json [BUILD_ROOT] [--rounds N]
// BUILD_ROOT (default: this repository) holds the dist/ to measure, so two builds compare alike.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { serialize } from 'node:v8';

const argv = process.argv.slice(2);
const roundsAt = argv.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 3;
const [list, rootArg] = argv.filter((_, i) => roundsAt < 0 || (i !== roundsAt && i !== roundsAt + 1));
if (!list || typeof globalThis.gc !== 'function') {
  console.error('usage: node --expose-gc bench/store-image.js LIST.json [BUILD_ROOT] [--rounds N]');
  process.exit(2);
}
const root = path.resolve(rootArg ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const dist = (p) => import(pathToFileURL(path.join(root, 'dist', p)).href);
const { loadOffThread } = await dist('plugins/kubernetes/loader.js');
const { parseKubernetes } = await dist('plugins/kubernetes/config.js');
const storeMod = await dist('plugins/kubernetes/store.js');
const protocol = await dist('plugins/kubernetes/loader-protocol.js');
const { loadManifests } = await dist('cluster/load.js');
const { defaultClusterOptions } = await dist('cluster/model/model.js');

const directive = { name: 'kubernetes', args: ['cluster.local', 'in-addr.arpa', 'ip6.arpa'], file: 'bench', line: 1, block: [{ name: 'pods', args: ['insecure'], file: 'bench', line: 2 }] };
const zones = ['cluster.local.', 'in-addr.arpa.', 'ip6.arpa.'];
const cfg = parseKubernetes(directive, zones);
const cluster = { ...defaultClusterOptions, podCIDRs: ['10.128.0.0/9', 'fd00:10:244::/56'] };
const chunkWeight = 2000;

// Worker-side figures, in this thread: the same functions the loader thread runs.
const { model } = loadManifests([list], cluster);
const builds = [];
let bytes = 0;
let transferred = 0;
let messages = 0;
for (let r = 0; r < rounds; r++) {
  const t0 = performance.now();
  if (storeMod.storeImage) {
    const { parts, image, services } = storeMod.storeImage(model, cfg);
    builds.push(performance.now() - t0);
    if (r === 0) {
      const { imageBuffers } = await dist('plugins/kubernetes/slice-image.js');
      // Transferred buffers are moved, not serialised; they are counted at their size.
      const rest = Object.fromEntries(Object.entries(image).filter(([, v]) => !ArrayBuffer.isView(v)));
      bytes = serialize({ type: 'image', image: rest }).length;
      transferred = imageBuffers(image).reduce((n, b) => n + b.byteLength, 0);
      messages = 1;
      if (services) {
        // The Services as text: the strings are copied, the offsets transferred.
        bytes += serialize({ type: 'services', services: { keys: services.keys, json: services.json } }).length;
        transferred += services.at.byteLength;
        messages++;
      }
      for (const chunk of protocol.chunkParts(parts, chunkWeight)) {
        bytes += serialize({ type: 'chunk', parts: chunk }).length;
        messages++;
      }
    }
  } else {
    const parts = storeMod.storeParts(model, cfg);
    builds.push(performance.now() - t0);
    if (r === 0) {
      for (const chunk of protocol.chunkParts(parts, chunkWeight)) {
        bytes += serialize({ type: 'chunk', parts: chunk }).length;
        messages++;
      }
    }
  }
}

// Serving-thread figures: loads through the worker, nothing else running here.
const loads = [];
let held;
for (let r = 0; r < rounds; r++) {
  held = undefined;
  // The last load's worker holds its assembler (and so that store) until it has exited.
  await new Promise((r) => setTimeout(r, 300));
  globalThis.gc();
  globalThis.gc();
  const heap0 = process.memoryUsage().heapUsed;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  delay.enable();
  const data = await loadOffThread({ paths: [list], cluster, directive, zones, localAddresses: [], retainModel: false, countRecords: false, chunkWeight }, cfg);
  const t1 = performance.now();
  delay.disable();
  const elu = performance.eventLoopUtilization(elu0);
  held = data.store;
  await new Promise((r) => setTimeout(r, 300));
  globalThis.gc();
  globalThis.gc();
  const heap1 = process.memoryUsage().heapUsed;
  // The parse runs in the worker before its first message; the serving thread then only idles.
  // busyMs counts this thread's active time over the whole load (its share of wall time).
  loads.push({ wallMs: t1 - t0, busyMs: elu.active, maxBlockMs: delay.max / 1e6, heapMiB: (heap1 - heap0) / 2 ** 20, services: held.services.size });
}
// The store is used, so nothing above is optimised away.
const sample = [...held.services.values()][0];
const answered = sample ? held.slicesOf(sample.namespace, sample.name).length : 0;

const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
console.log(
  JSON.stringify({
    root,
    endpointSlices: model.endpointSlices.length,
    services: loads[0].services,
    buildMs: round(med(builds)),
    bytes,
    transferred,
    messages,
    busyMs: round(med(loads.map((l) => l.busyMs))),
    wallMs: round(med(loads.map((l) => l.wallMs))),
    maxBlockMs: round(med(loads.map((l) => l.maxBlockMs))),
    worstBlockMs: round(Math.max(...loads.map((l) => l.maxBlockMs))),
    // The first load's: a later one's baseline still holds the store before it (the worker's
    // listeners keep it a while after it exits), as a reload's does.
    heapMiB: round(loads[0].heapMiB),
    answered,
  }),
);
