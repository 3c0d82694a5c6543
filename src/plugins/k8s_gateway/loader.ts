// Loads k8s_gateway's host index off the serving thread: a worker thread reads the manifests and
// indexes the hosts (load-worker.ts), and the serving thread takes the finished index in one
// message. A large route set (64k route hosts: seconds of YAML, admission and route attachment)
// then costs the serving thread only the index's arrival. Where the compiled worker is not
// there (the TypeScript sources run directly, as in unit tests) the same work runs in this thread.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadManifests } from '../../cluster/load.js';
import { ManifestError } from '../../cluster/model.js';
import { indexHosts, type HostIndexData } from './hosts.js';
import { gatewayHistoryRequest, type GatewayLoadReply, type GatewayLoadRequest, type GatewayLoadSummary } from './load-protocol.js';

export interface LoadedHosts extends GatewayLoadSummary {
  index: HostIndexData;
  /** Where the work ran. */
  thread: 'worker' | 'main';
}

const workerFile = fileURLToPath(new URL('./load-worker.js', import.meta.url));

/** The loader thread's young generation in MiB: parse garbage goes sooner, the peak stays lower. */
const LOADER_YOUNG_GENERATION_MB = 4;

/** The load itself, in whichever thread runs it. */
export function buildHosts(req: GatewayLoadRequest): GatewayLoadSummary & { index: HostIndexData } {
  const loaded = loadManifests(req.paths, req.cluster, undefined, gatewayHistoryRequest(req));
  return {
    index: indexHosts(loaded.model, req.cfg),
    findings: loaded.findings,
    rejected: loaded.model.rejected?.length ?? 0,
    ...(loaded.history ? { history: loaded.history } : {}),
  };
}

/** Loads off the serving thread; `signal` stops the thread (the plugin closed meanwhile). */
export function loadHostsOffThread(req: GatewayLoadRequest, signal?: AbortSignal): Promise<LoadedHosts> {
  if (!existsSync(workerFile)) return Promise.resolve().then(() => ({ ...buildHosts(req), thread: 'main' as const }));
  return new Promise((resolve, reject) => {
    const closed = (): Error => new Error('k8s_gateway closed before its manifests loaded');
    if (signal?.aborted) return reject(closed());
    const worker = new Worker(workerFile, { workerData: req, resourceLimits: { maxYoungGenerationSizeMb: LOADER_YOUNG_GENERATION_MB } });
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      reject(err);
    };
    const onAbort = (): void => fail(closed());
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: GatewayLoadReply) => {
      if (m.type === 'error') {
        if (m.findings) return fail(new ManifestError(m.findings));
        return fail(Object.assign(new Error(m.message ?? 'k8s_gateway loader thread failed'), { stack: m.stack }));
      }
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      const { type: _done, ...loaded } = m;
      resolve({ ...loaded, thread: 'worker' });
    });
    worker.on('error', (err) => fail(err));
    worker.on('exit', (code) => {
      if (!settled) fail(new Error(`k8s_gateway loader thread exited (code ${code}) before it finished`));
    });
  });
}
