// A manifest feed as the serving thread sees it: one loader thread (feed-worker.ts) for a set of
// manifest paths and cluster options, alive as long as someone reads them, holding the files'
// reads between loads so that a change costs what changed (feed.ts). Readers subscribe a view
// (what they need from the model, built in the loader thread) and are handed each new build of
// it; readers that subscribe the same view share one build. The files are watched once, however
// many readers there are, and a change is loaded once for all of them.
//
// How it runs:
// - A load happens when refresh() finds the files' fingerprint (list, sizes, times, inodes)
//   changed since the last one: at build (a Corefile reload with the files unchanged loads
//   nothing and serves the views already built), on SIGHUP and on the feed's one watch (the
//   smallest interval its readers ask for). Refreshes during a load share it when they see the
//   same files, else one more follows it. A failed load is reported to every listener, which
//   keeps serving its last view. Loads take the App's load permit (--workers).
// - After each load every view is built in the loader thread and handed over a part at a time,
//   each when the serving thread asks ('next'), so the serving thread indexes a little, answers
//   queries, and asks again; the listener swaps the result in whole. Loads are numbered by the
//   loader (FeedSummary.gen) and replies name the request they answer.
// - Memory: the thread's young generation is capped (LOADER_YOUNG_GENERATION_MB); a reload that
//   reads every file collects the thread's heap once a JSON List's text has gone, every 5000
//   objects and after the read, since there the peak is the old and the new data (a first load
//   does not, for its speed); once a load's views are handed over and the thread is quiet, one
//   compacting collection settles it. The thread runs niced while it loads.
// - The last load is kept as an image (feed-image.ts) keyed by the files' versions, so a start
//   on unchanged files hands the views over without parsing, then loads in the background.
// - With `serve --workers N` the primary runs the feeds (feed-hub.ts) and each worker's
//   FeedThread sends these same messages over its IPC channel; where no compiled worker file
//   exists (the TypeScript sources under vitest) the service runs on the serving thread over a
//   MessageChannel: the same messages either way.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deserialize } from 'node:v8';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { FeedInit, FeedSummary, FromFeed, ToFeed, ViewBuilder } from './feed-protocol.js';
import { type FeedPort, serveFeed } from './feed-service.js';
import { ManifestError } from './model/finding.js';
import { type FindingLog, logFindings } from './report.js';
import { fingerprint, ManifestWatcher } from './read/watch.js';

const workerFile = fileURLToPath(new URL('./feed-worker.js', import.meta.url));

/**
 * The loader thread's young generation, in MiB. Parsing a large List makes short-lived objects
 * by the million; V8's default young generation (3 x 16 MiB semi-spaces) lets tens of MiB of
 * them, and what survives one scavenge, pile up before they go. 4 MiB keeps the thread's peak
 * RSS about 35 MiB lower on 100k endpoints at no measurable cost in load time.
 */
const LOADER_YOUNG_GENERATION_MB = 4;

/**
 * The same for a command that loads once and exits (records, check, diff): its peak RSS lasts a
 * few seconds, and V8's usual young generation takes about 0.7 s of collection off a 10k-Service
 * load (2.96 -> 2.3 s wall, bench/diff.js's tree).
 */
const ONE_SHOT_YOUNG_GENERATION_MB = 32;

export interface ViewAssembler<V> {
  add(part: unknown): void;
  finish(): V;
}

export interface ViewSpec<V> {
  /** URL of the module whose `buildView` runs in the loader thread. */
  readonly module: string;
  /** The same builder, for a feed served on this thread (no compiled loader thread: the test sources). */
  readonly build: ViewBuilder;
  /** Plain data for the builder; subscribers with equal modules and args share one view. */
  readonly args: unknown;
  /** Takes one build's parts, in order, on the serving thread. */
  readonly assemble: () => ViewAssembler<V>;
}

export interface ViewUpdate<V> {
  readonly value: V;
  readonly summary: FeedSummary;
  /** The build's `after` result (a count for a gauge), once it came. */
  readonly after?: unknown;
}

export interface ViewListener<V> {
  /** A build of the view, from a load of the files. */
  onView(update: ViewUpdate<V>): void;
  /** A load started by the watch failed (the last views stay). */
  onFailed?(err: Error): void;
  /** The `after` result of the build `value` (a count for a gauge), unless a newer build came. */
  onAfter?(result: unknown, value: V): void;
}

/** Where a feed reports what its loads found (the logger of the plugin that opened it). */
export interface FeedLog extends FindingLog {
  info(obj: object, msg: string): void;
}

export interface FeedOptions {
  /**
   * Each load's findings, logged once however many plugins read the feed: every rejected object
   * at its file and line, warnings, and a load the watch started that failed.
   */
  readonly log?: FeedLog;
  /** Holds a permit while a load runs (serve --workers: the primary hands out a few at a time). */
  readonly permit?: <T>(what: string, load: () => Promise<T>) => Promise<T>;
  /** Where a view that failed to build is reported. */
  readonly onViewError?: (err: Error) => void;
  /** The feed is read once by a command that then exits (BlockContext.oneShot): load for speed, not for a serving RSS. */
  readonly oneShot?: boolean;
}

interface Entry {
  readonly id: number;
  readonly key: string;
  readonly spec: ViewSpec<unknown>;
  readonly listeners: Set<ViewListener<unknown>>;
  assembler: ViewAssembler<unknown> | undefined;
  assembling: number;
  value: unknown;
  after: unknown;
  /** The load `value` was built from (0: none yet). */
  gen: number;
  summary: FeedSummary | undefined;
  waiters: { gen: number; resolve: (v: ViewUpdate<unknown>) => void; reject: (e: Error) => void }[];
}

export interface ViewSubscription<V> {
  /**
   * The view built from the files as the last refresh found them: this subscriber's listener is
   * also handed it, unless it was built before the subscriber joined (shared with earlier ones).
   */
  current(): Promise<ViewUpdate<V>>;
  close(): void;
}

/** Set by the primary of `serve --workers` for its workers: their feeds run in the primary. */
export const FEED_HUB_ENV = 'CLUSTERDNS_FEED_HUB';
export const HUB_OPEN = 'clusterdns:feed-open';
export const HUB_FEED = 'clusterdns:feed';
export const HUB_CLOSE = 'clusterdns:feed-close';

/** A message between a worker's feed and the primary's hub (feed-hub.ts). */
export type HubMessage =
  | { readonly type: typeof HUB_OPEN; readonly key: string; readonly init: FeedInit }
  | { readonly type: typeof HUB_FEED; readonly key: string; readonly msg: ToFeed | FromFeed }
  | { readonly type: typeof HUB_CLOSE; readonly key: string };

/** What the keys of manifest feeds among an App's shared resources start with (app.ts routes them). */
export const MANIFEST_FEED_KEY = 'manifest-feed\0';

/** One feed per paths and options, the same key in every process. */
export const feedKey = (init: FeedInit): string => JSON.stringify([init.paths, init.cluster]);

const inHubWorker = (): boolean => process.env[FEED_HUB_ENV] === '1' && typeof process.send === 'function';

/** What BlockContext.shared gives (the App's resources kept across reloads), as this layer sees it. */
export type ShareResource = <T extends { close(): void }>(key: string, create: () => T) => { readonly value: T; release(): void };

/**
 * The App's feed for `paths` and `cluster` options: every plugin reading the same files with the
 * same options (kubernetes, k8s_gateway, the blocks of a Corefile and of its reloads) gets the same
 * one, with one loader thread and one watch.
 */
export function sharedFeed(
  share: ShareResource,
  paths: readonly string[],
  cluster: FeedInit['cluster'],
  opts: FeedOptions,
): { readonly value: FeedThread; release(): void } {
  const init: FeedInit = { paths: [...paths], cluster };
  return share(`${MANIFEST_FEED_KEY}${feedKey(init)}`, () => new FeedThread(init, opts));
}

export class FeedThread {
  private port: { post(m: ToFeed): void; ref(): void; unref(): void; close(): void } | undefined;
  private readonly entries = new Map<string, Entry>();
  private readonly byId = new Map<number, Entry>();
  private nextId = 1;
  /** Load requests sent; the loader numbers the loads themselves (FeedSummary.gen). */
  private requests = 0;
  /** The newest load whose findings were logged (a summary handed again is not logged again). */
  private logged = 0;
  /** The last load that succeeded, and the files it read. */
  private last: { summary: FeedSummary; key: string } | undefined;
  private running: { key: string; done: Promise<FeedSummary> } | undefined;
  private queued: Promise<FeedSummary> | undefined;
  /** Summaries of the recent loads, by gen: a view's build is reported with its load's. */
  private readonly summaries = new Map<number, FeedSummary>();
  private readonly loads = new Map<number, { resolve: (s: FeedSummary) => void; reject: (e: Error) => void }>();
  private watcher: ManifestWatcher | undefined;
  private watchMs = 0;
  private closed = false;
  /** Outstanding work the process must stay up for (a load, a view being handed over). */
  private busy = 0;

  constructor(
    readonly init: FeedInit,
    private readonly opts: FeedOptions = {},
  ) {}

  /** Whether loads run off this thread (a loader thread, or the primary of serve --workers). */
  get threaded(): boolean {
    return inHubWorker() || existsSync(workerFile);
  }

  subscribe<V>(spec: ViewSpec<V>, listener: ViewListener<V>): ViewSubscription<V> {
    if (this.closed) throw new Error('manifest feed closed');
    const key = `${spec.module}\0${JSON.stringify(spec.args)}`;
    let e = this.entries.get(key);
    if (!e) {
      e = {
        id: this.nextId++,
        key,
        spec: spec as ViewSpec<unknown>,
        listeners: new Set(),
        assembler: undefined,
        assembling: 0,
        value: undefined,
        after: undefined,
        gen: 0,
        summary: undefined,
        waiters: [],
      };
      this.entries.set(key, e);
      this.byId.set(e.id, e);
      this.send({ type: 'view', id: e.id, module: spec.module, args: spec.args });
    }
    const entry = e;
    const l = listener as ViewListener<unknown>;
    entry.listeners.add(l);
    let open = true;
    return {
      current: () => this.current(entry) as Promise<ViewUpdate<V>>,
      close: () => {
        if (!open) return;
        open = false;
        entry.listeners.delete(l);
        if (entry.listeners.size > 0) return;
        this.entries.delete(entry.key);
        this.byId.delete(entry.id);
        for (const w of entry.waiters) w.reject(new Error('view closed'));
        this.send({ type: 'drop', id: entry.id });
      },
    };
  }

  /**
   * Loads the files when they changed since the last load (every file the first time); resolves
   * with that load's summary, rejects with its ManifestError. Calls made while a load runs share
   * it when they see the same files, else one more load follows it for all of them.
   */
  refresh(): Promise<FeedSummary> {
    if (this.closed) return Promise.reject(new Error('manifest feed closed'));
    const key = fingerprint(this.init.paths);
    if (this.running) {
      if (this.running.key === key) return this.running.done;
      this.queued ??= this.running.done
        .catch(() => undefined)
        .then(() => {
          this.queued = undefined;
          return this.refresh();
        });
      return this.queued;
    }
    if (this.last && this.last.key === key) return Promise.resolve(this.last.summary);
    const req = ++this.requests;
    const reclaim = this.last !== undefined;
    const run = (): Promise<FeedSummary> =>
      new Promise<FeedSummary>((resolve, reject) => {
        this.loads.set(req, { resolve, reject });
        this.hold();
        this.send({ type: 'load', req, reclaim });
      });
    const done = (this.opts.permit ? this.opts.permit('manifests', run) : run()).then((summary) => {
      if (!this.last || this.last.summary.gen <= summary.gen) this.last = { summary, key };
      return summary;
    });
    const running = { key, done };
    this.running = running;
    const clear = (): void => {
      if (this.running === running) this.running = undefined;
    };
    done.then(clear, clear);
    return done;
  }

  /** Watches the files every `ms` (the smallest asked for wins; 0 asks for nothing) and loads changes. */
  watch(ms: number): void {
    if (this.closed || ms <= 0 || (this.watchMs > 0 && this.watchMs <= ms)) return;
    this.watcher?.stop();
    this.watchMs = ms;
    this.watcher = new ManifestWatcher(this.init.paths, ms, () => this.changed(), {
      onMode: (mode, why) => {
        if (mode === 'polling') this.opts.log?.warn({ manifests: this.init.paths, why, intervalMs: ms }, 'manifest watching falls back to polling');
      },
    });
    this.watcher.start();
  }

  /** Polls the watch once (tests drive it by hand). */
  checkWatch(): void {
    this.watcher?.check();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.stop();
    const gone = new Error('manifest feed closed');
    for (const l of this.loads.values()) l.reject(gone);
    this.loads.clear();
    for (const e of this.entries.values()) for (const w of e.waiters) w.reject(gone);
    this.entries.clear();
    this.byId.clear();
    this.port?.close();
    this.port = undefined;
  }

  private changed(): void {
    this.refresh().catch((err: unknown) => {
      if (this.closed) return;
      const e = err instanceof Error ? err : new Error(String(err));
      this.logFailure(e);
      for (const entry of this.entries.values()) for (const l of entry.listeners) l.onFailed?.(e);
    });
  }

  /** A load the watch started failed: each error at its file and line, once for every reader. */
  private logFailure(err: Error): void {
    const log = this.opts.log;
    if (!log) return;
    const errors = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
    for (const f of errors) log.error({ file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
    if (errors.length === 0) log.error({ err }, 'manifest reload failed, still serving the previous data');
  }

  private current(e: Entry): Promise<ViewUpdate<unknown>> {
    const want = this.last?.summary.gen ?? 1;
    if (e.gen >= want && e.gen > 0 && e.summary) return Promise.resolve({ value: e.value, summary: e.summary, after: e.after });
    // A waiter keeps the process up (a one-shot command waits for nothing else).
    this.hold();
    return new Promise((resolve, reject) =>
      e.waiters.push({
        gen: want,
        resolve: (v) => {
          this.letGo();
          resolve(v);
        },
        reject: (err) => {
          this.letGo();
          reject(err);
        },
      }),
    );
  }

  private hold(): void {
    if (this.busy++ === 0) this.port?.ref();
  }

  private letGo(): void {
    if (this.busy > 0 && --this.busy === 0) this.port?.unref();
  }

  private send(m: ToFeed): void {
    if (this.closed) return;
    if (!this.port) {
      this.port = this.open();
      if (this.busy > 0) this.port.ref();
    }
    this.port.post(m);
  }

  private open(): { post(m: ToFeed): void; ref(): void; unref(): void; close(): void } {
    if (inHubWorker()) return this.openHub();
    if (this.threaded) {
      const worker = new Worker(workerFile, {
        workerData: this.init,
        resourceLimits: { maxYoungGenerationSizeMb: this.opts.oneShot ? ONE_SHOT_YOUNG_GENERATION_MB : LOADER_YOUNG_GENERATION_MB },
      });
      worker.on('message', (m: FromFeed) => this.receive(m));
      worker.on('error', (err) => this.lost(err));
      worker.on('exit', (code) => {
        if (!this.closed) this.lost(new Error(`manifest loader thread exited (code ${code})`));
      });
      worker.unref();
      return { post: (m) => worker.postMessage(m), ref: () => worker.ref(), unref: () => worker.unref(), close: () => void worker.terminate() };
    }
    // No compiled loader thread: the same service on this thread, over a channel.
    const { port1, port2 } = new MessageChannel();
    const service: FeedPort = {
      postMessage: (m, transfer) => port2.postMessage(m, transfer ? [...transfer] : []),
      on: (_event, listener) => port2.on('message', listener),
    };
    serveFeed(service, this.init, {
      builder: (module) => {
        for (const e of this.entries.values()) if (e.spec.module === module) return Promise.resolve(e.spec.build);
        return Promise.reject(new Error(`no view builder for ${module}`));
      },
    });
    port1.on('message', (m: FromFeed) => this.receive(m));
    port1.unref();
    port2.unref();
    return {
      post: (m) => port1.postMessage(m),
      ref: () => port1.ref(),
      unref: () => port1.unref(),
      close: () => {
        port1.close();
        port2.close();
      },
    };
  }

  /**
   * A worker of `serve --workers`: the primary runs the feed (feed-hub.ts), one load for every
   * worker, and this process only takes its views, over the IPC channel.
   */
  private openHub(): { post(m: ToFeed): void; ref(): void; unref(): void; close(): void } {
    const key = feedKey(this.init);
    const listener = (m: HubMessage): void => {
      if (m !== null && typeof m === 'object' && m.type === HUB_FEED && m.key === key) this.receive(m.msg as FromFeed);
    };
    process.on('message', listener);
    const send = (m: HubMessage): void => {
      if (process.connected) process.send?.(m);
    };
    send({ type: HUB_OPEN, key, init: this.init });
    return {
      post: (msg) => send({ type: HUB_FEED, key, msg }),
      // The channel to the primary keeps a worker up anyway.
      ref: () => undefined,
      unref: () => undefined,
      close: () => {
        process.off('message', listener);
        send({ type: HUB_CLOSE, key });
      },
    };
  }

  /** The loader thread died: what waited fails, and the next refresh starts a new one. */
  private lost(err: Error): void {
    this.port = undefined;
    this.busy = 0;
    this.last = undefined;
    for (const l of this.loads.values()) l.reject(err);
    this.loads.clear();
    for (const e of this.entries.values()) {
      if (e.assembler) e.assembler = undefined;
      for (const w of e.waiters) w.reject(err);
      e.waiters = [];
      // The new thread needs the views again.
      queueMicrotask(() => {
        if (this.entries.get(e.key) === e) this.send({ type: 'view', id: e.id, module: e.spec.module, args: e.spec.args });
      });
    }
  }

  private receive(m: FromFeed): void {
    if (this.closed) return;
    switch (m.type) {
      case 'loaded': {
        if (this.opts.log && m.summary.gen > this.logged) {
          this.logged = m.summary.gen;
          logFindings(this.opts.log, m.summary.findings, {}, m.summary.rejected);
          if (Object.keys(m.summary.ignoredKinds).length > 0)
            this.opts.log.debug({ ignoredKinds: m.summary.ignoredKinds }, 'manifest kinds without DNS meaning, ignored');
        }
        this.summaries.set(m.summary.gen, m.summary);
        // Views still being handed over may be of the load before; older ones are moot.
        for (const g of this.summaries.keys()) if (g < m.summary.gen - 1) this.summaries.delete(g);
        const l = m.req === undefined ? undefined : this.loads.get(m.req);
        if (l) {
          this.loads.delete(m.req!);
          this.letGo();
          l.resolve(m.summary);
        } else if (!this.last || this.last.summary.gen < m.summary.gen) {
          // Another reader's load (serve --workers: the primary loads once for every worker):
          // its views follow. The files it read are not known here, so the next refresh asks.
          this.last = { summary: m.summary, key: '' };
        }
        return;
      }
      case 'failed': {
        if (m.req === undefined) return;
        const l = this.loads.get(m.req);
        this.loads.delete(m.req);
        this.letGo();
        const err = m.findings ? new ManifestError(m.findings) : Object.assign(new Error(m.message ?? 'manifest load failed'), { stack: m.stack });
        l?.reject(err);
        return;
      }
      case 'part': {
        const e = this.byId.get(m.id);
        if (!e) return;
        if (e.assembling !== m.gen || !e.assembler) {
          if (!e.assembler) this.hold();
          e.assembler = e.spec.assemble();
          e.assembling = m.gen;
        }
        let part = m.part;
        if (m.raw) {
          try {
            part = deserialize(m.part as Uint8Array);
          } catch (err) {
            e.assembler = undefined;
            this.letGo();
            this.viewFailed(e, err instanceof Error ? err : new Error(String(err)));
            return;
          }
        }
        e.assembler.add(part);
        this.askNext(e, m.gen);
        return;
      }
      case 'end': {
        const e = this.byId.get(m.id);
        if (!e || e.assembling !== m.gen || !e.assembler) return;
        const assembler = e.assembler;
        e.assembler = undefined;
        this.letGo();
        let value: unknown;
        try {
          value = assembler.finish();
        } catch (err) {
          this.viewFailed(e, err instanceof Error ? err : new Error(String(err)));
          return;
        }
        const summary = this.summaries.get(m.gen);
        if (!summary) return; // a load this side no longer knows (the thread was restarted)
        e.value = value;
        e.after = undefined;
        e.gen = m.gen;
        e.summary = summary;
        const waiting = e.waiters.filter((w) => w.gen <= m.gen);
        e.waiters = e.waiters.filter((w) => w.gen > m.gen);
        const update: ViewUpdate<unknown> = { value, summary };
        for (const l of e.listeners) l.onView(update);
        for (const w of waiting) w.resolve(update);
        return;
      }
      case 'after': {
        const e = this.byId.get(m.id);
        if (!e || e.gen !== m.gen) return;
        e.after = m.value;
        for (const l of e.listeners) l.onAfter?.(m.value, e.value);
        return;
      }
      case 'warn':
        this.opts.log?.warn(m.detail, m.message);
        return;
      case 'view-failed': {
        const e = this.byId.get(m.id);
        if (!e) return;
        if (e.assembler) {
          e.assembler = undefined;
          this.letGo();
        }
        this.viewFailed(e, Object.assign(new Error(m.message), { stack: m.stack }));
        return;
      }
    }
  }

  private viewFailed(e: Entry, err: Error): void {
    for (const w of e.waiters) w.reject(err);
    e.waiters = [];
    this.opts.onViewError?.(err);
  }

  /** The next part once whatever I/O arrived while this one was taken in has been served. */
  private askNext(e: Entry, gen: number): void {
    setImmediate(() => {
      if (this.byId.get(e.id) === e && e.assembling === gen) this.send({ type: 'next', id: e.id, gen });
    });
  }
}
