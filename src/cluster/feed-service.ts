// The loader side of a manifest feed: holds the ManifestFeed and the model of its last load, runs
// a load when asked ('load'), and builds every subscribed view after it, handing each over a part
// at a time as the serving thread asks ('next'). Runs in the feed's loader thread
// (feed-worker.ts), or in the serving thread itself over a MessageChannel where no compiled
// worker file exists (tests running the TypeScript sources): the same messages either way.
import { serialize } from 'node:v8';
import { type FeedResult, ManifestFeed } from './feed.js';
import { FeedImage, type ImageContent } from './feed-image.js';
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

/** Quiet time after a load before the settling collection (and the image's write). */
const SETTLE_MS = 1000;

type Part = { part: unknown; transfer?: readonly ArrayBuffer[]; raw?: Uint8Array };

interface View {
  readonly builder: ViewBuilder;
  readonly args: unknown;
  /** Builder module and args: the view's name in an image. */
  readonly key: string;
  gen: number;
  parts: Iterator<Part> | undefined;
  after: (() => unknown) | undefined;
  /**
   * This build's parts for the image, as handed over: bytes for a part whose buffers were moved
   * (serialized before they go), the part itself for one copied (serialized when the image is
   * written, once the thread is quiet).
   */
  record: { gen: number; parts: ({ bytes: Uint8Array } | { ref: unknown })[]; done: boolean; after?: { value: unknown } } | undefined;
}

export function serveFeed(port: FeedPort, init: FeedInit, opts: FeedServiceOptions): void {
  let reclaiming = false;
  const reclaim = opts.reclaim;
  let objects = 0;
  const feed = new ManifestFeed(init.paths, {
    cluster: init.cluster,
    ...(init.cluster.admissionHistory === false
      ? {}
      : { history: init.cluster.admissionHistoryBytes !== undefined ? { budgetBytes: init.cluster.admissionHistoryBytes } : {} }),
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
  const image = init.cluster.image
    ? new FeedImage(init, init.cluster.image, (detail, message) => port.postMessage({ type: 'warn', detail, message }))
    : undefined;
  const views = new Map<number, View>();
  let loaded: { model: ClusterModel; summary: FeedSummary } | undefined;
  /**
   * The image the first load was handed over from, until a load of the files (run once the
   * thread is quiet) gives the feed its kept reads and a model for views the image lacks.
   */
  let imaged: { summary: FeedSummary; content: ImageContent } | undefined;
  /** The load whose image was written (or read): not written again. */
  let imageGen = 0;
  let loads = 0;
  let gens = 0;
  const currentGen = (): number | undefined => loaded?.summary.gen ?? imaged?.summary.gen;

  const build = (id: number, view: View): void => {
    view.record = undefined;
    if (!loaded) {
      const from = imaged?.content.views.get(view.key);
      if (!imaged) return;
      if (!from) {
        // A view the image lacks: the load it needs runs now instead of when quiet.
        enqueue(() => warmUp());
        return;
      }
      view.gen = imaged.summary.gen;
      view.parts = from.parts.map((raw): Part => ({ part: undefined, raw }))[Symbol.iterator]();
      const after = from.after;
      view.after = after ? () => after.value : undefined;
      pump(id, view);
      return;
    }
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
    if (image) view.record = { gen: view.gen, parts: [], done: false };
    pump(id, view);
  };

  /** One part to the serving thread; for the image, its bytes or the part itself, as View.record says. */
  const post = (id: number, view: View, { part, transfer, raw }: Part): void => {
    if (raw) {
      // Its own buffer, moved: posting a view into the image's bytes would copy all of them
      // (and Buffer#slice is such a view, not a copy).
      const own = new Uint8Array(raw);
      port.postMessage({ type: 'part', id, gen: view.gen, part: own, raw: true }, [own.buffer]);
      return;
    }
    const record = view.record;
    if (record) {
      try {
        record.parts.push(transfer && transfer.length > 0 ? { bytes: serialize(part) } : { ref: part });
      } catch {
        view.record = undefined; // not storable: no image of this load
      }
    }
    port.postMessage({ type: 'part', id, gen: view.gen, part }, transfer ?? []);
  };

  const pump = (id: number, view: View): void => {
    if (!view.parts) return;
    let next: IteratorResult<Part>;
    try {
      next = view.parts.next();
    } catch (err) {
      view.parts = undefined;
      view.record = undefined;
      port.postMessage({ type: 'view-failed', id, gen: view.gen, ...errorText(err) });
      return;
    }
    if (!next.done) {
      try {
        post(id, view, next.value);
      } catch (err) {
        // Never left unanswered: the serving thread would wait for this part for ever.
        view.parts = undefined;
        view.record = undefined;
        port.postMessage({ type: 'view-failed', id, gen: view.gen, ...errorText(err) });
      }
      return;
    }
    view.parts = undefined;
    if (view.record) view.record.done = true;
    port.postMessage({ type: 'end', id, gen: view.gen });
    const after = view.after;
    view.after = undefined;
    const gen = view.gen;
    // Queued behind whatever arrived meanwhile: a newer load makes this count moot.
    if (after)
      enqueue(() => {
        if (views.get(id) !== view || view.gen !== gen || currentGen() !== gen) return;
        try {
          const value = after();
          if (view.record?.gen === gen) view.record.after = { value };
          port.postMessage({ type: 'after', id, gen, value });
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

  const summarize = (result: FeedResult, gen: number): FeedSummary => ({
    gen,
    findings: result.findings,
    objectCount: result.model.objectCount,
    rejected: result.model.rejected?.length ?? 0,
    ignoredKinds: result.model.ignoredKinds ? Object.fromEntries(result.model.ignoredKinds) : {},
    pods: result.model.pods.length,
    endpointSlices: result.model.endpointSlices.length,
    reread: result.reread.length,
    full: result.full,
    timings: result.timings,
  });

  /** The first load, from the image when it stands for the files as they are and holds every view. */
  const fromImage = (req: number): boolean => {
    const t0 = performance.now();
    const content = image?.read();
    if (!content) return false;
    const checkMs = performance.now() - t0;
    for (const v of views.values()) if (!content.views.has(v.key)) return false;
    const summary: FeedSummary = {
      ...content.summary,
      gen: ++gens,
      reread: 0,
      full: false,
      image: true,
      timings: { check: checkMs, read: 0, merge: 0, emulate: 0 },
    };
    imaged = { summary, content };
    imageGen = summary.gen;
    port.postMessage({ type: 'loaded', req, summary });
    for (const [id, view] of views) build(id, view);
    settleLater();
    return true;
  };

  const loadNow = (req: number, reclaimNow: boolean): void => {
    if (loads++ === 0 && image && fromImage(req)) return;
    reclaiming = reclaimNow && reclaim !== undefined;
    objects = 0;
    let summary: FeedSummary;
    let model: ClusterModel;
    try {
      // The feed has read nothing yet after a start from an image: this reads every file.
      const result = loads === 1 ? feed.load() : feed.reload();
      model = result.model;
      summary = summarize(result, ++gens);
    } catch (err) {
      if (err instanceof ManifestError) port.postMessage({ type: 'failed', req, findings: [...err.findings] });
      else port.postMessage({ type: 'failed', req, ...errorText(err) });
      return;
    } finally {
      reclaiming = false;
    }
    imaged = undefined;
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

  /**
   * After a start from the image: the load of the files it stood for, so that the next change
   * reads only what changed, and views subscribed later have a model. Its views are not handed
   * over again (the image's are of the same files); a file changed since is a change the watch
   * reports, and the load that follows hands over every view.
   */
  const warmUp = (): void => {
    const im = imaged;
    if (!im || loaded) return;
    objects = 0;
    reclaiming = reclaim !== undefined;
    let result: FeedResult;
    try {
      result = feed.load();
      loads = Math.max(loads, 2);
    } catch {
      return; // a load asked for reports it; the image's views stay
    } finally {
      reclaiming = false;
    }
    imaged = undefined;
    reclaim?.collect();
    loaded = { model: result.model, summary: { ...summarize(result, im.summary.gen), image: true } };
    for (const [id, view] of views) {
      if (view.gen !== im.summary.gen) build(id, view);
      else {
        // Built and dropped: a builder keeps what its next build reuses (the kubernetes view's
        // slice image), so the first change after an image start costs what any change costs.
        try {
          for (const _ of view.builder(loaded, view.args).parts);
        } catch {
          // The next load builds it from scratch, and reports what fails then.
        }
      }
    }
  };

  /** Once a load's views are all handed over: its image, unless one was written (or read) for it. */
  const writeImage = (): void => {
    if (!image || !loaded || imageGen === loaded.summary.gen || views.size === 0) return;
    const gen = loaded.summary.gen;
    const out: { key: string; parts: Uint8Array[]; after?: { value: unknown } }[] = [];
    for (const v of views.values()) {
      const r = v.record;
      if (!r || r.gen !== gen || !r.done) return;
    }
    imageGen = gen;
    try {
      for (const v of views.values()) {
        const r = v.record!;
        out.push({ key: v.key, parts: r.parts.map((p) => ('bytes' in p ? p.bytes : serialize(p.ref))), ...(r.after ? { after: r.after } : {}) });
      }
    } catch {
      return; // not storable (a builder's part holds what v8 cannot serialize)
    } finally {
      for (const v of views.values()) v.record = undefined;
    }
    image.write(feed.fileStates(), loaded.summary, out);
  };

  // This thread outlives its loads: once a load's views are handed over and nothing else came,
  // one full collection gives back what the load left (a first load's parse garbage, the last
  // model), instead of holding the heap at its peak for as long as the server runs. The image
  // is written then too, and a start from the image loads the files then.
  let settle: NodeJS.Timeout | undefined;
  const settleLater = (): void => {
    if (!reclaim && !image) return;
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
            if (imaged) {
              warmUp();
              if ([...views.values()].some((v) => v.parts !== undefined)) {
                settleLater();
                return;
              }
            } else writeImage();
            if (reclaim) (reclaim.settle ?? reclaim.collect)();
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
            port.postMessage({ type: 'view-failed', id: m.id, gen: currentGen() ?? 0, ...errorText(err) });
            return;
          }
          const view: View = {
            builder,
            args: m.args,
            key: `${m.module}\0${JSON.stringify(m.args)}`,
            gen: 0,
            parts: undefined,
            after: undefined,
            record: undefined,
          };
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
