// `k8s_external [ZONE...] { apex APEX; ttl TTL; headless; fallthrough [ZONE...] }`, parsed as
// CoreDNS's plugin/k8s_external/setup.go does. The plugin answers from the kubernetes plugin of
// the same server block, found once every plugin is set up (as setup.go looks it up), through
// the ClusterDataProvider contract.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { isClusterDataProvider, type ClusterDataProvider } from '../../chain/cluster-data.js';
import { answeringRequest } from '../../chain/answering.js';
import { isLoopbackOrUnspecified } from '../../pkg/ip.js';
import { K8sExternalPlugin, type ExternalSource } from './plugin.js';
import { DEFAULT_MAX_LOOKUPS, type K8sExternalConfig } from './config.js';

function parseK8sExternal(d: Directive, blockZones: readonly string[]): K8sExternalConfig {
  const r = OptionReader.of(d);
  const cfg: K8sExternalConfig = { zones: r.zones(0, blockZones), apex: 'dns', ttl: 5, headless: false };
  r.block({
    apex: (o) => {
      cfg.apex = o.arity(1, 1, 'apex NAME', 'apex dns').arg(0)!.toLowerCase().replace(/\.$/, '');
    },
    ttl: (o) => {
      cfg.ttl = o.arity(1, 1, 'ttl SECONDS', 'ttl 5').ttl(0);
    },
    // CoreDNS reads no arguments here and ignores any.
    headless: () => {
      cfg.headless = true;
    },
    fallthrough: (o) => {
      cfg.fallthrough = o.fallthrough();
    },
    max_lookups: (o) => {
      cfg.maxLookups = o.arity(1, 1, 'max_lookups N', `max_lookups ${DEFAULT_MAX_LOOKUPS}`).int(0, 'N', { min: 1, max: 1000 });
    },
  });
  return cfg;
}

export const k8sExternalPlugin: PluginDefinition = {
  name: 'k8s_external',
  setup(d, ctx) {
    const cfg = parseK8sExternal(d, ctx.zones);
    const source = externalSource(d, ctx);
    ctx.log.info({ plugin: 'k8s_external', zones: cfg.zones, apex: cfg.apex, headless: cfg.headless }, 'k8s_external zones');
    return new K8sExternalPlugin(cfg, () => source);
  },
};

/** The kubernetes plugin's data as this plugin reads it; the block fails to build without one. */
function externalSource(d: Directive, ctx: BlockContext): ExternalSource {
  let kubernetes: ClusterDataProvider | undefined;
  ctx.onBuilt((plugins) => {
    const k = plugins.find((p) => p.name === 'kubernetes');
    if (!isClusterDataProvider(k)) {
      const reason = 'k8s_external: kubernetes plugin not loaded; add a kubernetes block (e.g. `kubernetes cluster.local`) to this server block';
      throw new CorefileError(d.file, d.line, reason);
    }
    kubernetes = k;
  });
  return {
    data: () => kubernetes!.clusterData(),
    ttl: () => kubernetes!.ttl,
    localAddresses: () => ctx.bindAddresses.filter((a) => !isLoopbackOrUnspecified(a)),
    // Host-name addresses are chased through the server, bounded by its lookup trail.
    lookup: (name, qtype) => ctx.lookup(name, qtype, answeringRequest()),
  };
}
