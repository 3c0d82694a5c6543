// Loads the kubernetes plugin's data off the serving thread: a worker thread reads the
// manifests and builds the store's parts (load-worker.ts); this side asks for them one chunk at
// a time, indexing each between turns of the event loop, so a large cluster's (re)load never
// holds up queries for long. Where the compiled worker is not available (the TypeScript sources
// run directly, as in unit tests) the same work runs in this thread.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadManifests } from '../../cluster/load.js';
import { ManifestError, type ClusterModel } from '../../cluster/model.js';
import type { KubernetesConfig } from './setup.js';
import { KubernetesStore, StoreAssembler } from './store.js';
import { historyRequest, loadSummary, type LoadRequest, type LoaderMessage, type LoadSummary } from './loader-protocol.js';

export interface LoadedData extends LoadSummary {
  store: KubernetesStore;
  /**
   * Records of the forward zones as a zone transfer lists them, counted by the loader thread
   * after the data was handed over; undefined when not asked for or counted in this thread.
   */
  records: Promise<number> | undefined;
  /** Where the work ran. */
  thread: 'worker' | 'main';
}

/** Entries per chunk: about 1-3 ms of indexing on the serving thread each. */
export const DEFAULT_CHUNK_WEIGHT = 2000;

const workerFile = fileURLToPath(new URL('./load-worker.js', import.meta.url));

/**
 * The loader thread's young generation, in MiB. Parsing a large List makes short-lived objects
 * by the million; V8's default young generation (3 x 16 MiB semi-spaces) lets tens of MiB of
 * them, and what survives one scavenge, pile up before they go. 4 MiB keeps the thread's peak
 * RSS about 35 MiB lower on 100k endpoints (285 -> 250 MiB for one load, the serving thread
 * included) at no measurable cost in load time. The old generation keeps V8's default limit: a
 * 1 GiB one lowers a first load's peak by 80 MiB (V8 lets a heap grow 1.6x between full
 * collections under it, 4x under the default) but costs 0.6 s of it on one CPU, and a reload
 * collects as it goes instead (LoadRequest.reclaimEvery) to the same peak.
 */
const LOADER_YOUNG_GENERATION_MB = 4;

/** Loads off the serving thread; `signal` stops the worker (the plugin closed meanwhile). */
export function loadOffThread(req: LoadRequest, cfg: KubernetesConfig, signal?: AbortSignal): Promise<LoadedData> {
  if (!existsSync(workerFile)) return Promise.resolve().then(() => loadHere(req, cfg));
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('kubernetes plugin closed before its data loaded'));
    const worker = new Worker(workerFile, { workerData: req, resourceLimits: { maxYoungGenerationSizeMb: LOADER_YOUNG_GENERATION_MB } });
    signal?.addEventListener('abort', () => fail(new Error('kubernetes plugin closed before its data loaded')), { once: true });
    const assembler = new StoreAssembler(cfg);
    let head: Extract<LoaderMessage, { type: 'head' }> | undefined;
    let model: ClusterModel | undefined;
    let settled = false;
    let counted: ((n: number) => void) | undefined;
    const records = req.countRecords ? new Promise<number>((r) => (counted = r)) : undefined;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      reject(err);
    };
    const askNext = (): void => {
      // setImmediate: whatever I/O arrived while the last chunk was indexed is served first.
      setImmediate(() => {
        if (!settled) worker.postMessage('next');
      });
    };
    worker.on('message', (m: LoaderMessage) => {
      switch (m.type) {
        case 'head':
          head = m;
          askNext();
          return;
        case 'image':
          // Typed arrays arrive by transfer and are read in place: nothing to index here.
          assembler.addImage(m.image);
          askNext();
          return;
        case 'services':
          // Two strings and transferred offsets: a Service becomes an object when first asked for.
          assembler.addServices(m.services);
          askNext();
          return;
        case 'chunk':
          assembler.add(m.parts);
          askNext();
          return;
        case 'model':
          model = m.model;
          askNext();
          return;
        case 'records':
          counted?.(m.records);
          return;
        case 'end': {
          if (!head) return fail(new Error('kubernetes loader thread ended without data'));
          settled = true;
          // Without a count to wait for, the thread is done; with one it ends after posting it.
          if (!records) void worker.terminate();
          const { type: _head, ...summary } = head;
          resolve({ store: assembler.finish(model), ...summary, records, thread: 'worker' });
          return;
        }
        case 'error':
          if (m.findings) return fail(new ManifestError(m.findings));
          return fail(Object.assign(new Error(m.message ?? 'kubernetes loader thread failed'), { stack: m.stack }));
      }
    });
    worker.on('error', (err) => fail(err));
    worker.on('exit', (code) => {
      if (!settled) fail(new Error(`kubernetes loader thread exited (code ${code}) before it finished`));
    });
  });
}

function loadHere(req: LoadRequest, cfg: KubernetesConfig): LoadedData {
  const { model, findings, history } = loadManifests(req.paths, req.cluster, undefined, historyRequest(req));
  const store = KubernetesStore.fromModel(model, cfg, { retainModel: req.retainModel });
  return { store, ...loadSummary(model, findings, history), records: undefined, thread: 'main' };
}
