// Registers k8s_external: it answers from the kubernetes plugin of the same server block, as
// CoreDNS's setup.go looks that plugin up once every plugin is set up.
import { CorefileError } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { isLoopbackOrUnspecified } from '../../pkg/ip.js';
import { answeringRequest } from '../k8s_gateway/nested.js';
import { KubernetesPlugin } from '../kubernetes/plugin.js';
import { K8sExternalPlugin, type ExternalSource } from './plugin.js';
import { parseK8sExternal } from './setup.js';

export const k8sExternalPlugin: PluginDefinition = {
  name: 'k8s_external',
  setup(d, ctx) {
    const cfg = parseK8sExternal(d, ctx.zones);
    let kubernetes: KubernetesPlugin | undefined;
    const previous = ctx.onBuilt;
    ctx.onBuilt = (plugins) => {
      previous?.(plugins);
      const k = plugins.find((p) => p.name === 'kubernetes');
      if (!(k instanceof KubernetesPlugin)) {
        throw new CorefileError(d.file, d.line, 'k8s_external: kubernetes plugin not loaded; add a kubernetes block (e.g. `kubernetes cluster.local`) to this server block');
      }
      kubernetes = k;
    };
    const source: ExternalSource = {
      store: () => kubernetes!.currentStore,
      ttl: () => kubernetes!.cfg.ttl,
      localAddresses: () => ctx.bindAddresses.filter((a) => !isLoopbackOrUnspecified(a)),
      // Host-name addresses are chased through the server, bounded by its lookup trail.
      lookup: (name, qtype) => ctx.lookup(name, qtype, answeringRequest()),
    };
    ctx.log.info({ plugin: 'k8s_external', zones: cfg.zones, apex: cfg.apex, headless: cfg.headless }, 'k8s_external zones');
    return new K8sExternalPlugin(cfg, () => source);
  },
};
