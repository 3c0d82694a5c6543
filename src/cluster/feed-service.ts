// The loader side of a manifest feed: holds the ManifestFeed and the model of its last load, runs
// a load when asked ('load'), and builds every subscribed view after it, handing each over a part
// at a time as the serving thread asks ('next'). Runs in the feed's loader thread
// (feed-worker.ts), or in the serving thread itself over a MessageChannel where no compiled
// worker file exists (tests running the TypeScript sources): the same messages either way.
import { ManifestFeed } from './feed.js';
import type { FeedInit, FeedSummary, FromFeed, ToFeed, ViewBuilder } from './feed-protocol.js';
import type { ClusterModel } from './model/model.js';
import { ManifestError } from './model/finding.js';

export interface FeedPort {
  postMessage(m: FromFeed, transfer?: readonly ArrayBuffer[]): void;
  on(event: 'message', listener: (m: ToFeed) => void): unknown;
}

export interface FeedServiceOptions {
  /** The view builder a module exports (`buildView`). */
  readonly builder: (module: string) => Promise<ViewBuilder>;
  /**
   * A full collection of this thread's heap, where one may be run (the loader thread): during a
   * reload, every `every` objects read and once a large text has gone, so the peak memory of a
   * reload stays near what is kept.
   */
  readonly reclaim?: {
    readonly collect: () => void;
    /** The collection once a load is handed over and the thread is quiet (compacting). */
    readonly settle?: () => void;
    readonly every: number;
    readonly textBytes: number;
  };
  /** Called around a load and the views built after it (the loader thread lowers its priority). */
  readonly priority?: { readonly loading: () => void; readonly idle: () => void };
}

/** Quiet time after a load before the settling collection. */
const SETTLE_MS = 1000;

interface View {
  readonly builder: ViewBuilder;
  readonly args: unknown;
  gen: number;
  parts: Iterator<{ part: unknown; transfer?: readonly ArrayBuffer[] }> | undefined;
  after: (() => unknown) | undefined;
}

export function serveFeed(port: FeedPort, init: FeedInit, opts: FeedServiceOptions): void {
  let reclaiming = false;
  const reclaim = opts.reclaim;
  let objects = 0;
  const feed = new ManifestFeed(init.paths, {
    cluster: init.cluster,
    history: init.cluster.admissionHistoryBytes !== undefined ? { budgetBytes: init.cluster.admissionHistoryBytes } : {},
    ...(reclaim
      ? {
          progress: {
            every: 1000,
            onObjects: () => {
              objects += 1000;
              if (reclaiming && objects % reclaim.every < 1000) reclaim.collect();
            },
            onTextGone: (bytes: number) => {
              if (reclaiming && bytes >= reclaim.textBytes) reclaim.collect();
            },
          },
        }
      : {}),
  });
  const views = new Map<number, View>();
  let loaded: { model: ClusterModel; summary: FeedSummary } | undefined;
  let loads = 0;
  let gens = 0;

  const build = (id: number, view: View): void => {
    if (!loaded) return;
    view.gen = loaded.summary.gen;
    try {
      const out = view.builder(loaded, view.args);
      view.parts = out.parts[Symbol.iterator]();
      view.after = out.after;
    } catch (err) {
      view.parts = undefined;
      port.postMessage({ type: 'view-failed', id, gen: view.gen, ...errorText(err) });
      return;
    }
    pump(id, view);
  };

  const pump = (id: number, view: View): void => {
    if (!view.parts) return;
    let next: IteratorResult<{ part: unknown; transfer?: readonly ArrayBuffer[] }>;
    try {
      next = view.parts.next();
    } catch (err) {
      view.parts = undefined;
      port.postMessage({ type: 'view-failed', id, gen: view.gen, ...errorText(err) });
      return;
    }
    if (!next.done) {
      port.postMessage({ type: 'part', id, gen: view.gen, part: next.value.part }, next.value.transfer ?? []);
      return;
    }
    view.parts = undefined;
    port.postMessage({ type: 'end', id, gen: view.gen });
    const after = view.after;
    view.after = undefined;
    const gen = view.gen;
    // Queued behind whatever arrived meanwhile: a newer load makes this count moot.
    if (after) enqueue(() => {
      if (views.get(id) !== view || view.gen !== gen || loaded?.summary.gen !== gen) return;
      try {
        port.postMessage({ type: 'after', id, gen, value: after() });
      } catch {
        // Only a gauge depends on it; the view itself was handed over.
      }
    });
  };

  const load = (req: number, reclaimNow: boolean): void => {
    opts.priority?.loading();
    try {
      loadNow(req, reclaimNow);
    } finally {
      opts.priority?.idle();
    }
  };

  const loadNow = (req: number, reclaimNow: boolean): void => {
    reclaiming = reclaimNow && reclaim !== undefined;
    objects = 0;
    let summary: FeedSummary;
    let model: ClusterModel;
    try {
      const result = loads++ === 0 ? feed.load() : feed.reload();
      model = result.model;
      summary = {
        gen: ++gens,
        findings: result.findings,
        objectCount: model.objectCount,
        rejected: model.rejected?.length ?? 0,
        ignoredKinds: model.ignoredKinds ? Object.fromEntries(model.ignoredKinds) : {},
        pods: model.pods.length,
        endpointSlices: model.endpointSlices.length,
        reread: result.reread.length,
        full: result.full,
        timings: result.timings,
      };
    } catch (err) {
      if (err instanceof ManifestError) port.postMessage({ type: 'failed', req, findings: [...err.findings] });
      else port.postMessage({ type: 'failed', req, ...errorText(err) });
      return;
    } finally {
      reclaiming = false;
    }
    loaded = undefined; // the last model goes before the views of this one are built
    // After a full read the parse garbage goes before the views are built on top of the model;
    // a reload that read a few files leaves little, and a full collection of what the feed
    // keeps would cost more than it gives back.
    if (reclaimNow && summary.full) reclaim?.collect();
    loaded = { model, summary };
    port.postMessage({ type: 'loaded', req, summary });
    for (const [id, view] of views) build(id, view);
    settleLater();
  };

  // This thread outlives its loads: once a load's views are handed over and nothing else came,
  // one full collection gives back what the load left (a first load's parse garbage, the last
  // model), instead of holding the heap at its peak for as long as the server runs.
  let settle: NodeJS.Timeout | undefined;
  const settleLater = (): void => {
    if (!reclaim) return;
    if (settle) clearTimeout(settle);
    settle = setTimeout(() => {
      settle = undefined;
      const busy = [...views.values()].some((v) => v.parts !== undefined);
      if (busy) settleLater();
      else
        enqueue(() => {
          // Background work like a load: at a load's priority, where the serving thread shares the CPU.
          opts.priority?.loading();
          try {
            (reclaim.settle ?? reclaim.collect)();
          } finally {
            opts.priority?.idle();
          }
        });
    }, SETTLE_MS);
    settle.unref();
  };

  let queue: Promise<void> = Promise.resolve();
  const enqueue = (task: () => void | Promise<void>): void => {
    queue = queue.then(task).catch(() => undefined);
  };

  port.on('message', (m: ToFeed) => {
    switch (m.type) {
      case 'load':
        enqueue(() => load(m.req, m.reclaim));
        return;
      case 'view':
        enqueue(async () => {
          let builder: ViewBuilder;
          try {
            builder = await opts.builder(m.module);
          } catch (err) {
            port.postMessage({ type: 'view-failed', id: m.id, gen: loaded?.summary.gen ?? 0, ...errorText(err) });
            return;
          }
          const view: View = { builder, args: m.args, gen: 0, parts: undefined, after: undefined };
          views.set(m.id, view);
          build(m.id, view);
        });
        return;
      case 'drop':
        enqueue(() => void views.delete(m.id));
        return;
      case 'next':
        enqueue(() => {
          const view = views.get(m.id);
          if (view && view.gen === m.gen) pump(m.id, view);
        });
        return;
    }
  });
}

function errorText(err: unknown): { message: string; stack?: string } {
  return err instanceof Error ? { message: err.message, ...(err.stack ? { stack: err.stack } : {}) } : { message: String(err) };
}
