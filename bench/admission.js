#!/usr/bin/env node
// Cost of admission by schema (src/cluster/admission, from dist/): the module's import time in this
// fresh process, each kind's first validation (its validator loaded, its fields learned), then
// ms per 10k objects for Services and EndpointSlices as `kubectl get -A -o json` writes them
// (bench/gen-list.js --kubectl --managed-fields: uid, resourceVersion, annotations, managedFields,
// owner references), and the heap they leave behind.
// Usage: node --expose-gc bench/admission.js [SERVICES=10000] [ENDPOINTS_PER_SLICE=10]
const t0 = performance.now();
const { KindRegistry } = await import('../dist/cluster/admission/index.js');
const importMs = performance.now() - t0;

const { execFileSync } = await import('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const { join } = await import('node:path');

const services = Number(process.argv[2] ?? 10000);
const perSlice = Number(process.argv[3] ?? 10);
const dir = mkdtempSync(join(tmpdir(), 'admission-bench-'));
const file = join(dir, 'list.json');
execFileSync(process.execPath, [new URL('./gen-list.js', import.meta.url).pathname, file, String(services), String(perSlice), '--kubectl', '--managed-fields']);
const items = JSON.parse(readFileSync(file, 'utf8')).items;
rmSync(dir, { recursive: true, force: true });
const byKind = (k) => items.filter((o) => o.kind === k);
const svcs = byKind('Service');
const slices = byKind('EndpointSlice');

const gc = globalThis.gc ?? (() => {});
const mib = (b) => (b / 1048576).toFixed(1);
gc();
const heap0 = process.memoryUsage().heapUsed;

const reg = KindRegistry.create();
const first = {};
for (const [av, k, sample] of [['v1', 'Service', svcs[0]], ['discovery.k8s.io/v1', 'EndpointSlice', slices[0]]]) {
  const t = performance.now();
  const l = reg.lookup(av, k);
  const issues = l.validate(sample);
  first[k] = performance.now() - t;
  if (issues.length > 0) console.log(k, 'issues on the first object:', issues);
}

function run(objs, av, kind) {
  const l = reg.lookup(av, kind);
  let issues = 0;
  const t = performance.now();
  for (const o of objs) issues += reg.lookup(av, kind).validate(o).length;
  const ms = performance.now() - t;
  if (issues > 0) console.log(kind, 'issues:', issues, l.validate(objs[0]));
  return (ms * 10000) / objs.length;
}
const svcMs = [run(svcs, 'v1', 'Service'), run(svcs, 'v1', 'Service')];
const sliceMs = [run(slices, 'discovery.k8s.io/v1', 'EndpointSlice'), run(slices, 'discovery.k8s.io/v1', 'EndpointSlice')];
gc();
const heap1 = process.memoryUsage().heapUsed;

console.log(`import of the module: ${importMs.toFixed(1)} ms`);
console.log(`first Service: ${first.Service.toFixed(1)} ms, first EndpointSlice: ${first.EndpointSlice.toFixed(1)} ms (validators loaded, fields learned)`);
console.log(`Services (${svcs.length}): ${svcMs.map((x) => x.toFixed(1)).join(' / ')} ms per 10k (first pass / second pass)`);
console.log(`EndpointSlices (${slices.length}, ${perSlice} endpoints each): ${sliceMs.map((x) => x.toFixed(1)).join(' / ')} ms per 10k`);
console.log(`heap kept by admission (validators, learned fields): ${mib(heap1 - heap0)} MiB; rss ${mib(process.memoryUsage().rss)} MiB`);
