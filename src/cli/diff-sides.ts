// How `clusterdns diff` computes its two sides, cheapest first: NEW as a reload of OLD in one
// server where the sides allow it (diff-reload.ts: the same places under their roots), else each
// side on a thread of its own for large trees (diff-threads.ts), else both in this thread. Every
// way lists the sides as strings, finds the sets that differ, and places only those; they give
// the same result (test/cli/diff-strategies.test.ts). CLUSTERDNS_DIFF=reload|threads|here picks one,
// for tests and comparisons.
import {
  type Delta,
  deltaOf,
  type DiffResult,
  type ListedSide,
  loadSide,
  type PlacedSet,
  resultOf,
  rowSet,
  type Side,
  type SideListing,
} from './diff-compute.js';
import type { Origin } from './diff-provenance.js';
import { diffByReload } from './diff-reload.js';
import { listOnThreads, threadsWorthIt } from './diff-threads.js';
import type { ClusterFlags } from './options.js';

export type DiffStrategy = 'reload' | 'threads' | 'here';

function forcedStrategy(env: NodeJS.ProcessEnv): DiffStrategy | undefined {
  const v = env['CLUSTERDNS_DIFF'];
  if (v === undefined || v === '') return undefined;
  if (v === 'reload' || v === 'threads' || v === 'here') return v;
  throw new Error(`CLUSTERDNS_DIFF=${v}: give reload, threads or here`);
}

/** The sets the new side places: what was added and what changed. */
const placedNewKeys = (delta: Delta): string[] => [...delta.added, ...delta.changed];

/** A listing's rows by key: [head, body]. */
function rowsByKey(listing: SideListing): Map<string, readonly [string, string]> {
  const out = new Map<string, readonly [string, string]>();
  const r = listing.rows;
  for (let i = 0; i < r.length; i += 3) out.set(r[i]!, [r[i + 1]!, r[i + 2]!]);
  return out;
}

/** The diff of two listed sides: the sets that differ, placed by the side that has them. */
async function diffListed(a: ListedSide, b: ListedSide, labels: { old: string; new: string }, sameFiles: boolean): Promise<DiffResult> {
  const was = rowsByKey(a.listing);
  const is = rowsByKey(b.listing);
  const delta = deltaOf(was, is, (x, y) => x[1] === y[1]);
  const placedNew = placedNewKeys(delta);
  const [oldOrigins, newOrigins] = await Promise.all([a.originsOf(delta.removed), b.originsOf(placedNew)]);
  const placed = { old: new Map<string, Origin>(), new: new Map<string, Origin>() };
  for (let i = 0; i < delta.removed.length; i++) placed.old.set(delta.removed[i]!, oldOrigins[i]!);
  for (let i = 0; i < placedNew.length; i++) placed.new.set(placedNew[i]!, newOrigins[i]!);
  const set = (side: 'old' | 'new', key: string): PlacedSet => {
    const [head, body] = (side === 'old' ? was : is).get(key)!;
    // A changed set's old data is shown with its new place; its old place is not asked for.
    const origin = placed[side].get(key) ?? { namespace: '' };
    return { ...rowSet(head, body), origin };
  };
  return resultOf(delta, set, { old: a.listing.findings, new: b.listing.findings }, labels, sameFiles);
}

/** The diff of two sides (see the header for how). */
export async function diffSides(
  before: Side,
  after: Side,
  flags: ClusterFlags,
  labels: { old: string; new: string },
  sameFiles: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DiffResult> {
  const forced = forcedStrategy(env);
  if (forced === undefined || forced === 'reload') {
    const sides = await diffByReload(before, after, flags);
    if (sides) return diffListed(sides.old, sides.new, labels, sameFiles);
    if (forced === 'reload') throw new Error('CLUSTERDNS_DIFF=reload: these sides cannot be diffed by reload');
  }
  if (forced === 'threads' || (forced === undefined && threadsWorthIt(before, after))) {
    const sides = await listOnThreads(before, after, flags);
    try {
      return await diffListed(sides.old, sides.new, labels, sameFiles);
    } finally {
      sides.close();
    }
  }
  const [a, b] = await Promise.all([loadSide(before, flags), loadSide(after, flags)]);
  return diffListed(a, b, labels, sameFiles);
}
