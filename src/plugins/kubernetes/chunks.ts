// The kubernetes store's parts cut into chunks for the handover to the serving thread (view.ts),
// each about as much indexing as the serving thread should do between two turns of its loop.
import type { StoreParts } from './store.js';

/** Entries per chunk: about 1-3 ms of indexing on the serving thread each. */
export const DEFAULT_CHUNK_WEIGHT = 2000;

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
