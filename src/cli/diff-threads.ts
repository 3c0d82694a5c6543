// `clusterdns diff` of large trees whose sides cannot be diffed by reload (diff-reload.ts): each
// side loaded and listed on a thread of its own, the two at once. A side hands over its record
// sets as plain strings (diff-compute.ts SideListing), the caller finds the sets that differ, and
// only those are placed (object, file and line) by the side that holds the model.
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { collectManifestFiles } from '../cluster/read/files.js';
import type { ListedSide, Side, SideListing } from './diff-compute.js';
import type { Origin } from './diff-provenance.js';
import type { ClusterFlags } from './options.js';

/** What a side's thread is asked: the places of these sets. */
export interface ToSide {
  readonly keys: readonly string[];
}

export type FromSide =
  | { readonly type: 'listing'; readonly listing: SideListing }
  | { readonly type: 'origins'; readonly origins: Origin[] }
  | { readonly type: 'error'; readonly message: string };

const sideWorker = fileURLToPath(new URL('./diff-side-worker.js', import.meta.url));

/**
 * Manifests smaller than this are diffed in this thread: a thread's start (the modules loaded
 * again, about half a second of CPU) costs more than the listing it would overlap.
 */
const THREAD_BYTES = 1 << 20;

/** Whether the manifest files the loader reads under `paths` hold more than `limit` bytes. */
function largerThan(paths: readonly string[], limit: number): boolean {
  let total = 0;
  for (const file of collectManifestFiles(paths, [])) if ((total += statSync(file, { throwIfNoEntry: false })?.size ?? 0) > limit) return true;
  return false;
}

/** One side's thread: its listing, then the origins it is asked for; ended by close(). */
class SideThread {
  private readonly worker: Worker;
  private pending: { resolve: (m: FromSide) => void; reject: (e: Error) => void } | undefined;
  private failure: Error | undefined;
  readonly listing: Promise<SideListing>;

  constructor(side: Side, flags: ClusterFlags) {
    this.worker = new Worker(sideWorker, { workerData: { side, flags } });
    this.worker.on('message', (m: FromSide) => {
      const p = this.pending;
      this.pending = undefined;
      if (m.type === 'error') p?.reject(new Error(m.message));
      else p?.resolve(m);
    });
    const fail = (e: Error): void => {
      this.failure ??= e;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(e);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the diff thread exited (code ${code})`)));
    this.listing = this.next().then((m) => {
      if (m.type !== 'listing') throw new Error('the diff thread answered out of turn');
      return m.listing;
    });
  }

  private next(): Promise<FromSide> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
    });
  }

  async originsOf(keys: readonly string[]): Promise<Origin[]> {
    const answer = this.next();
    this.worker.postMessage({ keys } satisfies ToSide);
    const m = await answer;
    if (m.type !== 'origins') throw new Error('the diff thread answered out of turn');
    return m.origins;
  }

  close(): void {
    void this.worker.terminate();
  }
}

/** Whether either side's manifests are large enough for threads (and the compiled worker is there: not under a TypeScript runner). */
export function threadsWorthIt(before: Side, after: Side): boolean {
  return existsSync(sideWorker) && (largerThan(before.manifests, THREAD_BYTES) || largerThan(after.manifests, THREAD_BYTES));
}

/** Each side loaded and listed on a thread of its own, the two at once; the threads end when the returned sides are closed. */
export async function listOnThreads(before: Side, after: Side, flags: ClusterFlags): Promise<{ old: ListedSide; new: ListedSide; close(): void }> {
  const old = new SideThread(before, flags);
  const now = new SideThread(after, flags);
  const close = (): void => {
    old.close();
    now.close();
  };
  try {
    const [a, b] = await Promise.all([old.listing, now.listing]);
    return {
      old: { listing: a, originsOf: (keys) => old.originsOf(keys) },
      new: { listing: b, originsOf: (keys) => now.originsOf(keys) },
      close,
    };
  } catch (e) {
    close();
    throw e;
  }
}
