// Every plugin clusterdns implements, in one list: the registry the server is built from (as
// CoreDNS's plugin.cfg lists what a build contains). Execution order is not this list's order but
// CoreDNS's (`coreDnsOrder` in chain/registry.ts), whatever order a Corefile names them in.
// A new plugin is added here and given its place there.
import type { PluginDefinition } from '../chain/registry.js';
import { autopathPlugin } from './autopath/setup.js';
import { bindPlugin } from './bind/setup.js';
import { cachePlugin } from './cache/setup.js';
import { errorsPlugin } from './errors/setup.js';
import { etcdPlugin } from './etcd/setup.js';
import { filePlugin } from './file/setup.js';
import { forwardPlugin } from './forward/setup.js';
import { grpcServerPlugin } from './grpc_server/setup.js';
import { healthPlugin } from './health/setup.js';
import { hostsPlugin } from './hosts/setup.js';
import { httpsPlugin } from './https/setup.js';
import { k8sExternalPlugin } from './k8s_external/setup.js';
import { k8sGatewayPlugin } from './k8s_gateway/setup.js';
import { kubernetesPlugin } from './kubernetes/setup.js';
import { loadbalancePlugin } from './loadbalance/setup.js';
import { logPlugin } from './log/setup.js';
import { loopPlugin } from './loop/setup.js';
import { prometheusPlugin } from './prometheus/setup.js';
import { readyPlugin } from './ready/setup.js';
import { reloadPlugin } from './reload/setup.js';
import { rewritePlugin } from './rewrite/setup.js';
import { timeoutsPlugin } from './timeouts/setup.js';
import { tlsPlugin } from './tls/setup.js';
import { transferPlugin } from './transfer/setup.js';

export const plugins: readonly PluginDefinition[] = [
  autopathPlugin,
  bindPlugin,
  cachePlugin,
  errorsPlugin,
  etcdPlugin,
  filePlugin,
  forwardPlugin,
  grpcServerPlugin,
  healthPlugin,
  hostsPlugin,
  httpsPlugin,
  k8sExternalPlugin,
  k8sGatewayPlugin,
  kubernetesPlugin,
  loadbalancePlugin,
  logPlugin,
  loopPlugin,
  prometheusPlugin,
  readyPlugin,
  reloadPlugin,
  rewritePlugin,
  timeoutsPlugin,
  tlsPlugin,
  transferPlugin,
];
