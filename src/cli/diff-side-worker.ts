// The thread one side of `clusterdns diff` is computed on (diff-threads.ts starts it and says
// what it answers): the side's listing first, then the places of the sets that changed.
import { parentPort, workerData } from 'node:worker_threads';
import { loadSide, type Side } from './diff-compute.js';
import type { ClusterFlags } from './options.js';
import type { FromSide, ToSide } from './diff-threads.js';

const port = parentPort!;
const { side, flags } = workerData as { side: Side; flags: ClusterFlags };
const post = (m: FromSide): void => port.postMessage(m);
try {
  const loaded = await loadSide(side, flags);
  port.once('message', (m: ToSide) => {
    try {
      post({ type: 'origins', origins: loaded.originsOf(m.keys) });
    } catch (e) {
      post({ type: 'error', message: (e as Error).message });
    }
  });
  post({ type: 'listing', listing: loaded.listing });
} catch (e) {
  post({ type: 'error', message: (e as Error).message });
}
