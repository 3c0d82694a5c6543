// Registers the kubernetes plugin: parse its block, load the manifests it serves, build the store.
import type { PluginDefinition } from '../../chain/registry.js';
import { loadManifests } from '../../cluster/load.js';
import { ManifestError } from '../../cluster/model.js';
import { ManifestWatcher } from './watch.js';
import { recordLoad, recordLoadError } from '../../metrics/index.js';
import { KubernetesPlugin } from './plugin.js';
import { parseKubernetes } from './setup.js';
import { KubernetesStore } from './store.js';
import { CorefileError } from '../../chain/corefile.js';
import { serverAddresses } from './ns.js';

/** Records of the forward zones, counted as a zone transfer lists them (SOA once). */
function countRecords(plugin: KubernetesPlugin): number {
  return plugin.cfg.zones.reduce((n, z) => {
    const rrs = plugin.transfer(z);
    return rrs ? n + rrs.length - 1 : n;
  }, 0);
}

export const kubernetesPlugin: PluginDefinition = {
  name: 'kubernetes',
  setup(d, ctx) {
    const cfg = parseKubernetes(d, ctx.zones);
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'kubernetes has no manifests to serve: pass --manifests PATH or add `manifests PATH` to this block');
    }
    // Throws ManifestError with every problem found: the server does not start on half the data.
    const { model, findings } = loadManifests(paths, ctx.runtime.cluster);
    for (const f of findings) ctx.log.warn({ file: f.file, line: f.line }, f.message);
    if (model.ignoredKinds && model.ignoredKinds.size > 0) {
      ctx.log.debug({ ignoredKinds: Object.fromEntries(model.ignoredKinds) }, 'manifest kinds without DNS meaning, ignored');
    }
    const store = new KubernetesStore(model, cfg);
    ctx.log.info(
      { plugin: 'kubernetes', zones: cfg.zones, manifests: paths, objects: model.objectCount, services: store.services.size, namespaces: store.namespaces.size, pods: model.pods.length, endpointSlices: model.endpointSlices.length },
      'kubernetes data loaded',
    );
    const plugin = new KubernetesPlugin(
      cfg,
      store,
      {
        lookup: ctx.lookup,
        localAddresses: (bindOnly) => serverAddresses(ctx.bindAddresses, bindOnly ? {} : undefined),
      },
      paths,
    );
    const records = countRecords(plugin);
    recordLoad({ plugin: 'kubernetes', zones: cfg.zones, objects: model.objectCount, records });
    ctx.log.info({ plugin: 'kubernetes', records }, 'kubernetes records built (forward zones, as a zone transfer would list them)');
    // Manifests that change under a running server are reloaded: a new store is built and swapped
    // in one step; a change that fails to load is logged and the last good data keeps serving.
    const reload = (): void => {
      try {
        const next = loadManifests(paths, ctx.runtime.cluster);
        const nextStore = new KubernetesStore(next.model, cfg);
        plugin.setStore(nextStore);
        recordLoad({ plugin: 'kubernetes', zones: cfg.zones, objects: next.model.objectCount, records: countRecords(plugin) });
        ctx.invalidate();
        ctx.log.info({ plugin: 'kubernetes', objects: next.model.objectCount, services: nextStore.services.size }, 'manifests changed: kubernetes data reloaded');
      } catch (err) {
        const findings = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
        for (const f of findings) ctx.log.error({ plugin: 'kubernetes', file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
        if (findings.length === 0) ctx.log.error({ plugin: 'kubernetes', err }, 'manifest reload failed, still serving the previous data');
        recordLoadError({ plugin: 'kubernetes', zones: cfg.zones });
      }
    };
    plugin.watcher = new ManifestWatcher(paths, cfg.watchMs, reload);
    return plugin;
  },
};
