// Loads one manifest directory the way the server does (model, then the kubernetes store) and
// reports time and peak RSS as JSON. Run in a fresh process per measurement.
import { performance } from 'node:perf_hooks';

const dir = process.argv[2];
if (dir === '--empty') {
  console.log(JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
  process.exit(0);
}
const { loadManifests } = await import('../dist/cluster/load.js');
const { KubernetesStore } = await import('../dist/plugins/kubernetes/store.js');
const { parseKubernetes } = await import('../dist/plugins/kubernetes/config.js');
const cfg = parseKubernetes(
  {
    name: 'kubernetes',
    args: ['cluster.local', 'in-addr.arpa', 'ip6.arpa'],
    file: 'bench',
    line: 1,
    block: [{ name: 'pods', args: ['verified'], file: 'bench', line: 2 }],
  },
  ['cluster.local.', 'in-addr.arpa.', 'ip6.arpa.'],
);
const t0 = performance.now();
// 100k pods need more than the default /16 pod CIDR, as a cluster that size would have.
const { model } = loadManifests([dir], { podCIDRs: ['10.128.0.0/9', 'fd00:10:244::/56'] });
const t1 = performance.now();
const store = KubernetesStore.fromModel(model, cfg);
const t2 = performance.now();
console.log(
  JSON.stringify({
    objects: model.objectCount,
    services: model.services.length,
    pods: model.pods.length,
    endpointSlices: model.endpointSlices.length,
    storeServices: store.services.size,
    loadMs: Math.round(t1 - t0),
    storeMs: Math.round(t2 - t1),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  }),
);
