// Flags shared by every command that loads a cluster, and their translation to options.
import { InvalidArgumentError, type Command } from 'commander';
import type { ClusterOptions } from '../cluster/model/model.js';
import { defaultManifestLimits, type ManifestLimits } from '../cluster/model/limits.js';
import { DEFAULT_HISTORY_BYTES } from '../cluster/admit/history.js';
import { defaultCorefileLimits, type CorefileLimits } from '../chain/corefile.js';

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
  manifestHistoryBytes?: number;
  maxCrdSchemaNodes?: number;
  maxCorefileBytes?: number;
  maxCorefileImports?: number;
  maxCorefileImportDepth?: number;
  maxCorefileTokens?: number;
  maxCorefileErrors?: number;
  maxCorefileNesting?: number;
  maxCorefileZones?: number;
  maxCorefileListeners?: number;
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
    .option(
      '--service-cidr <cidr>',
      'service CIDR for cluster IPs the manifests leave out; repeat for dual-stack (default 10.96.0.0/12 and fd00:10:96::/112)',
      collect,
    )
    .option('--pod-cidr <cidr>', 'pod CIDR for derived pods; repeat for dual-stack (default 10.244.0.0/16 and fd00:10:244::/56)', collect)
    .option('-n, --namespace <ns>', 'namespace of objects that name none, as kubectl apply -n (default "default")')
    .option(
      '--loadbalancer-cidr <cidr>',
      'LoadBalancer address pool for Services, Gateways and ingress controllers without status; repeat for dual-stack (default 172.18.255.0/24 and fc00:f853:ccd:e793:ffff::/112)',
      collect,
    )
    .option('--service-node-port-range <range>', 'node port range LOW-HIGH for NodePort/LoadBalancer Services (default 30000-32767)')
    .option('--max-manifest-file-bytes <n>', `largest manifest file read (default ${defaultManifestLimits.maxFileBytes})`, count(1))
    .option(
      '--max-manifest-object-bytes <n>',
      `largest manifest object, with YAML aliases expanded (default ${defaultManifestLimits.maxObjectBytes})`,
      count(1),
    )
    .option('--max-yaml-aliases <n>', `YAML alias expansions allowed per anchor (default ${defaultManifestLimits.maxAliases})`, count(0))
    .option(
      '--manifest-history-bytes <n>',
      `manifest text a server keeps from each load, so that an object whose new version is rejected keeps its previous version served (default ${DEFAULT_HISTORY_BYTES}; 0 keeps none)`,
      count(0),
    )
    .option(
      '--max-crd-schema-nodes <n>',
      'largest openAPIV3Schema of a manifest CRD applied to its objects, in schema nodes; a larger one leaves its kind unchecked (default 20000)',
      count(1),
    )
    .option('--max-corefile-bytes <n>', `largest Corefile or imported file read (default ${defaultCorefileLimits.maxBytes})`, count(1))
    .option('--max-corefile-imports <n>', `snippet imports, and files imported, allowed per Corefile (default ${defaultCorefileLimits.maxImports})`, count(1))
    .option('--max-corefile-import-depth <n>', `deepest nesting of imports (default ${defaultCorefileLimits.maxImportDepth})`, count(1))
    .option('--max-corefile-tokens <n>', `most tokens in a Corefile once imports are expanded (default ${defaultCorefileLimits.maxTokens})`, count(1))
    .option('--max-corefile-errors <n>', `most Corefile errors reported in one run (default ${defaultCorefileLimits.maxErrors})`, count(1))
    .option('--max-corefile-nesting <n>', `deepest nesting of { } blocks in a Corefile (default ${defaultCorefileLimits.maxNesting})`, count(1))
    .option(
      '--max-corefile-zones <n>',
      `most zones of all server block keys, and of one directive's zone arguments (default ${defaultCorefileLimits.maxZones})`,
      count(1),
    )
    .option(
      '--max-corefile-listeners <n>',
      `most listen address and port pairs of all server blocks (default ${defaultCorefileLimits.maxListeners})`,
      count(1),
    );
}

/** The --max-corefile-* flags, for the App (AppOptions.corefileLimits) or a parse (ParseOptions.limits). */
export function corefileLimits(flags: ClusterFlags): Partial<CorefileLimits> {
  const limits: Partial<CorefileLimits> = {};
  if (flags.maxCorefileBytes !== undefined) limits.maxBytes = flags.maxCorefileBytes;
  if (flags.maxCorefileImports !== undefined) limits.maxImports = flags.maxCorefileImports;
  if (flags.maxCorefileImportDepth !== undefined) limits.maxImportDepth = flags.maxCorefileImportDepth;
  if (flags.maxCorefileTokens !== undefined) limits.maxTokens = flags.maxCorefileTokens;
  if (flags.maxCorefileErrors !== undefined) limits.maxErrors = flags.maxCorefileErrors;
  if (flags.maxCorefileNesting !== undefined) limits.maxNesting = flags.maxCorefileNesting;
  if (flags.maxCorefileZones !== undefined) limits.maxZones = flags.maxCorefileZones;
  if (flags.maxCorefileListeners !== undefined) limits.maxListeners = flags.maxCorefileListeners;
  return limits;
}

export function clusterOptions(flags: ClusterFlags): Partial<ClusterOptions> | undefined {
  const out: {
    serviceCIDRs?: string[];
    podCIDRs?: string[];
    defaultNamespace?: string;
    manifestLimits?: Partial<ManifestLimits>;
    loadBalancerCIDRs?: string[];
    nodePortRange?: string;
    admissionHistoryBytes?: number;
    maxCrdSchemaNodes?: number;
  } = {};
  if (flags.serviceCidr) out.serviceCIDRs = flags.serviceCidr;
  if (flags.podCidr) out.podCIDRs = flags.podCidr;
  if (flags.namespace) out.defaultNamespace = flags.namespace;
  if (flags.loadbalancerCidr) out.loadBalancerCIDRs = flags.loadbalancerCidr;
  if (flags.serviceNodePortRange) out.nodePortRange = flags.serviceNodePortRange;
  if (flags.manifestHistoryBytes !== undefined) out.admissionHistoryBytes = flags.manifestHistoryBytes;
  if (flags.maxCrdSchemaNodes !== undefined) out.maxCrdSchemaNodes = flags.maxCrdSchemaNodes;
  const limits: { maxFileBytes?: number; maxObjectBytes?: number; maxAliases?: number } = {};
  if (flags.maxManifestFileBytes !== undefined) limits.maxFileBytes = flags.maxManifestFileBytes;
  if (flags.maxManifestObjectBytes !== undefined) limits.maxObjectBytes = flags.maxManifestObjectBytes;
  if (flags.maxYamlAliases !== undefined) limits.maxAliases = flags.maxYamlAliases;
  if (Object.keys(limits).length > 0) out.manifestLimits = limits;
  return Object.keys(out).length > 0 ? (out as Partial<ClusterOptions>) : undefined;
}
