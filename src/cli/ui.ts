// `clusterdns ui`: serves the page (src/ui) until SIGINT or SIGTERM; SIGHUP and SIGUSR1 reload it.
import { createLogger } from './logger.js';
import type { ClusterFlags } from './options.js';
import { startUi } from '../ui/server.js';
import type { DiffSource } from '../ui/diff.js';
import { EXIT_USAGE } from './exit-codes.js';
import { untilSignal } from './until-signal.js';

export interface UiFlags extends ClusterFlags {
  listen?: string;
  sseClients?: number;
  httpMaxConnections?: number;
  logLevel: string;
  /** OLD NEW: start with their Diff. */
  diff?: string[];
  /** REV, A..B or A...B, as `diff --git`. */
  git?: string;
}

/** The Diff the flags ask for, or undefined; throws on a combination that cannot run. */
export function diffSource(paths: readonly string[], flags: UiFlags): DiffSource | undefined {
  if (flags.diff !== undefined && flags.git !== undefined) throw new Error('--diff OLD NEW and --git REV: give one of them');
  if (flags.diff !== undefined) {
    if (flags.diff.length !== 2) throw new Error(`--diff takes two manifest paths, OLD and NEW; got ${flags.diff.length}`);
    if (flags.manifests !== undefined) throw new Error('--manifests has no place beside --diff OLD NEW: they are the manifests');
    if (paths.length > 0) throw new Error(`unexpected arguments: ${paths.join(' ')}`);
    return { old: flags.diff[0]!, new: flags.diff[1]! };
  }
  if (flags.git !== undefined) {
    const manifests = paths.length > 0 ? paths : (flags.manifests ?? []);
    if (manifests.length === 0) throw new Error('--git needs the manifest paths: PATH... or --manifests');
    return { git: flags.git, paths: manifests };
  }
  if (paths.length > 0) throw new Error(`unexpected arguments: ${paths.join(' ')} (manifest paths go after --git REV, or in --manifests)`);
  return undefined;
}

export async function ui(paths: readonly string[], flags: UiFlags): Promise<void> {
  const log = createLogger(flags.logLevel, 2);
  let diff: DiffSource | undefined;
  try {
    diff = diffSource(paths, flags);
  } catch (e) {
    process.stderr.write(`clusterdns ui: ${(e as Error).message}\n`);
    process.exitCode = EXIT_USAGE;
    return;
  }
  const server = await startUi({
    flags,
    log,
    ...(diff !== undefined ? { diff } : {}),
    ...(flags.listen !== undefined ? { listen: flags.listen } : {}),
    ...(flags.sseClients !== undefined ? { maxSseClients: flags.sseClients } : {}),
    ...(flags.httpMaxConnections !== undefined ? { httpLimits: { maxConnections: flags.httpMaxConnections } } : {}),
  });
  log.info({ url: server.url }, `clusterdns ui: open ${server.url}`);
  // As serve: SIGHUP (and CoreDNS's SIGUSR1) loads the Corefile and manifests again, and the
  // open pages update; the watch does the same for a changed file.
  const reloads = (['SIGHUP', 'SIGUSR1'] as const).map((signal) => {
    const onSignal = (): void => {
      void server
        .reload(signal)
        .then((ok) => log.info({ signal, ok, generation: server.generation }, ok ? 'page reloaded' : 'page reload failed, showing the last good data'));
    };
    process.on(signal, onSignal);
    return () => process.off(signal, onSignal);
  });
  try {
    await untilSignal();
  } finally {
    for (const off of reloads) off();
  }
  await server.close();
}
