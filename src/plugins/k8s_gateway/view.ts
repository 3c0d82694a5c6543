// k8s_gateway's view of the manifest feed: the host index, built in the feed's loader thread from
// each load's model and handed to the serving thread in one part (its typed arrays moved), so a
// large route set costs the serving thread only the index's arrival.
import type { ViewInput, ViewOutput } from '../../cluster/feed-protocol.js';
import type { ViewSpec } from '../../cluster/feed-thread.js';
import { HostIndex, hostIndexBuffers, indexHosts, type HostIndexData } from './hosts.js';
import type { K8sGatewayConfig } from './config.js';

/** Runs in the loader thread; `args` is the plugin's configuration (plain data). */
export function buildView(input: ViewInput, args: unknown): ViewOutput {
  const index = indexHosts(input.model, args as K8sGatewayConfig);
  return { parts: [{ part: index, transfer: hostIndexBuffers(index) }] };
}

export function gatewayView(cfg: K8sGatewayConfig): ViewSpec<HostIndex> {
  return {
    module: new URL('./view.js', import.meta.url).href,
    build: buildView,
    args: cfg,
    assemble: () => {
      let data: HostIndexData | undefined;
      return {
        add: (part) => void (data = part as HostIndexData),
        finish: () => {
          if (!data) throw new Error('k8s_gateway: the host index did not arrive');
          return new HostIndex(data);
        },
      };
    },
  };
}
