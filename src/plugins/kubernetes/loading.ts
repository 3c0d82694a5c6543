// How a kubernetes plugin gets its data: from the manifest feed the App shares among every
// reader of the same files and options (cluster/feed-thread.ts), which loads them on its loader
// thread, keeps each file's read so a change costs what changed, and hands this plugin its view
// (the store, view.ts) after every load. A Corefile reload's new plugin joins the same feed: with
// the files unchanged it serves the store already built; otherwise one load serves the old and
// the new plugin alike. A load that fails is logged and the last good store keeps serving.
import type { Directive } from '../../chain/corefile.js';
import type { BlockContext } from '../../chain/registry.js';
import { type FeedThread, sharedFeed, type ViewSubscription, type ViewUpdate } from '../../cluster/feed-thread.js';
import { DEFAULT_CHUNK_WEIGHT } from './chunks.js';
import { countRecords, type KubernetesPlugin } from './plugin.js';
import { kubernetesView, type KubernetesView } from './view.js';

// The App's metrics come from the context: a type import only, so the loader thread does not
// load prom-client for nothing.
import type { AppMetrics } from '../../metrics/index.js';

export interface LoadingOptions {
  directive: Directive;
  ctx: BlockContext;
  /** The manifest paths (the block's own, else --manifests). */
  paths: readonly string[];
  /** The server's own addresses as the plugin names them (ns.ts). */
  localAddresses: () => string[];
}

/**
 * Registers `plugin`'s data with its block: loaded (or taken from the feed) before the
 * configuration serves, watched while it serves, let go when it closes.
 */
export function wireLoading(plugin: KubernetesPlugin, opts: LoadingOptions): void {
  const loading = new Loading(plugin, opts);
  const { ctx } = opts;
  // An object the API server would reject is left out and logged; the rest is served. Throws
  // ManifestError only for what no object owns (a path that cannot be read) or under --strict.
  ctx.onLoad(() => loading.load());
  ctx.onStart(() => loading.feed.watch(plugin.cfg.watchMs));
  ctx.onClose(() => loading.close());
}

class Loading {
  private readonly shared: { readonly value: FeedThread; release(): void };
  private subscription: ViewSubscription<KubernetesView> | undefined;
  /** The view this plugin serves. */
  private serving: KubernetesView | undefined;
  private m: AppMetrics | undefined;

  constructor(
    private readonly plugin: KubernetesPlugin,
    private readonly opts: LoadingOptions,
  ) {
    const { ctx } = opts;
    this.shared = sharedFeed(ctx.shared, opts.paths, ctx.runtime.cluster, {
      log: ctx.log,
      permit: ctx.withLoadPermit,
      onViewError: (err) => ctx.log.error({ err }, 'building a view of the manifests failed'),
      oneShot: ctx.oneShot === true,
    });
  }

  /** Lets go of the view and the feed (the feed stops, and its thread ends, with its last reader). */
  close(): void {
    this.subscription?.close();
    this.shared.release();
  }

  get feed(): FeedThread {
    return this.shared.value;
  }

  private get cfg(): KubernetesPlugin['cfg'] {
    return this.plugin.cfg;
  }

  /** The load at build: the feed's store when the files are as it last read them, else a load. */
  async load(): Promise<void> {
    this.m = this.opts.ctx.metrics;
    const { ctx, directive } = this.opts;
    // Subscribed at load, not setup: whether a prometheus plugin exports the records gauge is
    // known once the whole server is built.
    this.subscription ??= this.feed.subscribe(
      kubernetesView(this.cfg, {
        directive,
        zones: [...ctx.zones],
        localAddresses: this.opts.localAddresses(),
        retainModel: ctx.runtime.retainModel !== false,
        countRecords: this.exportsMetrics(),
        chunkWeight: DEFAULT_CHUNK_WEIGHT,
      }),
      {
        onView: (u) => this.apply(u),
        onFailed: () => this.failed(),
        onAfter: (records, view) => this.counted(records as number, view as KubernetesView),
      },
    );
    await this.feed.refresh();
    const now = await this.subscription.current();
    if (this.serving === now.value) return;
    // Built before this plugin joined (a Corefile reload, the files as they were).
    this.serving = now.value;
    this.plugin.setStore(now.value.store);
    this.m.recordLoad({
      plugin: 'kubernetes',
      zones: this.cfg.zones,
      objects: now.summary.objectCount,
      records: now.after as number | undefined,
      rejected: now.summary.rejected,
    });
    ctx.log.info(
      { plugin: 'kubernetes', zones: this.cfg.zones, services: now.value.store.services.size },
      'kubernetes configuration and manifests unchanged: serving the data already loaded',
    );
  }

  /** A new build of the view: served at once. */
  private apply(u: ViewUpdate<KubernetesView>): void {
    if (this.plugin.closing.signal.aborted) return;
    const { ctx, paths } = this.opts;
    const first = this.serving === undefined;
    this.serving = u.value;
    const { summary } = u;
    const store = u.value.store;
    this.plugin.setStore(store);
    this.m?.recordLoad({ plugin: 'kubernetes', zones: this.cfg.zones, objects: summary.objectCount, rejected: summary.rejected });
    const t = summary.timings;
    const read = {
      load: summary.gen,
      reread: summary.reread,
      full: summary.full,
      thread: this.feed.threaded ? 'worker' : 'main',
      loadMs: { check: Math.round(t.check), read: Math.round(t.read), merge: Math.round(t.merge), emulate: Math.round(t.emulate) },
    };
    if (first) {
      ctx.log.info(
        {
          plugin: 'kubernetes',
          zones: this.cfg.zones,
          manifests: paths,
          objects: summary.objectCount,
          services: store.services.size,
          namespaces: store.namespaces.size,
          pods: summary.pods,
          endpointSlices: summary.endpointSlices,
          ...read,
        },
        'kubernetes data loaded',
      );
    } else {
      ctx.invalidate();
      ctx.log.info(
        { plugin: 'kubernetes', objects: summary.objectCount, services: store.services.size, ...read },
        'manifests changed: kubernetes data reloaded',
      );
    }
    if (this.feed.threaded || !this.exportsMetrics()) return;
    // No loader thread to count on: count here, after the store is in.
    const view = u.value;
    setImmediate(() => this.counted(countRecords(this.plugin), view));
  }

  /** The records gauge, unless newer data came meanwhile. */
  private counted(records: number, view: KubernetesView): void {
    if (this.serving !== view || this.plugin.closing.signal.aborted) return;
    this.m?.recordLoad({ plugin: 'kubernetes', zones: this.cfg.zones, objects: undefined, records });
    this.opts.ctx.log.info({ plugin: 'kubernetes', records }, 'kubernetes records counted (forward zones, as a zone transfer would list them)');
  }

  /** A load the watch started failed (the feed logged it): counted; the last store serves on. */
  private failed(): void {
    if (this.plugin.closing.signal.aborted) return;
    this.m?.recordLoadError({ plugin: 'kubernetes', zones: this.cfg.zones });
  }

  /** The records gauge is a full zone walk: only worth it when the prometheus plugin exports it. */
  private exportsMetrics(): boolean {
    return this.opts.ctx.allPlugins().some((p) => p.name === 'prometheus');
  }
}
