// The clusterdns command line.
import { Command } from 'commander';
import { serve } from './serve.js';
import { records, type RecordsFlags } from './records.js';

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program
    .name('clusterdns')
    .description('Authoritative DNS for Kubernetes cluster zones, built from manifest files, answering as CoreDNS would.')
    .showHelpAfterError();

  program
    .command('serve')
    .description('serve DNS for the manifests over UDP and TCP')
    .option('-c, --conf <file>', 'Corefile (CoreDNS syntax); default: the built-in kubeadm-style Corefile')
    .option('-m, --manifests <path>', 'manifest file or directory (recursive); repeat for more', collect)
    .option('-p, --port <port>', 'port of every server block whose keys name none', '53')
    .option('--service-cidr <cidr>', 'service CIDR for cluster IP allocation; repeat for dual-stack (default 10.96.0.0/12 and fd00:10:96::/112)', collect)
    .option('--log-level <level>', 'trace, debug, info, warn, error or fatal', 'info')
    .action(async (opts: { conf?: string; manifests?: string[]; port: string; logLevel: string; serviceCidr?: string[] }) => {
      await serve(opts);
    });

  program
    .command('records')
    .description('print every record the server would serve, as a sorted zone file (logs go to stderr)')
    .option('-c, --conf <file>', 'Corefile (CoreDNS syntax); default: the built-in kubeadm-style Corefile')
    .option('-m, --manifests <path>', 'manifest file or directory (recursive); repeat for more', collect)
    .option('-z, --zone <zone>', 'only this zone')
    .option('--service-cidr <cidr>', 'service CIDR for cluster IP allocation; repeat for dual-stack', collect)
    .option('--log-level <level>', 'log level (stderr)', 'warn')
    .action(async (opts: RecordsFlags) => {
      await records(opts);
    });

  await program.parseAsync(argv);
}
