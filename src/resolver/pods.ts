// Which pod a lookup is made from, and the inputs kubelet would use for its resolv.conf.
import type { ClusterModel, Pod } from '../cluster/model/model.js';
import { editDistance } from '../pkg/spelling.js';
import { DEFAULT_CLUSTER_DNS, DEFAULT_CLUSTER_DOMAIN, DEFAULT_HOST_RESOLV_CONF, type PodDNSInput } from './kubelet.js';

/** The pod named by --pod (NS/NAME, or NAME in --namespace / default), or an error listing similar pods. */
function findPod(model: ClusterModel | undefined, spec: string, defaultNs: string): Pod {
  const [ns, name] = spec.includes('/') ? (spec.split('/', 2) as [string, string]) : [defaultNs, spec];
  const pod = model?.pods.find((p) => p.namespace === ns && p.name === name);
  if (pod) return pod;
  if (!model) throw new Error(`pod ${ns}/${name}: no manifests loaded; pass --manifests PATH (or --namespace NS for a pod that does not exist yet)`);
  const key = `${ns}/${name}`;
  const similar = model.pods
    .map((p) => `${p.namespace}/${p.name}`)
    .map((k) => ({ k, d: Math.min(editDistance(k, key), k.includes(name) || name.includes(k.split('/')[1]!) ? 1 : Infinity) }))
    .sort((a, b) => a.d - b.d || (a.k < b.k ? -1 : 1))
    .slice(0, 5)
    .map((x) => x.k);
  throw new Error(`no pod ${key} in the manifests (including pods derived from workloads)${similar.length ? `; similar: ${similar.join(', ')}` : ''}`);
}

export interface PodContext {
  pod: PodDNSInput;
  /** Found in the model (false for a --namespace pod that does not exist yet). */
  exists: boolean;
  clusterDNS: string[];
  clusterDomain: string;
  hostResolvConf: string;
}

export interface PodContextOptions {
  /** NS/NAME, or NAME in `namespace`. */
  pod?: string;
  /** Namespace of a pod that does not exist yet (or of a bare pod NAME); default `default`. */
  namespace?: string;
  clusterDns?: string[];
  clusterDomain?: string;
  /** The node's resolv.conf text; default a typical node file. */
  hostResolvConf?: string;
}

/** kubelet's inputs for the target pod: the pod, cluster DNS IPs and domain, the node's resolv.conf. */
export function podDnsContext(model: ClusterModel | undefined, opts: PodContextOptions): PodContext {
  const defaultNs = opts.namespace ?? 'default';
  let pod: PodDNSInput;
  let exists = false;
  if (opts.pod) {
    pod = findPod(model, opts.pod, defaultNs);
    exists = true;
  } else pod = { namespace: defaultNs, name: 'new-pod' };
  const kubeDns = model?.services.find((s) => s.namespace === 'kube-system' && s.name === 'kube-dns' && !s.headless && s.clusterIPs.length > 0);
  const clusterDNS = opts.clusterDns && opts.clusterDns.length > 0 ? opts.clusterDns : [kubeDns?.clusterIPs[0] ?? DEFAULT_CLUSTER_DNS];
  const clusterDomain = opts.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  const hostResolvConf = opts.hostResolvConf ?? DEFAULT_HOST_RESOLV_CONF;
  return { pod, exists, clusterDNS, clusterDomain, hostResolvConf };
}
