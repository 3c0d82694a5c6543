// The thread `clusterdns diff` reads one side's findings on (diff-compute.ts starts it), so that
// this load runs beside the server's own.
import { parentPort, workerData } from 'node:worker_threads';
import { sideFindings, type Side } from './diff-compute.js';
import type { clusterOptions } from './options.js';

const { side, options } = workerData as { side: Side; options: ReturnType<typeof clusterOptions> };
try {
  parentPort!.postMessage({ findings: sideFindings(side, options) });
} catch (e) {
  parentPort!.postMessage({ error: (e as Error).message });
}
