// Flags shared by every command that loads a cluster, and their translation to options.
import { InvalidArgumentError, type Command } from 'commander';
import type { ClusterOptions } from '../cluster/model.js';
import { defaultManifestLimits, type ManifestLimits } from '../cluster/yaml-docs.js';

export interface ClusterFlags {
  conf?: string;
  manifests?: string[];
  serviceCidr?: string[];
  podCidr?: string[];
  namespace?: string;
  loadbalancerCidr?: string[];
  serviceNodePortRange?: string;
  maxManifestFileBytes?: number;
  maxManifestObjectBytes?: number;
  maxYamlAliases?: number;
}

/** Parser of a whole-number flag >= min: commander reports anything else with the flag's name. */
const count =
  (min: number) =>
  (text: string): number => {
    const n = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`give a whole number of at least ${min}`);
    return n;
  };

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function addClusterFlags(cmd: Command): Command {
  return cmd
    .option('-c, --conf <file>', 'Corefile (CoreDNS syntax); default: the built-in kubeadm-style Corefile')
    .option('-m, --manifests <path>', 'manifest file or directory (recursive); repeat for more', collect)
    .option('--service-cidr <cidr>', 'service CIDR for cluster IPs the manifests leave out; repeat for dual-stack (default 10.96.0.0/12 and fd00:10:96::/112)', collect)
    .option('--pod-cidr <cidr>', 'pod CIDR for derived pods; repeat for dual-stack (default 10.244.0.0/16 and fd00:10:244::/56)', collect)
    .option('-n, --namespace <ns>', 'namespace of objects that name none, as kubectl apply -n (default "default")')
    .option('--loadbalancer-cidr <cidr>', 'LoadBalancer address pool for Services, Gateways and ingress controllers without status; repeat for dual-stack (default 172.18.255.0/24 and fc00:f853:ccd:e793:ffff::/112)', collect)
    .option('--service-node-port-range <range>', 'node port range LOW-HIGH for NodePort/LoadBalancer Services (default 30000-32767)')
    .option('--max-manifest-file-bytes <n>', `largest manifest file read (default ${defaultManifestLimits.maxFileBytes})`, count(1))
    .option('--max-manifest-object-bytes <n>', `largest manifest object, with YAML aliases expanded (default ${defaultManifestLimits.maxObjectBytes})`, count(1))
    .option('--max-yaml-aliases <n>', `YAML alias expansions allowed per anchor (default ${defaultManifestLimits.maxAliases})`, count(0));
}

export function clusterOptions(flags: ClusterFlags): Partial<ClusterOptions> | undefined {
  const out: {
    serviceCIDRs?: string[];
    podCIDRs?: string[];
    defaultNamespace?: string;
    manifestLimits?: Partial<ManifestLimits>;
    loadBalancerCIDRs?: string[];
    nodePortRange?: string;
  } = {};
  if (flags.serviceCidr) out.serviceCIDRs = flags.serviceCidr;
  if (flags.podCidr) out.podCIDRs = flags.podCidr;
  if (flags.namespace) out.defaultNamespace = flags.namespace;
  if (flags.loadbalancerCidr) out.loadBalancerCIDRs = flags.loadbalancerCidr;
  if (flags.serviceNodePortRange) out.nodePortRange = flags.serviceNodePortRange;
  const limits: { maxFileBytes?: number; maxObjectBytes?: number; maxAliases?: number } = {};
  if (flags.maxManifestFileBytes !== undefined) limits.maxFileBytes = flags.maxManifestFileBytes;
  if (flags.maxManifestObjectBytes !== undefined) limits.maxObjectBytes = flags.maxManifestObjectBytes;
  if (flags.maxYamlAliases !== undefined) limits.maxAliases = flags.maxYamlAliases;
  if (Object.keys(limits).length > 0) out.manifestLimits = limits;
  return Object.keys(out).length > 0 ? (out as Partial<ClusterOptions>) : undefined;
}
