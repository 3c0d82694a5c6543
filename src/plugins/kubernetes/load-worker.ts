// The kubernetes plugin's loader thread: reads the manifests, builds the cluster model and the
// store's parts, counts the records, and hands the parts to the serving thread a message at a
// time, each when asked for ('next'), so the serving thread deserialises a little, answers
// queries, and asks again. The service slices and reverse index go as one image whose buffers
// are transferred (slice-image.ts), the Services as one text (service-table.ts); the rest goes
// in chunks. The parse garbage of a large cluster stays in this thread's heap and goes when the
// thread ends.
import { setPriority } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { loadManifests } from '../../cluster/load.js';
import { ManifestError } from '../../cluster/model.js';
import { parseKubernetes } from './setup.js';
import { StoreAssembler, storeImage } from './store.js';
import { imageBuffers, type SliceImage } from './slice-image.js';
import { serviceImageBuffers, type ServiceImage } from './service-table.js';
import { countRecords, KubernetesPlugin } from './plugin.js';
import { chunkParts, historyRequest, loadSummary, type LoadRequest, type LoaderMessage } from './loader-protocol.js';
import { emptyResponse } from '../../chain/plugin.js';
import { Rcode } from '../../dns/records.js';

const port = parentPort!;
const req = workerData as LoadRequest;

// Loading is background work: where the serving thread and this one share a CPU (a pod with one
// CPU, a pinned process), the scheduler should run the serving thread first. On Linux a nice
// value belongs to a thread, and this call sets this thread's only.
try {
  setPriority(19);
} catch {
  // Not permitted here: the load just competes as an equal.
}

let counter: (() => number) | undefined;

/** Texts of this size and more are collected as soon as the reader lets them go. */
const TEXT_WORTH_COLLECTING = 8 * 1024 * 1024;

/**
 * A full collection of this thread's heap, for reloads (LoadRequest.reclaimEvery), also once a
 * large text has gone. `gc` is made visible to a new context only: exposing it is the one V8 flag
 * that is safe to set at run time, and it changes nothing for the serving thread.
 */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function run(): LoaderMessage[] {
  const cfg = parseKubernetes(req.directive, req.zones);
  const reclaim = req.reclaimEvery > 0 ? collector() : undefined;
  // A JSON List's text (41 MB for 100k endpoints) goes before its items are read; V8 would let
  // it lie until the heap grew to several times what is alive, so it is collected then, when
  // little else is.
  const onTextGone = (bytes: number): void => {
    if (bytes >= TEXT_WORTH_COLLECTING) reclaim?.();
  };
  const { model, findings, history } = loadManifests(
    req.paths,
    req.cluster,
    reclaim ? { every: req.reclaimEvery, onObjects: reclaim, onTextGone } : undefined,
    historyRequest(req),
  );
  // The parse garbage goes before the store is built on top of the model.
  reclaim?.();
  const { parts, image, services } = storeImage(model, cfg);
  if (req.countRecords) {
    // The image's buffers go to the serving thread, so the count reads a copy of it.
    const copy: SliceImage = structuredClone(image);
    const servicesCopy: ServiceImage = structuredClone(services);
    // The records gauge counts what a zone transfer of each forward zone lists (SOA once).
    counter = () => {
      const a = new StoreAssembler(cfg);
      a.add(parts);
      a.addServices(servicesCopy);
      a.addImage(copy);
      const store = a.finish();
      return countRecords(new KubernetesPlugin(cfg, store, { lookup: async () => emptyResponse(Rcode.SERVFAIL), localAddresses: () => req.localAddresses }, req.paths));
    };
  }
  const out: LoaderMessage[] = [{ type: 'head', ...loadSummary(model, findings, history) }, { type: 'image', image }, { type: 'services', services }];
  for (const chunk of chunkParts(parts, req.chunkWeight)) out.push({ type: 'chunk', parts: chunk });
  if (req.retainModel) out.push({ type: 'model', model });
  out.push({ type: 'end' });
  return out;
}

let queue: LoaderMessage[];
try {
  queue = run();
} catch (err) {
  queue = [
    err instanceof ManifestError
      ? { type: 'error', findings: [...err.findings] }
      : { type: 'error', message: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined },
  ];
}
port.postMessage(queue.shift());
port.on('message', (m: unknown) => {
  if (m !== 'next') return;
  const next = queue.shift();
  // The image's buffers are moved, not copied: the serving thread reads them in place.
  if (next) port.postMessage(next, next.type === 'image' ? imageBuffers(next.image) : next.type === 'services' ? serviceImageBuffers(next.services) : []);
  if (queue.length > 0) return;
  // The data is handed over; the count comes after it, unasked.
  if (next?.type === 'end' && counter) port.postMessage({ type: 'records', records: counter() } satisfies LoaderMessage);
  port.close();
});
