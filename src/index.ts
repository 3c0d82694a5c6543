// clusterdns as a library: `import { loadCluster } from 'clusterdns'`.
export {
  loadCluster,
  Cluster,
  type LoadClusterOptions,
  type ResolveOptions,
  type RunningServer,
  type Trace,
  type Libc,
  type ClusterModel,
  type Pod,
  type Service,
  type CorefileLimits,
} from './api.js';
