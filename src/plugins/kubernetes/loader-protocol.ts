// What the kubernetes plugin's loader thread (load-worker.ts) and the serving thread
// (loader.ts) say to each other.
import type { Directive } from '../../chain/corefile.js';
import type { ClusterModel, ClusterOptions, Finding } from '../../cluster/model.js';
import type { AdmissionHistory } from '../../cluster/history.js';
import type { HistoryRequest } from '../../cluster/load.js';
import type { SliceImage } from './slice-image.js';
import type { StoreParts } from './store.js';
import type { ServiceImage } from './service-table.js';

export interface LoadRequest {
  paths: string[];
  cluster: ClusterOptions;
  /** The plugin's Corefile directive: the thread parses its own config (it holds functions). */
  directive: Directive;
  zones: string[];
  /** Non-loopback bound addresses, for the NS records the records count includes. */
  localAddresses: string[];
  retainModel: boolean;
  /**
   * Count the records (clusterdns_records_loaded): a full zone walk, done after the data is
   * handed over so it never delays the first answer; only when something exports the gauge.
   */
  countRecords: boolean;
  /** Rough size of one chunk (entries, an endpoint address counting as one). */
  chunkWeight: number;
  /**
   * Collect the loader thread's garbage every this many objects read, and once before the store
   * is built (0: never). Set when a store is already serving beside this load (a reload), where
   * the peak memory is both; a first load leaves it to V8 and answers sooner.
   */
  reclaimEvery: number;
  /** What the previous load read (a rejected object's previous version stays served); absent at start. */
  history?: AdmissionHistory;
}

/** What a load reports besides the store (the loader thread's `head` message). */
export interface LoadSummary {
  findings: Finding[];
  objectCount: number;
  /** Objects left out because the API server would reject them. */
  rejected: number;
  /** What this load read, for the next load of the same plugin. */
  history?: AdmissionHistory;
  ignoredKinds: Record<string, number>;
  pods: number;
  endpointSlices: number;
}

export function loadSummary(model: ClusterModel, findings: readonly Finding[], history?: AdmissionHistory): LoadSummary {
  return {
    ...(history ? { history } : {}),
    findings: [...findings],
    objectCount: model.objectCount,
    rejected: model.rejected?.length ?? 0,
    ignoredKinds: model.ignoredKinds ? Object.fromEntries(model.ignoredKinds) : {},
    pods: model.pods.length,
    endpointSlices: model.endpointSlices.length,
  };
}

export type LoaderMessage =
  | ({ type: 'head' } & LoadSummary)
  /** The service slices and reverse index, its buffers transferred (slice-image.ts). */
  | { type: 'image'; image: SliceImage }
  /** The Services as text, the offsets transferred (service-table.ts). */
  | { type: 'services'; services: ServiceImage }
  | { type: 'chunk'; parts: Partial<StoreParts> }
  | { type: 'model'; model: ClusterModel }
  | { type: 'end' }
  | { type: 'records'; records: number }
  | { type: 'error'; findings?: Finding[]; message?: string; stack?: string };

/**
 * What one Service (or ServiceImport) weighs against an endpoint address: a dozen fields and
 * arrays to clone in, measured at about 3.5 us each on the serving thread, 2000 to a chunk being
 * 7 ms where the other entries take 1-3.
 */
const OBJECT_WEIGHT = 4;

/** Splits parts into pieces of about `weight` entries each (a slice weighs its addresses). */
export function* chunkParts(parts: Omit<StoreParts, 'slices' | 'services'> & Partial<StoreParts>, weight: number): Generator<Partial<StoreParts>> {
  yield { namespaces: parts.namespaces, serial: parts.serial };
  const lists = ['services', 'slices', 'imports', 'importSlices', 'serviceByIp', 'podsByIp'] as const;
  for (const field of lists) {
    const list = (parts[field] ?? []) as unknown[];
    let start = 0;
    let w = 0;
    for (let i = 0; i < list.length; i++) {
      w += field === 'services' || field === 'imports' ? OBJECT_WEIGHT : weigh(list[i]);
      if (w >= weight) {
        yield { [field]: list.slice(start, i + 1) } as Partial<StoreParts>;
        start = i + 1;
        w = 0;
      }
    }
    if (start < list.length) yield { [field]: list.slice(start) } as Partial<StoreParts>;
  }
}

function weigh(entry: unknown): number {
  const value = (entry as [string, unknown])[1];
  if (!Array.isArray(value)) return 1;
  let n = 1;
  for (const v of value) n += (v as { addresses?: unknown[] }).addresses?.length ?? 1;
  return n;
}

/** The admission history a load reads and keeps (cluster/history.ts). */
export function historyRequest(req: LoadRequest): HistoryRequest {
  const budget = req.cluster.admissionHistoryBytes;
  return { ...(req.history ? { previous: req.history } : {}), ...(budget !== undefined ? { budgetBytes: budget } : {}) };
}
