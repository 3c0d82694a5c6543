// How a kubernetes plugin gets its data: loaded off the serving thread when the server builds
// (loader.ts), taken from the running plugin when a Corefile reload leaves the block and its
// manifest files as they were (shared.ts), and loaded again when the manifests change (watch.ts).
// Each load is swapped in whole; a reload that fails is logged and the last good data keeps
// serving.
import type { Directive } from '../../chain/corefile.js';
import type { BlockContext } from '../../chain/registry.js';
import { withLoadPermit } from '../../chain/load-permit.js';
import { ManifestError } from '../../cluster/model.js';
import { logFindings } from '../../cluster/report.js';
import { DEFAULT_CHUNK_WEIGHT, loadOffThread, type LoadedData } from './loader.js';

/**
 * Objects read between collections of a reload's loader thread: on 20k objects (100k endpoints)
 * every 5000 kept the load's peak RSS about 35 MiB lower for about 0.2 s more load time.
 */
const RECLAIM_EVERY_OBJECTS = 5000;
import type { LoadRequest } from './loader-protocol.js';
import { countRecords, type KubernetesPlugin } from './plugin.js';
import { acquireShared, sharedId, type SharedSlot } from './shared.js';
import { fingerprint, ManifestWatcher } from '../../cluster/watch.js';

type Metrics = typeof import('../../metrics/index.js');

/** The load running for a shared slot: the files it reads, and the closing of the plugin it serves. */
const running = new WeakMap<SharedSlot, { files: string; data: Promise<LoadedData>; closing: AbortSignal }>();

/**
 * The load gauges' setters. Imported when a load runs, not with this module: the load worker
 * imports setup.ts (for parseKubernetes), which imports this module, and a static import would
 * load prom-client in the worker of every load (about 15 ms each) for nothing.
 */
const metrics = (): Promise<Metrics> => import('../../metrics/index.js');

export interface LoadingOptions {
  directive: Directive;
  ctx: BlockContext;
  /** The manifest paths (the block's own, else --manifests). */
  paths: readonly string[];
  /** The server's own addresses as the plugin names them (ns.ts). */
  localAddresses: () => string[];
}

/** Gives `plugin` its loader and its manifest watcher. */
export function wireLoading(plugin: KubernetesPlugin, opts: LoadingOptions): void {
  const loading = new Loading(plugin, opts);
  // An object the API server would reject is left out and logged; the rest is served. Throws
  // ManifestError only for what no object owns (a path that cannot be read) or under --strict.
  plugin.loader = () => loading.load();
  plugin.watcher = new ManifestWatcher(opts.paths, plugin.cfg.watchMs, () => loading.reload());
}

class Loading {
  private readonly shared: { slot: SharedSlot; release: () => void };
  /** A reload is running; `again`: the manifests changed meanwhile, so one more follows it. */
  private loading = false;
  private again = false;

  constructor(
    private readonly plugin: KubernetesPlugin,
    private readonly opts: LoadingOptions,
  ) {
    const { directive, ctx, paths } = opts;
    this.shared = acquireShared(sharedId([directive, ctx.zones, ctx.runtime.cluster, paths, ctx.runtime.retainModel !== false]));
    plugin.onClose = this.shared.release;
  }

  private get cfg(): KubernetesPlugin['cfg'] {
    return this.plugin.cfg;
  }

  /** The load at build: the running plugin's data when nothing changed, else a load off-thread. */
  async load(): Promise<void> {
    const m = await metrics();
    const { ctx, paths } = this.opts;
    // Taken before the load: a change made while loading is picked up by the next load.
    const files = fingerprint(paths);
    const { slot } = this.shared;
    const same = slot.store;
    if (same && slot.fingerprint === files) {
      this.plugin.setStore(same);
      m.recordLoad({ plugin: 'kubernetes', zones: this.cfg.zones, objects: slot.objects, records: slot.records, rejected: slot.rejected });
      ctx.log.info(
        { plugin: 'kubernetes', zones: this.cfg.zones, services: same.services.size },
        'kubernetes configuration and manifests unchanged: serving the data already loaded',
      );
      return;
    }
    // A store already serving (a Corefile reload with changed manifests): this load runs beside it.
    const data = await this.loadFiles(files, same !== undefined);
    this.remember(data, files);
    logFindings(ctx.log, data.findings, { plugin: 'kubernetes' }, data.rejected);
    if (Object.keys(data.ignoredKinds).length > 0) ctx.log.debug({ ignoredKinds: data.ignoredKinds }, 'manifest kinds without DNS meaning, ignored');
    this.plugin.setStore(data.store);
    const store = data.store;
    ctx.log.info(
      {
        plugin: 'kubernetes', zones: this.cfg.zones, manifests: paths, objects: data.objectCount, services: store.services.size,
        namespaces: store.namespaces.size, pods: data.pods, endpointSlices: data.endpointSlices, thread: data.thread,
      },
      'kubernetes data loaded',
    );
    this.report(m, data);
  }

  /**
   * Manifests that changed under a running server are loaded again off the serving thread and
   * swapped in one step. Changes that arrive during a load start one more load after it.
   */
  reload(): void {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    void (async () => {
      const m = await metrics();
      do {
        this.again = false;
        if (this.plugin.closing.signal.aborted) break;
        if (!(await this.reloadOnce(m))) break;
      } while (this.again);
      this.loading = false;
    })();
  }

  /** One reload; false when the plugin closed meanwhile (nothing more to do). */
  private async reloadOnce(m: Metrics): Promise<boolean> {
    const { ctx, paths } = this.opts;
    try {
      const files = fingerprint(paths);
      const { slot } = this.shared;
      if (slot.store && slot.fingerprint === files) {
        // A Corefile reload's new plugin (same block) loaded these files already.
        this.plugin.setStore(slot.store);
        ctx.invalidate();
        ctx.log.info({ plugin: 'kubernetes', objects: slot.objects }, 'manifests changed: serving the data a reload already loaded from them');
        return true;
      }
      const data = await this.loadFiles(files, true);
      this.remember(data, files);
      logFindings(ctx.log, data.findings, { plugin: 'kubernetes' }, data.rejected);
      this.plugin.setStore(data.store);
      this.report(m, data);
      ctx.invalidate();
      ctx.log.info({ plugin: 'kubernetes', objects: data.objectCount, services: data.store.services.size }, 'manifests changed: kubernetes data reloaded');
    } catch (err) {
      if (this.plugin.closing.signal.aborted) return false; // closed meanwhile: nothing failed
      const findings = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
      for (const f of findings) {
        ctx.log.error({ plugin: 'kubernetes', file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
      }
      if (findings.length === 0) ctx.log.error({ plugin: 'kubernetes', err }, 'manifest reload failed, still serving the previous data');
      m.recordLoadError({ plugin: 'kubernetes', zones: this.cfg.zones });
    }
    return true;
  }

  /**
   * A load of the manifests as they are now (`files`), or the one of the same files running for
   * this shared slot. The running plugin's watcher and a Corefile reload's new plugin see one
   * change of the files, often at once (a SIGHUP after editing them): two loads beside the
   * serving store would be three clusters in memory at once.
   */
  private loadFiles(files: string, beside: boolean): Promise<LoadedData> {
    const { slot } = this.shared;
    const now = running.get(slot);
    if (now?.files !== files) return this.startLoad(files, beside);
    return now.data.catch((err: unknown) => {
      // The plugin that started it closed (its configuration was dropped): this one loads itself.
      if (now.closing.aborted && !this.plugin.closing.signal.aborted) return this.startLoad(files, beside);
      throw err;
    });
  }

  private startLoad(files: string, beside: boolean): Promise<LoadedData> {
    const { slot } = this.shared;
    const closing = this.plugin.closing.signal;
    const data = withLoadPermit('kubernetes', () => loadOffThread(this.request(beside), this.cfg, closing));
    running.set(slot, { files, data, closing });
    const done = (): void => {
      if (running.get(slot)?.data === data) running.delete(slot);
    };
    data.then(done, done);
    return data;
  }

  /** `beside`: a store is serving while this load runs (its thread then collects as it goes). */
  private request(beside: boolean): LoadRequest {
    const { directive, ctx, paths } = this.opts;
    return {
      paths: [...paths],
      cluster: ctx.runtime.cluster,
      directive,
      zones: [...ctx.zones],
      localAddresses: this.opts.localAddresses(),
      retainModel: ctx.runtime.retainModel !== false,
      countRecords: this.exportsMetrics(),
      chunkWeight: DEFAULT_CHUNK_WEIGHT,
      reclaimEvery: beside ? RECLAIM_EVERY_OBJECTS : 0,
      ...(this.shared.slot.history ? { history: this.shared.slot.history } : {}),
    };
  }

  /** The records gauge is a full zone walk: only worth it when the prometheus plugin exports it. */
  private exportsMetrics(): boolean {
    return this.opts.ctx.allPlugins().some((p) => p.name === 'prometheus');
  }

  /** The load gauges; the records count follows when ready, unless newer data came meanwhile. */
  private report(m: Metrics, data: LoadedData): void {
    const { ctx } = this.opts;
    const zones = this.cfg.zones;
    m.recordLoad({ plugin: 'kubernetes', zones, objects: data.objectCount, rejected: data.rejected });
    const counted = data.records ?? (data.thread === 'main' && this.exportsMetrics() ? Promise.resolve(countRecords(this.plugin)) : undefined);
    void counted?.then((records) => {
      if (this.plugin.currentStore !== data.store) return; // newer data came meanwhile
      m.recordLoad({ plugin: 'kubernetes', zones, objects: data.objectCount, records });
      ctx.log.info({ plugin: 'kubernetes', records }, 'kubernetes records counted (forward zones, as a zone transfer would list them)');
    });
  }

  /** The shared slot keeps this load for the next configuration with the same block and files. */
  private remember(data: LoadedData, files: string): void {
    const { slot } = this.shared;
    slot.store = data.store;
    slot.fingerprint = files;
    slot.objects = data.objectCount;
    slot.rejected = data.rejected;
    slot.history = data.history;
    slot.records = undefined;
    void data.records?.then((n) => {
      if (slot.store === data.store) slot.records = n;
    });
  }
}
