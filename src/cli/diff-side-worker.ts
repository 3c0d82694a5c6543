// The thread one side of `clusterdns diff` is computed on (diff-compute.ts starts it): the two
// sides' listings, each a few seconds of work at 10k Services, then run at once instead of in turn.
import { parentPort, workerData } from 'node:worker_threads';
import { snapshotHere, type Side } from './diff-compute.js';
import type { ClusterFlags } from './options.js';

const { side, flags } = workerData as { side: Side; flags: ClusterFlags };
try {
  parentPort!.postMessage({ snapshot: await snapshotHere(side, flags) });
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).message });
}
