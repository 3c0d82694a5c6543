// Process-wide permission to run a large data load (the kubernetes plugin reading manifests
// into a new store). A load's peak is several times the memory of the data it builds, so
// `serve --workers N` must not run N of them at once: each worker asks the primary for a
// permit, which hands out a few at a time (`--worker-loads`), and the memory peak stays that of
// one load whatever N is. A process that is not a worker runs its loads at once. The gate is
// kept in the chain so the app installs it and plugins call it without importing each other.

/** Waits for a permit; resolves to the function that gives it back. */
export type LoadPermitGate = (what: string) => Promise<() => void>;

const immediate: LoadPermitGate = () => Promise.resolve(() => undefined);
let gate: LoadPermitGate = immediate;

/** Installs the process's gate (a worker's asks its primary); undefined restores "at once". */
export function setLoadPermitGate(next: LoadPermitGate | undefined): void {
  gate = next ?? immediate;
}

/** Runs `load` holding a permit, given back however the load ends. */
export async function withLoadPermit<T>(what: string, load: () => Promise<T>): Promise<T> {
  const release = await gate(what);
  try {
    return await load();
  } finally {
    release();
  }
}
