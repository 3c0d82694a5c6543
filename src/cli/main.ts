// The clusterdns command line.
import { Command, InvalidArgumentError, Option } from 'commander';
import type { serve as Serve } from './serve.js';
import type { RecordsFlags } from './records.js';
import type { CheckFlags } from './check.js';
import { EXIT_USAGE } from './exit-codes.js';
import { OUTPUT_FORMATS } from './findings-output.js';
import { addClusterFlags } from './options.js';
import { DEFAULT_MAX_ANSWER_RECORDS, DEFAULT_MAX_LOOKUP_DEPTH } from '../server/limits.js';
import { addResolverCommands } from './resolver-register.js';
import { packageVersion } from './version.js';
import { addTransportFlags } from './transport-flags.js';
import type { SyncFlags } from './sync.js';
import type { UiFlags } from './ui.js';
import type { DiffFlags } from './diff.js';

// Each command's module (and through it the app, the plugins, the metrics) loads when the command
// runs: `--help`, `--version` and usage errors start in half the time without them.

/** A whole number >= 0, for flags that count. */
function wholeNumber(text: string): number {
  const n = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('give a whole number (0 or more)');
  return n;
}

export async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program
    .name('clusterdns')
    .description('Authoritative DNS for Kubernetes cluster zones, built from manifest files, answering as CoreDNS would.')
    .version(packageVersion(), '-V, --version', 'print the version (from package.json) and exit')
    .showHelpAfterError();

  const serveCommand = addClusterFlags(program.command('serve').description('serve DNS for the manifests over UDP and TCP'));
  addTransportFlags(serveCommand);
  serveCommand
    .option('-p, --port <port>', 'port of every server block whose keys name none', '53')
    .option('--log-level <level>', 'trace, debug, info, warn, error or fatal', 'info')
    .option('--log-queries', 'log every query received (name, type, client, rcode sent), to trace what clients ask')
    .option('--workers <n>', 'worker processes sharing the ports (a number or auto = one per core); default 1')
    .option(
      '--worker-loads <n>',
      'with --workers: workers that may load manifests at once (at start and on reloads); each load peaks at several times the data it builds (default 1)',
    )
    .option(
      '--worker-load-timeout <duration>',
      'with --workers: a load permit not given back within this long (a frozen worker) is taken back, so other workers can load (default 2m)',
    )
    .option('--upstream-resolv-conf <file>', 'the resolv.conf the built-in default Corefile forwards to (default /etc/resolv.conf)')
    .option('--max-lookup-depth <n>', 'internal lookups (ExternalName targets through the server) one query may nest', String(DEFAULT_MAX_LOOKUP_DEPTH))
    .option('--answer-cache-bytes <size>', 'bytes of encoded answers each listener keeps (e.g. 33554432, 32MiB, 0 = off)', '32MiB')
    .option(
      '--max-answer-records <n>',
      'records one answer may carry; past it the answer keeps the first ones and has TC set (zone transfers are not capped)',
      String(DEFAULT_MAX_ANSWER_RECORDS),
    )
    .option('--http-max-connections <n>', 'connections per health/ready/metrics listener; beyond it the oldest idle one is closed (default 128)')
    .option(
      '--http-idle-timeout <duration>',
      'health/ready/metrics: close a connection with no request after this long; headers must arrive within it (default 5s)',
    )
    .option('--http-request-timeout <duration>', 'health/ready/metrics: a whole request must arrive within this long (default 10s)')
    .option('--strict', 'refuse to start (and to reload) when any manifest object has an error, instead of serving everything else')
    .option(
      '--manifest-image-dir <dir>',
      'where the image of the last manifest load is kept, so that a start on unchanged files answers without parsing them (default $XDG_CACHE_HOME/clusterdns, else ~/.cache/clusterdns)',
    )
    .option('--manifest-image-bytes <size>', 'byte budget of the image directory; the least recently used images go past it (default 1GiB; 0 = off)')
    .option('--no-manifest-image', 'neither read nor write a manifest image: every start parses the manifests')
    .option(
      '--ui <addr>',
      'also serve the page of clusterdns ui on HOST:PORT (a bare PORT is on loopback); a non-loopback address serves the manifests to whoever reaches it',
    )
    .action(async (opts: Parameters<typeof Serve>[0]) => {
      const { serve } = await import('./serve.js');
      await serve(opts);
    });

  addClusterFlags(program.command('records').description('print every record the server would serve, as a sorted zone file (logs go to stderr)'))
    .option('-z, --zone <zone>', 'only this zone')
    .addOption(
      new Option('--output <format>', 'text (a zone file) or json (an array of {name, ttl, class, type, data})').choices(['text', 'json']).default('text'),
    )
    .option('--log-level <level>', 'log level (stderr)', 'warn')
    .action(async (opts: RecordsFlags) => {
      const { records } = await import('./records.js');
      await records(opts);
    });

  const checkCommand = addClusterFlags(
    program
      .command('check')
      .description('validate the Corefile and manifests and warn about what breaks DNS; exit 0 clean or warnings only, 1 errors, 2 usage'),
  )
    .option('--strict', 'warnings fail the check too (exit 1)')
    .option('--max-warnings <n>', 'exit 1 when there are more than N warnings', wholeNumber)
    .addOption(new Option('--output <format>', 'findings as text, json or sarif (SARIF 2.1.0, for code scanning)').choices(OUTPUT_FORMATS).default('text'))
    .option('--warn-only', 'deprecated: exiting 0 with only warnings is now the default')
    .option('--log-level <level>', 'log level (stderr)', 'warn')
    .action(async (opts: CheckFlags) => {
      const { check } = await import('./check.js');
      process.exitCode = await check(opts);
    });
  // As eslint: a command line that cannot run (an unknown flag, a bad value) exits 2, which CI
  // tells apart from findings (1). Help and --version still exit 0.
  checkCommand.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
  });

  addClusterFlags(
    program.command('sync').description('write every record the cluster serves into etcd (CoreDNS SkyDNS schema), for replicas running the etcd plugin'),
  )
    .option('--etcd <url>', 'etcd client URL; repeat for more members (or separate with commas)', (v: string, p: string[] | undefined) => [...(p ?? []), v])
    .option('--prefix <path>', "etcd key prefix, as the etcd plugin's path", '/skydns')
    .option('--owner <id>', 'owner written into every value; keys of other owners are never changed', 'clusterdns-sync')
    .option('--watch', 'keep running and sync again whenever the manifests change')
    .option('--interval <ms>', 'how often --watch looks at the manifests', '1000')
    .option('--etcd-timeout <ms>', 'longest one run may wait on etcd to read and write its change set; --watch then retries', '60000')
    .option('--retry-max <ms>', 'longest wait between --watch retries of a failed sync (the wait doubles from 250 ms)', '5000')
    .option('--metrics <addr>', 'with --watch, serve clusterdns_sync_pending and the last success time on ADDR/metrics, e.g. 127.0.0.1:9154')
    .option('--max-txn-ops <n>', 'operations per etcd transaction (etcd --max-txn-ops)', '128')
    .option('--max-txn-bytes <n>', 'bytes of keys and values per transaction (under etcd --max-request-bytes)', '1048576')
    .option('--allow-empty', 'let a configuration that serves no records delete every key this owner wrote')
    .option('--log-level <level>', 'log level (stderr)', 'info')
    .action(async (opts: SyncFlags) => {
      const { sync } = await import('./sync.js');
      await sync(opts);
    });

  const diffCommand = addClusterFlags(
    program
      .command('diff')
      .description(
        'what a change of manifests does to DNS: record sets added, removed and changed (with the object and file:line making them) and findings that appear or disappear',
      )
      .argument('[paths...]', 'OLD NEW (each a manifest file or directory); with --git, the manifest paths to read from the revisions'),
  )
    .option('--git <revs>', 'compare revisions of the current repository without checking them out: REV (against the work tree), REV..REV or REV...REV')
    .addOption(new Option('--output <format>', 'text, json or markdown (for a pull-request comment)').choices(['text', 'json', 'markdown']).default('text'))
    .option('--exit-code', 'exit 1 when something changed, 0 when nothing did (as git diff --exit-code)')
    .option(
      '--max-rows <n>',
      'markdown: most record set rows, the rest counted in a closing line, so a comment stays under a forge size limit (default 200; 0 = all)',
      wholeNumber,
    )
    .option('--from <pod>', 'with --name: resolve each name from this pod (NAMESPACE/NAME) on both sides and show the walks')
    .option('--name <name>', 'a name to resolve from --from; repeat for more', (v: string, p: string[] | undefined) => [...(p ?? []), v])
    .option('--libc <libc>', 'the stub resolver of --from: glibc, musl or go', 'glibc')
    .addOption(
      new Option('--color <when>', 'colour the text output: auto (on a terminal, unless NO_COLOR is set), always or never')
        .choices(['auto', 'always', 'never'])
        .default('auto'),
    )
    .action(async (paths: string[], opts: DiffFlags) => {
      const { diff } = await import('./diff.js');
      process.exitCode = await diff(paths, opts);
    });
  diffCommand.exitOverride((err) => {
    process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
  });

  addResolverCommands(program);

  addClusterFlags(
    program
      .command('ui')
      .description('serve a read-only page of the records, findings and resolver walks (and a diff), on loopback by default')
      .argument('[paths...]', 'with --git, the manifest paths to read from the revisions'),
  )
    .option('--diff <paths...>', 'OLD NEW (each a manifest file or directory): add their diff (as clusterdns diff); Records and Resolve show NEW')
    .option(
      '--git <revs>',
      'add the diff of revisions of the current repository, as diff --git (REV, REV..REV or REV...REV); Records and Resolve show the newer side',
    )
    .option('--listen <host:port>', 'address of the page; a non-loopback address serves the manifests to whoever reaches it', '127.0.0.1:8053')
    .option('--sse-clients <n>', 'pages subscribed to live updates at once; one more is refused (503)', wholeNumber, 16)
    .option('--http-max-connections <n>', 'connections open at once; beyond it the oldest idle one is closed', wholeNumber, 128)
    .option('--log-level <level>', 'log level (stderr)', 'info')
    .action(async (paths: string[], opts: UiFlags) => {
      const { ui } = await import('./ui.js');
      await ui(paths, opts);
    });

  await program.parseAsync(argv);
}
