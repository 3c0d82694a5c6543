// The Diff view's data: `clusterdns diff --output json` of the two trees (or revisions) the page
// was started with, made by the same code as the command (diff-compute, diff-git, diff-render).
// The OLD side is loaded once; the NEW side again after each reload of the manifests.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ClusterFlags } from '../cli/options.js';
import { compare, pathSide, snapshot, type Side, type Snapshot } from '../cli/diff-compute.js';
import { gitSides } from '../cli/diff-git.js';
import { formatDiffJson } from '../cli/diff-render.js';
import { relativePath } from '../cli/findings-output.js';
import { collectManifestFiles } from '../cluster/read/files.js';

/** What the Diff view compares: two manifest paths (`ui --diff OLD NEW`) or git revisions (`ui --git SPEC [PATH...]`). */
export type DiffSource = { readonly old: string; readonly new: string } | { readonly git: string; readonly paths: readonly string[] };

export interface UiDiff {
  readonly old: Side;
  /** The tree Records and Resolve show. */
  readonly new: Side;
  /** `diff --output json` of the sides as they are now (the NEW side read again by each call). */
  json(): Promise<string>;
  close(): void;
}

export async function openDiff(source: DiffSource, flags: ClusterFlags): Promise<UiDiff> {
  let old: Side;
  let next: Side;
  let sameFiles: boolean;
  let cleanup = (): void => {};
  if ('git' in source) {
    if (source.paths.length === 0) throw new Error('--git needs the manifest paths: PATH... or --manifests');
    const sides = await gitSides(source.git, source.paths, flags.conf);
    ({ old, new: next, cleanup } = sides);
    sameFiles = true;
  } else {
    old = pathSide(source.old, flags.conf);
    next = pathSide(source.new, flags.conf);
    sameFiles = statSync(old.manifests[0]!).isDirectory() && statSync(next.manifests[0]!).isDirectory();
  }
  const cluster: ClusterFlags = { ...flags, manifests: undefined };
  let before: Promise<Snapshot> | undefined;
  return {
    old,
    new: next,
    json: async () => {
      before ??= snapshot(old, cluster);
      // A failed OLD load is tried again on the next request, not kept.
      before.catch(() => {
        before = undefined;
      });
      const [a, b] = await Promise.all([before, snapshot(next, cluster)]);
      return formatDiffJson(compare(a, b, { old: old.label, new: next.label }, sameFiles), []);
    },
    close: cleanup,
  };
}

/** A path as the diff shows it (diff-compute's shownPath): relative to the side's root when under it, else as `check` shows paths. */
function shownPath(file: string, root: string): string {
  const rel = path.relative(root, path.resolve(file));
  if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  return relativePath(file);
}

/**
 * The files of a side the page serves, by the path the diff shows for them, each to the `file`
 * the manifest view takes. `paths` are the side's manifest paths; `served` the manifest files the
 * page serves (by real path, see data.ts manifestFiles): a side's file outside it gets no link.
 */
export function servedSources(side: Side, paths: readonly string[], served: ReadonlyMap<string, string>): Record<string, string> {
  // A Map, then own properties: a file named __proto__ is one more key, not a prototype.
  const out = new Map<string, string>();
  for (const file of collectManifestFiles(paths, [])) {
    let real: string;
    try {
      real = realpathSync(file);
    } catch {
      continue;
    }
    const shown = served.get(real);
    if (shown !== undefined) out.set(shownPath(file, side.root), shown);
  }
  return Object.fromEntries(out);
}
