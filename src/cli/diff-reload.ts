// `clusterdns diff` by reload: OLD is loaded into one server, listed, then turned into NEW in place
// and reloaded, as `serve` reloads a change, so NEW costs what changed (the manifest feed re-reads
// only the files whose text differs) instead of a second full load. Both sides are staged in a
// directory of ours (the user's files are only read): OLD's manifest files and Corefile at their
// places under the side's root, then NEW's written over them (each changed file renamed into
// place, so the feed sees a new file) and OLD's others removed.
//
// A fresh load of NEW and this reload must give the same DNS: the feed's incremental loads equal
// full ones (test/cluster/feed-differential.test.ts), and the stage loads without admission
// history (ClusterOptions.admissionHistory false: an object whose new version is rejected is left
// out, as a fresh load leaves it out, rather than kept at its old version as a serving reload
// keeps it).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { collectManifestFiles } from '../cluster/read/files.js';
import { type LoadedSide, listSide, openSideViews, type Side, sideApp } from './diff-compute.js';
import { clusterOptions, type ClusterFlags } from './options.js';

/** A path under `root`, relative with '/' separators; undefined when outside it. */
function under(root: string, p: string): string | undefined {
  const rel = path.relative(root, path.resolve(p));
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}

/** Where a side's parts are, relative to its root. */
interface Layout {
  /** The manifest paths given (a directory, a file). */
  readonly manifests: readonly string[];
  /** The Corefile: relative when under the root, else its own path (the same on both sides). */
  readonly conf: { readonly rel: string } | { readonly abs: string } | undefined;
}

function layoutOf(side: Side): Layout | undefined {
  const manifests: string[] = [];
  for (const m of side.manifests) {
    const rel = under(side.root, m);
    if (rel === undefined) return undefined;
    manifests.push(rel);
  }
  if (side.conf === undefined) return { manifests, conf: undefined };
  const rel = under(side.root, side.conf);
  return { manifests, conf: rel !== undefined ? { rel } : { abs: path.resolve(side.conf) } };
}

/** The layout both sides share, when they can be diffed by reload: the same places under their roots. */
function sharedLayout(before: Side, after: Side): Layout | undefined {
  const a = layoutOf(before);
  const b = layoutOf(after);
  if (!a || !b || JSON.stringify(a) !== JSON.stringify(b)) return undefined;
  return a;
}

/**
 * The files the loader reads for the side, by path relative to its root (with the Corefile when
 * staged); undefined when one is reached through a link out of the root, which cannot be staged.
 */
function sideFiles(side: Side, layout: Layout): Map<string, string> | undefined {
  const files = new Map<string, string>();
  for (const f of collectManifestFiles([...side.manifests], [])) {
    const rel = under(side.root, f);
    if (rel === undefined) return undefined;
    files.set(rel, f);
  }
  if (layout.conf && 'rel' in layout.conf) files.set(layout.conf.rel, path.join(side.root, ...layout.conf.rel.split('/')));
  return files;
}

/**
 * Makes `stage` hold the side: its files written where they differ, the others removed, the
 * manifest paths there as in the side. False when the side cannot be staged (sideFiles).
 */
function stageSide(stage: string, side: Side, layout: Layout, staged: Set<string>): boolean {
  const files = sideFiles(side, layout);
  if (!files) return false;
  for (const rel of staged) {
    if (files.has(rel)) continue;
    unlinkSync(path.join(stage, ...rel.split('/')));
    staged.delete(rel);
  }
  for (const [rel, from] of files) {
    const to = path.join(stage, ...rel.split('/'));
    if (staged.has(rel) && readFileSync(to).equals(readFileSync(from))) continue;
    mkdirSync(path.dirname(to), { recursive: true });
    // A new file renamed into place: the feed sees another inode, whatever the times say.
    const tmp = path.join(path.dirname(to), `.${path.basename(to)}.clusterdns-diff`);
    copyFileSync(from, tmp);
    renameSync(tmp, to);
    staged.add(rel);
  }
  // A manifest path the side has without files (an empty directory) is there, one it lacks is not.
  for (const rel of layout.manifests) {
    const inSide = path.join(side.root, ...rel.split('/'));
    const inStage = path.join(stage, ...rel.split('/'));
    if (existsSync(inSide) && statSync(inSide).isDirectory()) mkdirSync(inStage, { recursive: true });
    else if (!existsSync(inSide) && !staged.has(rel)) rmSync(inStage, { recursive: true, force: true });
  }
  return true;
}

/** The side as staged: its paths under the stage, its label kept. */
function stagedSide(side: Side, layout: Layout, stage: string): Side {
  const at = (rel: string): string => (rel === '' ? stage : path.join(stage, ...rel.split('/')));
  const conf = layout.conf === undefined ? undefined : 'rel' in layout.conf ? at(layout.conf.rel) : layout.conf.abs;
  return { label: side.label, ...(conf !== undefined ? { conf } : {}), manifests: layout.manifests.map(at), root: stage };
}

/**
 * Both sides listed by one server, NEW as a reload of OLD; undefined when the sides cannot be
 * diffed so (their manifests and Corefile are not at the same places under their roots, or NEW
 * does not build as a reload: the caller then loads NEW on its own, which reports why).
 */
export async function diffByReload(before: Side, after: Side, flags: ClusterFlags): Promise<{ old: LoadedSide; new: LoadedSide } | undefined> {
  const layout = sharedLayout(before, after);
  if (!layout) return undefined;
  const stage = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-stage-'));
  try {
    const staged = new Set<string>();
    if (!stageSide(stage, before, layout, staged)) return undefined;
    const options = { ...clusterOptions(flags), admissionHistory: false };
    const side = stagedSide(before, layout, stage);
    const app = await sideApp(side, options, flags);
    // One subscription for both sides: the reload's load builds NEW's view with the server's.
    const views = openSideViews(app, side, options);
    try {
      const old = await listSide(app, side, options, views);
      if (!stageSide(stage, after, layout, staged) || !(await app.reload('diff: the NEW side'))) return undefined;
      return { old, new: await listSide(app, stagedSide(after, layout, stage), options, views) };
    } finally {
      views.close();
      await app.close();
    }
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
