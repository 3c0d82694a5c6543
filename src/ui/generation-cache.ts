// A value made from the loaded manifests (the records JSON, the diff), once per load generation
// and shared by every request of it. At 10k Services one is made in seconds while a reload takes
// about as long: runs go one at a time, and generations that pass while one runs are skipped (a
// burst of reloads costs one more run, not one each, nor several at once).

interface Entry<T> {
  readonly generation: number;
  readonly value: Promise<T>;
  resolve(v: T | Promise<T>): void;
  reject(e: unknown): void;
  started: boolean;
}

function entry<T>(generation: number): Entry<T> {
  let resolve!: (v: T | Promise<T>) => void;
  let reject!: (e: unknown) => void;
  const value = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // The callers handle the failure; an entry no one waits on must not be an unhandled rejection.
  value.catch(() => {});
  return { generation, value, resolve, reject, started: false };
}

/**
 * `get()` gives the value of the generation `current()` says, made by `make(generation)` unless a
 * run for it is under way or done. A caller waiting for a generation that was skipped gets the
 * newer one's value. A failed run is not kept: the next `get()` tries again.
 */
export function generationCache<T>(current: () => number, make: (generation: number) => Promise<T>): () => Promise<T> {
  let newest: Entry<T> | undefined;
  let running = false;
  const pump = (): void => {
    const e = newest;
    if (running || !e || e.started) return;
    e.started = true;
    running = true;
    let out: Promise<T>;
    try {
      out = make(e.generation);
    } catch (err) {
      out = Promise.reject(err);
    }
    out.then(
      (v) => e.resolve(v),
      (err: unknown) => {
        if (newest === e) newest = undefined;
        e.reject(err);
      },
    );
    void out
      .catch(() => {})
      .finally(() => {
        running = false;
        pump();
      });
  };
  return () => {
    const generation = current();
    if (newest?.generation === generation) return newest.value;
    const next = entry<T>(generation);
    // Not started yet: its callers take the newer value instead.
    if (newest && !newest.started) newest.resolve(next.value);
    newest = next;
    pump();
    return next.value;
  };
}
