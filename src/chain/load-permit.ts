// Permission to run a large data load (the kubernetes plugin reading manifests into a new store).
// A load's peak is several times the memory of the data it builds, so `serve --workers N` must
// not run N of them at once: each worker asks the primary for a permit, which hands out a few at
// a time (`--worker-loads`), and the memory peak stays that of one load whatever N is. An App that
// is not a worker's runs its loads at once. The gate is an App option (AppOptions.loadPermitGate)
// that plugins reach through BlockContext.withLoadPermit, so they need not import each other.

/** Waits for a permit; resolves to the function that gives it back. */
export type LoadPermitGate = (what: string) => Promise<() => void>;

/** No waiting: every load runs at once. */
export const immediateGate: LoadPermitGate = () => Promise.resolve(() => undefined);

/** Runs `load` holding a permit of `gate`, given back however the load ends. */
export async function withLoadPermit<T>(gate: LoadPermitGate, what: string, load: () => Promise<T>): Promise<T> {
  const release = await gate(what);
  try {
    return await load();
  } finally {
    release();
  }
}
