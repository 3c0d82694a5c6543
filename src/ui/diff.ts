// The Diff view's data: `clusterdns diff --output json` of the two trees (or revisions) the page
// was started with, made by the same code as the command (diff-compute, diff-git, diff-render).
// Both sides are loaded again after each reload of NEW's manifests.
import { realpathSync, statSync } from 'node:fs';
import type { ClusterFlags } from '../cli/options.js';
import { pathSide, shownPath, type Side } from '../cli/diff-compute.js';
import { diffSides } from '../cli/diff-sides.js';
import { gitSides } from '../cli/diff-git.js';
import { formatDiffJson } from '../cli/diff-render.js';
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
  return {
    old,
    new: next,
    // Both sides each time, as `clusterdns diff` makes them: large trees on threads of their own,
    // so that the page's server answers other requests meanwhile.
    json: async () => formatDiffJson(await diffSides(old, next, cluster, { old: old.label, new: next.label }, sameFiles), []),
    close: cleanup,
  };
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
