// Flags shared by every command that loads a cluster, and their translation to options.
import type { Command } from 'commander';
import type { ClusterOptions } from '../cluster/model.js';
import { defaultCorefileLimits, setCorefileLimits, type CorefileLimits } from '../chain/corefile.js';

export interface ClusterFlags {
  conf?: string;
  manifests?: string[];
  serviceCidr?: string[];
  podCidr?: string[];
  namespace?: string;
  corefileMaxBytes?: string;
  corefileMaxImports?: string;
  corefileMaxImportDepth?: string;
  corefileMaxTokens?: string;
  corefileMaxErrors?: string;
}

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
    .option('--corefile-max-bytes <n>', `largest Corefile or imported file read, in bytes (default ${defaultCorefileLimits.maxBytes})`)
    .option('--corefile-max-imports <n>', `most snippet imports, and most files imported, per Corefile (default ${defaultCorefileLimits.maxImports})`)
    .option('--corefile-max-import-depth <n>', `deepest nesting of imports (default ${defaultCorefileLimits.maxImportDepth})`)
    .option('--corefile-max-tokens <n>', `most tokens in a Corefile once imports are expanded (default ${defaultCorefileLimits.maxTokens})`)
    .option('--corefile-max-errors <n>', `most Corefile errors reported in one run (default ${defaultCorefileLimits.maxErrors})`);
}

/** Applies the --corefile-max-* flags to every Corefile parse of this process. */
export function applyCorefileLimits(flags: ClusterFlags): void {
  const limits: Partial<CorefileLimits> = {};
  const set = (key: keyof CorefileLimits, flag: string, value: string | undefined): void => {
    if (value === undefined) return;
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new Error(`${flag} ${value}: must be a whole number of at least 1`);
    limits[key] = Number(value);
  };
  set('maxBytes', '--corefile-max-bytes', flags.corefileMaxBytes);
  set('maxImports', '--corefile-max-imports', flags.corefileMaxImports);
  set('maxImportDepth', '--corefile-max-import-depth', flags.corefileMaxImportDepth);
  set('maxTokens', '--corefile-max-tokens', flags.corefileMaxTokens);
  set('maxErrors', '--corefile-max-errors', flags.corefileMaxErrors);
  setCorefileLimits(limits);
}

export function clusterOptions(flags: ClusterFlags): Partial<ClusterOptions> | undefined {
  const out: { serviceCIDRs?: string[]; podCIDRs?: string[]; defaultNamespace?: string } = {};
  if (flags.serviceCidr) out.serviceCIDRs = flags.serviceCidr;
  if (flags.podCidr) out.podCIDRs = flags.podCidr;
  if (flags.namespace) out.defaultNamespace = flags.namespace;
  return Object.keys(out).length > 0 ? (out as Partial<ClusterOptions>) : undefined;
}
