// `clusterdns diff OLD NEW` and `clusterdns diff --git REV[..REV] [PATH...]`: what a change of
// manifests does to DNS (records added, removed and changed, with the objects that make them, and
// the findings that come and go), for a reviewer. Exit codes as `git diff --exit-code`: 0 no
// change (or no --exit-code), 1 changes under --exit-code, 2 a command that cannot run as given.
import { statSync } from 'node:fs';
import type { ClusterFlags } from './options.js';
import { hasChanges, pathSide, type Side } from './diff-compute.js';
import { diffSides } from './diff-sides.js';
import { formatDiffJson, formatDiffMarkdown, formatDiffText } from './diff-render.js';
import { gitSides } from './diff-git.js';
import { walks as walksOf, type Walk } from './diff-walk.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from './exit-codes.js';
import { LIBCS } from '../resolver/types.js';

export type DiffOutput = 'text' | 'json' | 'markdown';

export interface DiffFlags extends ClusterFlags {
  output?: DiffOutput;
  exitCode?: boolean;
  /** REV, A..B or A...B: the sides are revisions of the current repository. */
  git?: string;
  from?: string;
  name?: string[];
  libc?: string;
  color?: 'auto' | 'always' | 'never';
  /** Markdown: most record set rows (0: all). */
  maxRows?: number;
}

/** Colour for terminal text: --color always/never, else on a terminal unless NO_COLOR is set (no-color.org). */
export function useColor(when: DiffFlags['color'], stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (when === 'always') return true;
  if (when === 'never') return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** Runs the diff and writes it to `out`; returns the exit code. */
export async function diff(
  paths: readonly string[],
  flags: DiffFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let cleanup = (): void => {};
  try {
    if ((flags.from === undefined) !== (flags.name === undefined || flags.name.length === 0))
      throw new Error('--from POD and --name NAME go together: the names are resolved from that pod');
    if (flags.libc !== undefined && !(LIBCS as readonly string[]).includes(flags.libc))
      throw new Error(`--libc "${flags.libc}" is not one of ${LIBCS.join(', ')}`);
    let before: Side;
    let after: Side;
    let sameFiles: boolean;
    if (flags.git !== undefined) {
      const manifestPaths = paths.length > 0 ? paths : (flags.manifests ?? []);
      if (manifestPaths.length === 0) throw new Error('--git needs the manifest paths: PATH... or --manifests');
      const sides = await gitSides(flags.git, manifestPaths, flags.conf);
      cleanup = sides.cleanup;
      before = sides.old;
      after = sides.new;
      sameFiles = true;
    } else {
      if (paths.length !== 2) throw new Error(`give two manifest paths, OLD and NEW (or --git REV[..REV] [PATH...]); got ${paths.length}`);
      if (flags.manifests !== undefined) throw new Error('--manifests has no place beside OLD and NEW: they are the manifests');
      before = pathSide(paths[0]!, flags.conf);
      after = pathSide(paths[1]!, flags.conf);
      sameFiles = statSync(before.manifests[0]!).isDirectory() && statSync(after.manifests[0]!).isDirectory();
    }
    const cluster: ClusterFlags = { ...flags, manifests: undefined };
    const result = await diffSides(before, after, cluster, { old: before.label, new: after.label }, sameFiles);
    let walks: Walk[] = [];
    if (flags.from !== undefined) walks = await walksOf(before, after, cluster, flags.from, flags.name ?? [], flags.libc ?? 'glibc');
    const format = flags.output ?? 'text';
    if (format === 'json') out.write(formatDiffJson(result, walks));
    else if (format === 'markdown') out.write(formatDiffMarkdown(result, walks, flags.maxRows));
    else out.write(formatDiffText(result, walks, useColor(flags.color, out)));
    const changed = hasChanges(result) || walks.some((w) => w.differs);
    return flags.exitCode && changed ? EXIT_FINDINGS : EXIT_OK;
  } catch (e) {
    // Exit 1 means "changed": a diff that could not be made (a bad path or revision, a Corefile
    // that does not build) must not read as one.
    err.write(`clusterdns diff: ${(e as Error).message}\n`);
    return EXIT_USAGE;
  } finally {
    cleanup();
  }
}
