// Registers the kubernetes plugin: `kubernetes [ZONES...] { ... }` -> a validated KubernetesConfig
// (config.ts) and the plugin; its data is loaded off the serving thread when the server builds, and
// again when the manifests change (loading.ts).
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import type { ClusterModel } from '../../cluster/model/model.js';
import { isSubdomain } from '../../pkg/names.js';
import { parseKubernetes, type KubernetesConfig } from './config.js';
import { wireLoading } from './loading.js';
import { serverAddresses } from './ns.js';
import { KubernetesPlugin } from './plugin.js';
import { KubernetesStore } from './store.js';

declare module '../../chain/cluster-data.js' {
  interface ClusterData {
    /** The model the data was built from, when the app keeps it (RuntimeOptions.retainModel). */
    readonly model: ClusterModel | undefined;
  }
}

export const kubernetesPlugin: PluginDefinition = {
  name: 'kubernetes',
  setup(d, ctx) {
    const cfg = parseKubernetes(d, ctx.zones);
    warnZonesOutsideBlock(cfg, d, ctx);
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'kubernetes has no manifests to serve: pass --manifests PATH or add `manifests PATH` to this block');
    }
    // ns.dns.<zone>'s addresses when no kube-dns Service names the server (ns.ts); `bindOnly`
    // leaves this machine's interfaces out (records).
    const localAddresses = (bindOnly?: boolean): string[] => serverAddresses(ctx.bindAddresses, bindOnly ? {} : undefined);
    const plugin = new KubernetesPlugin(cfg, KubernetesStore.empty(cfg), { lookup: ctx.lookup, localAddresses }, paths);
    wireLoading(plugin, { directive: d, ctx, paths, localAddresses: () => localAddresses() });
    return plugin;
  },
};

/** CoreDNS loads such a zone all the same (OriginsFromArgsOrServerBlock); no query reaches it. */
function warnZonesOutsideBlock(cfg: KubernetesConfig, d: Directive, ctx: BlockContext): void {
  for (const z of cfg.zones.filter((z) => !ctx.zones.some((b) => isSubdomain(z, b)))) {
    const why = `kubernetes zone ${z} is not inside the server block's zones (${ctx.zones.join(' ')}); queries for it never reach the plugin`;
    ctx.log.warn({ file: d.file, line: d.line }, why);
  }
}
