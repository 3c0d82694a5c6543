// `k8s_external [ZONE...] { apex APEX; ttl TTL; headless; fallthrough [ZONE...] }`, parsed as
// CoreDNS's plugin/k8s_external/setup.go does. The plugin answers from the kubernetes plugin of
// the same server block, found once every plugin is set up (as setup.go looks it up), through
// the ClusterDataProvider contract.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import { ttlSeconds } from '../../chain/options.js';
import { zoneArgs } from '../../chain/zones.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { isClusterDataProvider, type ClusterDataProvider } from '../../chain/cluster-data.js';
import { answeringRequest } from '../../chain/answering.js';
import { isLoopbackOrUnspecified } from '../../pkg/ip.js';
import { K8sExternalPlugin, type ExternalSource } from './plugin.js';

export interface K8sExternalConfig {
  /** Zones answered, lowercased and fully qualified (the block's when none are given). */
  zones: string[];
  /** Label(s) under each zone where the name server records live (default `dns`). */
  apex: string;
  ttl: number;
  headless: boolean;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
}

const OPTIONS = ['apex', 'ttl', 'headless', 'fallthrough'];

function parseK8sExternal(d: Directive, blockZones: readonly string[]): K8sExternalConfig {
  const fail = (line: number, reason: string): never => {
    throw new CorefileError(d.file, line, `k8s_external: ${reason}`);
  };
  const cfg: K8sExternalConfig = { zones: d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones], apex: 'dns', ttl: 5, headless: false };
  for (const o of d.block ?? []) {
    switch (o.name) {
      case 'ttl':
        if (o.args.length === 0) fail(o.line, 'ttl needs a value in seconds (0 to 3600)');
        cfg.ttl = ttlSeconds(o.args[0]!, o.line, fail);
        break;
      case 'apex':
        if (o.args.length === 0) fail(o.line, 'apex needs a name, e.g. apex dns');
        cfg.apex = o.args[0]!.toLowerCase().replace(/\.$/, '');
        break;
      case 'headless':
        cfg.headless = true;
        break;
      case 'fallthrough':
        cfg.fallthrough = zoneArgs(o.args, o);
        break;
      default:
        fail(o.line, `unknown property '${o.name}'; valid options: ${OPTIONS.join(', ')}`);
    }
  }
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
  const previous = ctx.onBuilt;
  ctx.onBuilt = (plugins) => {
    previous?.(plugins);
    const k = plugins.find((p) => p.name === 'kubernetes');
    if (!isClusterDataProvider(k)) {
      const reason = 'k8s_external: kubernetes plugin not loaded; add a kubernetes block (e.g. `kubernetes cluster.local`) to this server block';
      throw new CorefileError(d.file, d.line, reason);
    }
    kubernetes = k;
  };
  return {
    data: () => kubernetes!.clusterData(),
    ttl: () => kubernetes!.ttl,
    localAddresses: () => ctx.bindAddresses.filter((a) => !isLoopbackOrUnspecified(a)),
    // Host-name addresses are chased through the server, bounded by its lookup trail.
    lookup: (name, qtype) => ctx.lookup(name, qtype, answeringRequest()),
  };
}
