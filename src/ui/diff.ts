// The Diff view's data: `clusterdns diff --output json` of the two trees (or revisions) the page
// was started with, made by the same code as the command (diff-compute, diff-git, diff-render).
// The OLD side is loaded once; the NEW side again after each reload of the manifests.
import { statSync } from 'node:fs';
import type { ClusterFlags } from '../cli/options.js';
import { compare, pathSide, snapshot, type Side, type Snapshot } from '../cli/diff-compute.js';
import { gitSides } from '../cli/diff-git.js';
import { formatDiffJson } from '../cli/diff-render.js';

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
