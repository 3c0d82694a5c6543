// `clusterdns diff` of large trees: each side loaded and listed on a thread of its own, the two at
// once. A side hands over its record sets as plain strings (diff-compute.ts SideListing), this
// thread finds the sets that differ, and only those are placed (object, file and line) by the
// side that holds the model: at 10k Services that is a few hundred sets of some 80,000.
import { existsSync, readdirSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { compare, type Delta, deltaOf, type DiffResult, type PlacedSet, resultOf, rowSet, type Side, type SideListing, snapshot } from './diff-compute.js';
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

/** Whether the manifest files under `paths` hold more than `limit` bytes (the walk stops once they do). */
function largerThan(paths: readonly string[], limit: number): boolean {
  let total = 0;
  const walk = (p: string): boolean => {
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      return false;
    }
    if (st.isFile()) return (total += st.size) > limit;
    if (!st.isDirectory()) return false;
    for (const e of readdirSync(p)) if (walk(path.join(p, e))) return true;
    return false;
  };
  return paths.some(walk);
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

/** The sets the new side places: what was added and what changed. */
const placedNewKeys = (delta: Delta): string[] => [...delta.added, ...delta.changed];

/** A listing's rows by key: [head, body]. */
function rowsByKey(listing: SideListing): Map<string, readonly [string, string]> {
  const out = new Map<string, readonly [string, string]>();
  const r = listing.rows;
  for (let i = 0; i < r.length; i += 3) out.set(r[i]!, [r[i + 1]!, r[i + 2]!]);
  return out;
}

/**
 * The diff of two sides: on a thread per side when either side's manifests are large (and the
 * compiled worker is there: not under a TypeScript runner), else in this thread. Both ways give
 * the same result (test/cli/diff-threads.test.ts).
 */
export async function diffSides(before: Side, after: Side, flags: ClusterFlags, labels: { old: string; new: string }, sameFiles: boolean): Promise<DiffResult> {
  const threaded = existsSync(sideWorker) && (largerThan(before.manifests, THREAD_BYTES) || largerThan(after.manifests, THREAD_BYTES));
  if (!threaded) {
    const [a, b] = await Promise.all([snapshot(before, flags), snapshot(after, flags)]);
    return compare(a, b, labels, sameFiles);
  }
  const old = new SideThread(before, flags);
  const now = new SideThread(after, flags);
  try {
    const [a, b] = await Promise.all([old.listing, now.listing]);
    const was = rowsByKey(a);
    const is = rowsByKey(b);
    const delta = deltaOf(was, is, (x, y) => x[1] === y[1]);
    const [oldOrigins, newOrigins] = await Promise.all([old.originsOf(delta.removed), now.originsOf(placedNewKeys(delta))]);
    const placed = { old: new Map<string, Origin>(), new: new Map<string, Origin>() };
    const placedNew = placedNewKeys(delta);
    for (let i = 0; i < delta.removed.length; i++) placed.old.set(delta.removed[i]!, oldOrigins[i]!);
    for (let i = 0; i < placedNew.length; i++) placed.new.set(placedNew[i]!, newOrigins[i]!);
    const set = (side: 'old' | 'new', key: string): PlacedSet => {
      const [head, body] = (side === 'old' ? was : is).get(key)!;
      // A changed set's old data is shown with its new place; its old place is not asked for.
      const origin = placed[side].get(key) ?? { namespace: '' };
      return { ...rowSet(head, body), origin };
    };
    return resultOf(delta, set, { old: a.findings, new: b.findings }, labels, sameFiles);
  } finally {
    old.close();
    now.close();
  }
}
