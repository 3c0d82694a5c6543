// Registers k8s_gateway. The upstream plugin keeps its own connection to the API server; here it
// reads the cluster model of a kubernetes plugin in the same block when that one loads the same
// manifests (one load, and its reloads are seen), else loads and watches the manifests itself.
import { CorefileError } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { loadManifests } from '../../cluster/load.js';
import { ManifestError, type ClusterModel } from '../../cluster/model.js';
import { KubernetesPlugin } from '../kubernetes/plugin.js';
import { ManifestWatcher } from '../kubernetes/watch.js';
import { HostIndex } from './hosts.js';
import { K8sGatewayPlugin } from './plugin.js';
import { parseK8sGateway } from './setup.js';

export const k8sGatewayPlugin: PluginDefinition = {
  name: 'k8s_gateway',
  setup(d, ctx) {
    const cfg = parseK8sGateway(d, ctx.zones);
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'k8s_gateway has no manifests to read: pass --manifests PATH or add `manifests PATH` to its block');
    }
    let model: () => ClusterModel = () => {
      throw new Error('k8s_gateway used before its server block was built');
    };
    let built: { model: ClusterModel; index: HostIndex } | undefined;
    const index = (): HostIndex => {
      const m = model();
      if (built?.model !== m) built = { model: m, index: new HostIndex(m, cfg) };
      return built.index;
    };
    const plugin = new K8sGatewayPlugin(cfg, { index, lookup: ctx.lookup });
    const previous = ctx.onBuilt;
    ctx.onBuilt = (plugins) => {
      previous?.(plugins);
      const same = (a: readonly string[]): boolean => a.length === paths.length && a.every((x, i) => x === paths[i]);
      const k = plugins.find((p): p is KubernetesPlugin => p instanceof KubernetesPlugin && same(p.manifestPaths));
      if (k) model = () => k.currentStore.model;
      else {
        let own = loadManifests(paths, ctx.runtime.cluster).model;
        model = () => own;
        plugin.watcher = new ManifestWatcher(paths, cfg.watchMs, () => {
          try {
            own = loadManifests(paths, ctx.runtime.cluster).model;
            ctx.invalidate();
            ctx.log.info({ plugin: 'k8s_gateway' }, 'manifests changed: k8s_gateway hosts re-indexed');
          } catch (err) {
            const errors = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
            for (const f of errors) ctx.log.error({ plugin: 'k8s_gateway', file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
            if (errors.length === 0) ctx.log.error({ plugin: 'k8s_gateway', err }, 'manifest reload failed, still serving the previous data');
          }
        });
      }
      const idx = index();
      ctx.log.info(
        { plugin: 'k8s_gateway', zones: cfg.zones, resources: cfg.resources, shared: k !== undefined, hosts: Object.fromEntries(cfg.resources.map((r) => [r, idx.hosts(r).length])) },
        'k8s_gateway hosts indexed',
      );
    };
    return plugin;
  },
};
