// Stores shared across a reload. A Corefile reload (SIGHUP, SIGUSR1, the reload plugin) builds
// every plugin again; when a kubernetes block is configured as before and its manifest files
// are unchanged (list, sizes, modification times), the new plugin takes the store the running
// one serves instead of loading the same data again. Each plugin acquires its slot at setup and
// releases it on close, so a slot lives as long as some plugin uses it (as etcd mirrors do).
import type { AdmissionHistory } from '../../cluster/history.js';
import type { KubernetesStore } from './store.js';

export interface SharedSlot {
  store?: KubernetesStore;
  /** Manifest files the store was loaded from (watch.ts fingerprint). */
  fingerprint?: string;
  /** Objects and records of that load, for the load gauges. */
  objects?: number;
  records?: number;
  /** Objects that load left out (the API server would reject them). */
  rejected?: number;
  /** What that load read: the next load keeps a rejected object's previous version from it. */
  history?: AdmissionHistory;
}

const slots = new Map<string, { slot: SharedSlot; refs: number }>();

export function acquireShared(id: string): { slot: SharedSlot; release: () => void } {
  let entry = slots.get(id);
  if (!entry) {
    entry = { slot: {}, refs: 0 };
    slots.set(id, entry);
  }
  entry.refs++;
  const e = entry;
  let released = false;
  return {
    slot: e.slot,
    release: () => {
      if (released) return;
      released = true;
      if (--e.refs === 0) slots.delete(id);
    },
  };
}

/** What makes two kubernetes blocks load the same data: the directive (not where it is written), zones, options. */
export function sharedId(parts: unknown): string {
  return JSON.stringify(parts, (k, v) => (k === 'file' || k === 'line' ? undefined : v));
}
