// Registers `clusterdns resolv-conf` and `clusterdns resolve` (resolver-commands.ts runs them): the
// flags and help here, the commands' modules (the app, the stub resolvers) loaded only when one runs.
import type { Command } from 'commander';
import { DEFAULT_CLUSTER_DOMAIN } from '../resolver/kubelet.js';
import { addClusterFlags } from './options.js';
import type { ResolvConfFlags, ResolveFlags } from './resolver-commands.js';

const commands = () => import('./resolver-commands.js');

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function addResolverCommands(program: Command): void {
  addClusterFlags(
    program
      .command('resolv-conf')
      .description('print the /etc/resolv.conf kubelet writes for a pod (or with --hosts its /etc/hosts); -n NS without --pod: a new pod in NS'),
  )
    .option('--pod <ns/name>', 'the pod (NAMESPACE/NAME, or NAME or pod/NAME in --namespace); pods derived from workloads included')
    .option('--cluster-dns <ip>', "kubelet --cluster-dns; repeat for more (default: the kube-dns Service's cluster IP, else 10.96.0.10)", collect)
    .option('--cluster-domain <domain>', 'kubelet --cluster-domain', DEFAULT_CLUSTER_DOMAIN)
    .option('--host-resolv-conf <file>', "the node's resolv.conf (kubelet --resolv-conf); default: a built-in `nameserver 10.0.0.2`, never this machine's")
    .option('--hosts', "print the pod's kubelet-managed /etc/hosts instead")
    .action(async (opts: ResolvConfFlags) => {
      await (await commands()).resolvConfCommand(opts);
    });

  addClusterFlags(
    program
      .command('resolve')
      .description(
        "emulate a pod's stub resolver (glibc, musl or Go): the queries it sends for NAME, in order, their answers and the result; exits 2 when the lookup fails, as getent does",
      )
      .argument('<name>', 'the name the application looks up'),
  )
    .option('-t, --type <type>', 'res_search for this type (A and AAAA: getaddrinfo AF_INET / AF_INET6); default: getaddrinfo AF_UNSPEC (A and AAAA)')
    .option('--resolv-conf <file>', "a resolv.conf to use instead of the pod's")
    .option(
      '--pod <ns/name>',
      'the pod (NAMESPACE/NAME, or NAME or pod/NAME in --namespace) whose kubelet resolv.conf and /etc/hosts are used (default: a new pod in --namespace, else default)',
    )
    .option('--libc <libc>', 'glibc (2.36), musl (1.2.3) or go (1.19 pure resolver)', 'glibc')
    .option('--server <host:port>', 'send every query to this server (UDP, TCP when truncated)')
    .option('--use-nameservers', "send to the resolv.conf's nameservers on port 53 with the libc's order, retry and failover")
    .option('--hosts <file>', 'hosts file consulted first where the libc would (default with --pod: its kubelet /etc/hosts)')
    .option(
      '--hostname <name>',
      "gethostname() for glibc's and Go's default search domain (the part after the first dot) when the resolv.conf sets none (default with --pod: the pod's, the node's for hostNetwork pods; with --resolv-conf: this machine's)",
    )
    .option('--cluster-dns <ip>', "kubelet --cluster-dns; repeat for more (default: the kube-dns Service's cluster IP, else 10.96.0.10)", collect)
    .option('--cluster-domain <domain>', 'kubelet --cluster-domain', DEFAULT_CLUSTER_DOMAIN)
    .option('--host-resolv-conf <file>', "the node's resolv.conf (kubelet --resolv-conf); default: a built-in `nameserver 10.0.0.2`")
    .option('--json', 'print the trace as JSON')
    .option('--no-ipv6', "the pod has no IPv6 address, not even link-local (IPv6 disabled): glibc's getaddrinfo then sends no AAAA (AI_ADDRCONFIG)")
    .option('--audit', 'NAME is a file of names (one per line, # comments): report the queries each libc sends per name, failures and fixes')
    .action(async (name: string, opts: ResolveFlags) => {
      const c = await commands();
      if (opts.audit) await c.auditCommand(name, opts);
      else process.exitCode = c.resolveExitCode(await c.resolveCommand(name, opts));
    });
}
