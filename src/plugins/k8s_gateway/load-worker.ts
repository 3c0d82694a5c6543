// k8s_gateway's loader thread: reads the manifests, builds the cluster model and the host
// index's data, and posts it to the serving thread in one message (the index's typed arrays
// transferred). The parse garbage of a large route set stays in this thread's heap and goes when
// the thread ends; the serving thread only receives the index.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ManifestError } from '../../cluster/model.js';
import { hostIndexBuffers } from './hosts.js';
import { buildHosts } from './loader.js';
import type { GatewayLoadReply, GatewayLoadRequest } from './load-protocol.js';

const port = parentPort!;

// Loading is background work: where the serving thread and this one share a CPU, the scheduler
// should run the serving thread first (on Linux a nice value belongs to one thread).
try {
  setPriority(19);
} catch {
  // Not permitted here: the load just competes as an equal.
}

let reply: GatewayLoadReply;
try {
  reply = { type: 'done', ...buildHosts(workerData as GatewayLoadRequest) };
} catch (err) {
  reply =
    err instanceof ManifestError
      ? { type: 'error', findings: [...err.findings] }
      : { type: 'error', message: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined };
}
port.postMessage(reply, reply.type === 'done' ? hostIndexBuffers(reply.index) : []);
port.close();
