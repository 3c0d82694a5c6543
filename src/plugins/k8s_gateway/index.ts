// Registers k8s_gateway. Like the upstream plugin, which keeps its own connection to the API
// server, it reads the manifests itself (the block's `manifests`, else --manifests) when the
// server builds, and again when they change.
import { CorefileError } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { loadManifests } from '../../cluster/load.js';
import { ManifestError } from '../../cluster/model.js';
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
    // The host index is small (names and addresses); the model it comes from is not kept.
    let index: HostIndex | undefined;
    const build = (): HostIndex => new HostIndex(loadManifests(paths, ctx.runtime.cluster).model, cfg);
    const plugin = new K8sGatewayPlugin(cfg, {
      index: () => {
        if (!index) throw new Error('k8s_gateway answered before its manifests were loaded');
        return index;
      },
      lookup: ctx.lookup,
    });
    // Throws ManifestError with every problem found: the server does not start on half the data.
    plugin.loader = async () => {
      index = build();
      ctx.log.info({ plugin: 'k8s_gateway', zones: cfg.zones, resources: cfg.resources, hosts: Object.fromEntries(cfg.resources.map((r) => [r, index!.hosts(r).length])) }, 'k8s_gateway hosts indexed');
    };
    plugin.watcher = new ManifestWatcher(paths, cfg.watchMs, () => {
      try {
        index = build();
        ctx.invalidate();
        ctx.log.info({ plugin: 'k8s_gateway' }, 'manifests changed: k8s_gateway hosts re-indexed');
      } catch (err) {
        const errors = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
        for (const f of errors) ctx.log.error({ plugin: 'k8s_gateway', file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
        if (errors.length === 0) ctx.log.error({ plugin: 'k8s_gateway', err }, 'manifest reload failed, still serving the previous data');
      }
    });
    return plugin;
  },
};
