// Registers the kubernetes plugin: parse its block; the manifests it serves are loaded and the
// store built off the serving thread (loader.ts) when the server builds, and again when they change.
import type { PluginDefinition } from '../../chain/registry.js';
import { ManifestError, type ClusterOptions } from '../../cluster/model.js';
import { fingerprint, ManifestWatcher } from './watch.js';
import { acquireShared, sharedId } from './shared.js';
import { recordLoad, recordLoadError } from '../../metrics/index.js';
import { countRecords, KubernetesPlugin } from './plugin.js';
import { parseKubernetes } from './setup.js';
import { KubernetesStore } from './store.js';
import { CorefileError } from '../../chain/corefile.js';
import { isSubdomain } from '../../pkg/names.js';
import { serverAddresses } from './ns.js';
import { DEFAULT_CHUNK_WEIGHT, loadOffThread, type LoadedData } from './loader.js';
import type { LoadRequest } from './loader-protocol.js';

declare module '../../chain/registry.js' {
  interface RuntimeOptions {
    /** Service CIDRs, nodes and limits from the command line, for the plugins that read manifests. */
    cluster: ClusterOptions;
  }
}

export const kubernetesPlugin: PluginDefinition = {
  name: 'kubernetes',
  setup(d, ctx) {
    const cfg = parseKubernetes(d, ctx.zones);
    // CoreDNS loads such a zone all the same (OriginsFromArgsOrServerBlock); no query reaches it.
    for (const z of cfg.zones.filter((z) => !ctx.zones.some((b) => isSubdomain(z, b)))) {
      ctx.log.warn({ file: d.file, line: d.line }, `kubernetes zone ${z} is not inside the server block's zones (${ctx.zones.join(' ')}); queries for it never reach the plugin`);
    }
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'kubernetes has no manifests to serve: pass --manifests PATH or add `manifests PATH` to this block');
    }
    // ns.dns.<zone>'s addresses when no kube-dns Service names the server (ns.ts); `bindOnly`
    // leaves this machine's interfaces out (records).
    const localAddresses = (bindOnly?: boolean): string[] => serverAddresses(ctx.bindAddresses, bindOnly ? {} : undefined);
    const plugin = new KubernetesPlugin(cfg, KubernetesStore.empty(cfg), { lookup: ctx.lookup, localAddresses }, paths);
    const request = (): LoadRequest => ({
      paths: [...paths],
      cluster: ctx.runtime.cluster,
      directive: d,
      zones: [...ctx.zones],
      localAddresses: localAddresses(),
      retainModel: ctx.runtime.retainModel !== false,
      countRecords: exportsMetrics(),
      chunkWeight: DEFAULT_CHUNK_WEIGHT,
    });
    // The records gauge is a full zone walk: only worth it when the prometheus plugin exports it.
    const exportsMetrics = (): boolean => ctx.allPlugins().some((p) => p.name === 'prometheus');
    const report = (data: LoadedData): void => {
      recordLoad({ plugin: 'kubernetes', zones: cfg.zones, objects: data.objectCount });
      const counted = data.records ?? (data.thread === 'main' && exportsMetrics() ? Promise.resolve(countRecords(plugin)) : undefined);
      void counted?.then((records) => {
        if (plugin.currentStore !== data.store) return; // newer data came meanwhile
        recordLoad({ plugin: 'kubernetes', zones: cfg.zones, objects: data.objectCount, records });
        ctx.log.info({ plugin: 'kubernetes', records }, 'kubernetes records counted (forward zones, as a zone transfer would list them)');
      });
    };

    const shared = acquireShared(sharedId([d, ctx.zones, ctx.runtime.cluster, paths, ctx.runtime.retainModel !== false]));
    plugin.onClose = shared.release;
    const remember = (data: LoadedData, files: string): void => {
      shared.slot.store = data.store;
      shared.slot.fingerprint = files;
      shared.slot.objects = data.objectCount;
      shared.slot.records = undefined;
      void data.records?.then((n) => {
        if (shared.slot.store === data.store) shared.slot.records = n;
      });
    };

    // Throws ManifestError with every problem found: the server does not start on half the data.
    plugin.loader = async () => {
      // Taken before the load: a change made while loading is picked up by the next load.
      const files = fingerprint(paths);
      const same = shared.slot.store;
      if (same && shared.slot.fingerprint === files) {
        plugin.setStore(same);
        recordLoad({ plugin: 'kubernetes', zones: cfg.zones, objects: shared.slot.objects, records: shared.slot.records });
        ctx.log.info({ plugin: 'kubernetes', zones: cfg.zones, services: same.services.size }, 'kubernetes configuration and manifests unchanged: serving the data already loaded');
        return;
      }
      const data = await loadOffThread(request(), cfg, plugin.closing.signal);
      remember(data, files);
      for (const f of data.findings) ctx.log.warn({ file: f.file, line: f.line }, f.message);
      if (Object.keys(data.ignoredKinds).length > 0) ctx.log.debug({ ignoredKinds: data.ignoredKinds }, 'manifest kinds without DNS meaning, ignored');
      plugin.setStore(data.store);
      const store = data.store;
      ctx.log.info(
        { plugin: 'kubernetes', zones: cfg.zones, manifests: paths, objects: data.objectCount, services: store.services.size, namespaces: store.namespaces.size, pods: data.pods, endpointSlices: data.endpointSlices, thread: data.thread },
        'kubernetes data loaded',
      );
      report(data);
    };

    // Manifests that change under a running server are loaded again off the serving thread and
    // swapped in one step; a change that fails to load is logged and the last good data keeps
    // serving. Changes that arrive during a load start one more load after it.
    let loading = false;
    let again = false;
    const reload = (): void => {
      if (loading) {
        again = true;
        return;
      }
      loading = true;
      void (async () => {
        do {
          again = false;
          try {
            if (plugin.closing.signal.aborted) break;
            const files = fingerprint(paths);
            const data = await loadOffThread(request(), cfg, plugin.closing.signal);
            remember(data, files);
            plugin.setStore(data.store);
            report(data);
            ctx.invalidate();
            ctx.log.info({ plugin: 'kubernetes', objects: data.objectCount, services: data.store.services.size }, 'manifests changed: kubernetes data reloaded');
          } catch (err) {
            if (plugin.closing.signal.aborted) break; // closed meanwhile: nothing failed
            const findings = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
            for (const f of findings) ctx.log.error({ plugin: 'kubernetes', file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
            if (findings.length === 0) ctx.log.error({ plugin: 'kubernetes', err }, 'manifest reload failed, still serving the previous data');
            recordLoadError({ plugin: 'kubernetes', zones: cfg.zones });
          }
        } while (again);
        loading = false;
      })();
    };
    plugin.watcher = new ManifestWatcher(paths, cfg.watchMs, reload);
    return plugin;
  },
};
