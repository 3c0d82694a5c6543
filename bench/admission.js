#!/usr/bin/env node
// Cost of admission by schema (src/cluster/admission, from dist/): the module's import time in
// this fresh process, each kind's first validation (its validator loaded, its fields learned), the
// heap that leaves, then the ms validation adds per 10k Services and per 10k EndpointSlices as
// `kubectl get -A -o json` writes them (bench/gen-list.js --kubectl --managed-fields: uid,
// resourceVersion, annotations, managedFields, owner references).
// Usage: node --expose-gc bench/admission.js [SERVICES=10000] [ENDPOINTS_PER_SLICE=10]
globalThis.gc?.();
const heapStart = process.memoryUsage().heapUsed;
const t0 = performance.now();
const { KindRegistry } = await import('../dist/cluster/admit/schema/index.js');
const importMs = performance.now() - t0;

const { execFileSync } = await import('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const { join } = await import('node:path');

const services = Number(process.argv[2] ?? 10000);
const perSlice = Number(process.argv[3] ?? 10);
const gc = globalThis.gc ?? (() => {});
const mib = (b) => (b / 1048576).toFixed(1);

/** One JSON text per Service and EndpointSlice of a generated List, nothing else of it kept. */
function generate(n) {
  const dir = mkdtempSync(join(tmpdir(), 'admission-bench-'));
  const file = join(dir, 'list.json');
  try {
    execFileSync(process.execPath, [new URL('./gen-list.js', import.meta.url).pathname, file, String(n), String(perSlice), '--kubectl', '--managed-fields']);
    const items = JSON.parse(readFileSync(file, 'utf8')).items;
    const of = (k) => items.filter((o) => o.kind === k).map((o) => JSON.stringify(o));
    return { Service: of('Service'), EndpointSlice: of('EndpointSlice') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// First objects (from a List of one Service) before the large List exists, so that the heap
// figure is what admission keeps: the module, the validators and what it learned of the fields.
const samples = generate(1);
const reg = KindRegistry.create();
const first = {};
for (const [av, k] of [
  ['v1', 'Service'],
  ['discovery.k8s.io/v1', 'EndpointSlice'],
]) {
  const sample = JSON.parse(samples[k][0]);
  const t = performance.now();
  const issues = reg.lookup(av, k).validate(sample);
  first[k] = performance.now() - t;
  if (issues.length > 0) console.log(k, 'issues on the first object:', issues);
}
gc();
const heapKept = process.memoryUsage().heapUsed - heapStart;
const texts = generate(services);

// The loader validates each object right after reading it, while it is in the cache: so each
// round parses every object from its own JSON text and times the validation of that object alone
// (validating 10k objects in a loop long after parsing them measures memory latency instead: ~3x
// more on the first pass). Round 1 includes the validators' JIT warm-up.
function rounds(av, kind, n) {
  const out = [];
  let issues = 0;
  for (let r = 0; r < n; r++) {
    gc();
    let ms = 0;
    for (const s of texts[kind]) {
      const o = JSON.parse(s);
      const t = performance.now();
      issues += reg.lookup(av, kind).validate(o).length;
      ms += performance.now() - t;
    }
    out.push((ms * 10000) / texts[kind].length);
  }
  if (issues > 0) console.log(kind, 'issues:', issues);
  return out;
}
const svcMs = rounds('v1', 'Service', 3);
const sliceMs = rounds('discovery.k8s.io/v1', 'EndpointSlice', 3);

console.log(`import of the module: ${importMs.toFixed(1)} ms`);
console.log(`first Service: ${first.Service.toFixed(1)} ms, first EndpointSlice: ${first.EndpointSlice.toFixed(1)} ms (validators loaded, fields learned)`);
console.log(`Services (${texts.Service.length}): ${svcMs.map((x) => x.toFixed(1)).join(' / ')} ms per 10k (rounds 1 / 2 / 3)`);
console.log(`EndpointSlices (${texts.EndpointSlice.length}, ${perSlice} endpoints each): ${sliceMs.map((x) => x.toFixed(1)).join(' / ')} ms per 10k`);
console.log(`heap kept by admission (the module, the validators, learned fields): ${mib(heapKept)} MiB`);
