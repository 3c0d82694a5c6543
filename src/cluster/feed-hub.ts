// The manifest feeds of `serve --workers N`, run once in the primary for every worker: each
// worker's FeedThread talks to the primary over its IPC channel (feed-thread.ts, openHub) instead
// of starting a loader thread of its own, so the files are read, admitted and played through the
// control plane once, and the model and the feed's kept reads exist once, whatever N is. Each
// worker still builds its own views' data into its own store (the parts are copied to it).
//
// A hub per feed key (paths and cluster options) holds one loader thread (feed-worker.ts) and
// multiplexes the workers: their views get hub-wide ids, a load one worker asks for is run once
// and announced to every worker (each then takes its views of it), and a worker asking for
// files the hub has loaded as they are gets that load's summary at once.
import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FeedInit, FeedSummary, FromFeed, ToFeed } from './feed-protocol.js';
import { FEED_HUB_ENV, HUB_CLOSE, HUB_FEED, HUB_OPEN, type HubMessage } from './feed-thread.js';
import { fingerprint } from './read/watch.js';

const workerFile = fileURLToPath(new URL('./feed-worker.js', import.meta.url));

/** As FeedThread's loader thread (feed-thread.ts): a lower peak at the same speed. */
const LOADER_YOUNG_GENERATION_MB = 4;

interface HubLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Makes this process (the primary) run the workers' feeds. Call before forking: the workers
 * learn it from their environment, and the IPC channel must carry typed arrays (the views'
 * images), which only the advanced serialization does. Without a compiled loader thread (the
 * TypeScript sources run directly) the workers load for themselves.
 */
export function startFeedHub(log: HubLog): void {
  if (!existsSync(workerFile)) return;
  cluster.setupPrimary({ serialization: 'advanced' });
  process.env[FEED_HUB_ENV] = '1';
  const hubs = new Map<string, Hub>();
  cluster.on('message', (w: ClusterWorker, m: HubMessage) => {
    if (m === null || typeof m !== 'object') return;
    if (m.type === HUB_OPEN) {
      let hub = hubs.get(m.key);
      if (!hub) {
        hub = new Hub(m.key, m.init, log);
        hubs.set(m.key, hub);
        log.info({ manifests: m.init.paths }, 'manifest feed started in the primary, shared by the workers');
      }
      hub.join(w);
    } else if (m.type === HUB_FEED) hubs.get(m.key)?.fromClient(w, m.msg as ToFeed);
    else if (m.type === HUB_CLOSE) {
      const hub = hubs.get(m.key);
      if (hub?.leave(w.id)) {
        hub.close();
        hubs.delete(m.key);
      }
    }
  });
  cluster.on('exit', (w: ClusterWorker) => {
    for (const [key, hub] of hubs) {
      if (hub.leave(w.id)) {
        hub.close();
        hubs.delete(key);
      }
    }
  });
}

class Hub {
  private thread: Worker | undefined;
  private readonly clients = new Map<number, ClusterWorker>();
  /** Hub view id -> the worker and its own id for the view. */
  private readonly views = new Map<number, { wid: number; id: number; module: string; args: unknown }>();
  private readonly byClient = new Map<string, number>();
  private nextView = 1;
  private nextReq = 1;
  private last: { summary: FeedSummary; key: string } | undefined;
  private running: { key: string; req: number; waiters: { wid: number; req: number }[] } | undefined;
  private queued: { wid: number; req: number }[] = [];

  constructor(
    private readonly key: string,
    private readonly init: FeedInit,
    private readonly log: HubLog,
  ) {}

  join(w: ClusterWorker): void {
    this.clients.set(w.id, w);
  }

  /** A worker left (closed its feed, or exited): its views go. True when no worker is left. */
  leave(wid: number): boolean {
    if (!this.clients.delete(wid)) return this.clients.size === 0;
    for (const [hid, v] of this.views) {
      if (v.wid !== wid) continue;
      this.views.delete(hid);
      this.byClient.delete(`${wid}:${v.id}`);
      this.thread?.postMessage({ type: 'drop', id: hid } satisfies ToFeed);
    }
    this.queued = this.queued.filter((q) => q.wid !== wid);
    if (this.running) this.running.waiters = this.running.waiters.filter((q) => q.wid !== wid);
    return this.clients.size === 0;
  }

  close(): void {
    void this.thread?.terminate();
    this.thread = undefined;
  }

  fromClient(w: ClusterWorker, m: ToFeed): void {
    if (!this.clients.has(w.id)) this.join(w);
    switch (m.type) {
      case 'view': {
        const hid = this.nextView++;
        this.views.set(hid, { wid: w.id, id: m.id, module: m.module, args: m.args });
        this.byClient.set(`${w.id}:${m.id}`, hid);
        this.post({ type: 'view', id: hid, module: m.module, args: m.args });
        return;
      }
      case 'drop': {
        const hid = this.byClient.get(`${w.id}:${m.id}`);
        if (hid === undefined) return;
        this.byClient.delete(`${w.id}:${m.id}`);
        this.views.delete(hid);
        this.post({ type: 'drop', id: hid });
        return;
      }
      case 'next': {
        const hid = this.byClient.get(`${w.id}:${m.id}`);
        if (hid !== undefined) this.post({ type: 'next', id: hid, gen: m.gen });
        return;
      }
      case 'load':
        this.request(w.id, m.req);
        return;
    }
  }

  /** A worker's load request: the files as the last load read them get its summary at once. */
  private request(wid: number, req: number): void {
    if (this.running) {
      this.queued.push({ wid, req });
      return;
    }
    const key = fingerprint(this.init.paths);
    if (this.last && this.last.key === key) {
      this.sendTo(wid, { type: 'loaded', req, summary: this.last.summary });
      return;
    }
    const hubReq = this.nextReq++;
    this.running = { key, req: hubReq, waiters: [{ wid, req }] };
    this.post({ type: 'load', req: hubReq, reclaim: this.last !== undefined });
  }

  private fromThread(m: FromFeed): void {
    switch (m.type) {
      case 'loaded': {
        const run = this.running;
        if (!run || m.req !== run.req) return;
        this.running = undefined;
        this.last = { summary: m.summary, key: run.key };
        // Every worker takes this load's views (they follow); the ones that asked get their answer.
        for (const wid of this.clients.keys()) {
          const asked = run.waiters.find((q) => q.wid === wid);
          this.sendTo(wid, asked ? { type: 'loaded', req: asked.req, summary: m.summary } : { type: 'loaded', summary: m.summary });
        }
        this.drain();
        return;
      }
      case 'failed': {
        const run = this.running;
        if (!run || m.req !== run.req) return;
        this.running = undefined;
        for (const q of run.waiters) this.sendTo(q.wid, { ...m, req: q.req });
        this.drain();
        return;
      }
      case 'warn':
        // The image is the primary's: its warnings are logged once, here.
        this.log.warn(m.detail, m.message);
        return;
      default: {
        const v = this.views.get(m.id);
        if (v) this.sendTo(v.wid, { ...m, id: v.id });
      }
    }
  }

  private drain(): void {
    const waiting = this.queued;
    this.queued = [];
    for (const q of waiting) this.request(q.wid, q.req);
  }

  private sendTo(wid: number, msg: FromFeed): void {
    const w = this.clients.get(wid);
    if (w?.isConnected()) w.send({ type: HUB_FEED, key: this.key, msg } satisfies HubMessage);
  }

  private post(m: ToFeed): void {
    (this.thread ??= this.start()).postMessage(m);
  }

  private start(): Worker {
    const thread = new Worker(workerFile, { workerData: this.init, resourceLimits: { maxYoungGenerationSizeMb: LOADER_YOUNG_GENERATION_MB } });
    thread.on('message', (m: FromFeed) => this.fromThread(m));
    thread.on('error', (err) => this.log.error({ err }, 'the manifest loader thread failed'));
    thread.on('exit', () => {
      if (this.thread !== thread) return;
      // A new thread on the next message: it needs every view again, and a load.
      this.thread = undefined;
      this.last = undefined;
      const run = this.running;
      this.running = undefined;
      for (const q of run?.waiters ?? []) this.sendTo(q.wid, { type: 'failed', req: q.req, message: 'the manifest loader thread exited' });
      for (const [hid, v] of this.views) this.post({ type: 'view', id: hid, module: v.module, args: v.args });
    });
    thread.unref();
    return thread;
  }
}
