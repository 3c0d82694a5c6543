// The feed's loader thread (feed-thread.ts starts it): serves one ManifestFeed (feed-service.ts)
// for the life of the feed, so a reload reads only the files that changed, and builds the views
// the serving thread subscribed, loading each view's builder module when first asked.
import { setPriority } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import type { FeedInit, ViewBuilder } from './feed-protocol.js';
import { type FeedPort, serveFeed } from './feed-service.js';

/**
 * Loading is background work: where the serving thread and this one share a CPU (a pod with one
 * CPU, a pinned process), the scheduler should run the serving thread first. On Linux a nice
 * value belongs to a thread, and setPriority sets this thread's only. But this thread lives as
 * long as the feed, and a process's exit waits for it to end: at nice 19 on a busy machine that
 * took seconds. So where the thread may lower its nice value again (CAP_SYS_NICE), it is 19 while
 * a load runs and 0 between loads; elsewhere it stays at 10, between the two.
 */
function priorities(): { loading: () => void; idle: () => void } {
  const set = (n: number): boolean => {
    try {
      setPriority(n);
      return true;
    } catch {
      return false;
    }
  };
  if (set(1) && set(0)) return { loading: () => void set(19), idle: () => void set(0) };
  set(10);
  return { loading: () => undefined, idle: () => undefined };
}

/**
 * A full collection of this thread's heap. `gc` is made visible to a new context only: exposing
 * it is the one V8 flag that is safe to set at run time, and it changes nothing for the serving
 * thread.
 */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Objects read between collections of a reload: on 20k objects (100k endpoints) every 5000 kept
 * the load's peak RSS about 35 MiB lower for about 0.2 s more load time. A JSON List's text
 * (41 MB for 100k endpoints) goes before its items are read; V8 would let it lie until the heap
 * grew to several times what is alive, so texts of 8 MiB and more are collected once they go.
 */
const RECLAIM = { every: 5000, textBytes: 8 * 1024 * 1024 };

/**
 * The settling collection once a load's views are handed over: a full collection that also
 * compacts every page. A first load leaves the kept objects spread thin over pages it filled
 * with parse garbage, and V8's heuristics compact only the most fragmented ones: on 10k Services
 * with 100k endpoints, 59 MiB alive held 131 MiB of heap (182 MiB RSS) after a plain full
 * collection, 93 MiB (143 MiB RSS) after a compacting one. The flag is read when a collection
 * starts and is cleared again at once; a serving-thread collection in between compacts more,
 * which costs it time, not correctness.
 */
function compactingCollector(collect: () => void): () => void {
  return () => {
    setFlagsFromString('--compact-on-every-full-gc');
    try {
      collect();
    } finally {
      setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

const builders = new Map<string, Promise<ViewBuilder>>();
const builder = (module: string): Promise<ViewBuilder> => {
  let b = builders.get(module);
  if (!b) {
    b = import(module).then((m: { buildView?: ViewBuilder }) => {
      if (typeof m.buildView !== 'function') throw new Error(`${module} exports no buildView`);
      return m.buildView;
    });
    builders.set(module, b);
  }
  return b;
};

const collect = collector();
serveFeed(parentPort as unknown as FeedPort, workerData as FeedInit, {
  builder,
  reclaim: { collect, settle: compactingCollector(collect), ...RECLAIM },
  priority: priorities(),
});
