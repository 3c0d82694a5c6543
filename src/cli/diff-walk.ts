// `clusterdns diff --from POD --name NAME`: the walk `clusterdns resolve` shows for each name, on
// each side, and whether it changed.
import { Writable } from 'node:stream';
import type { ClusterFlags } from './options.js';
import type { Side } from './diff-compute.js';
import { resolveCommand } from './resolver-commands.js';
import type { Trace } from '../resolver/types.js';

/** One side's walk, as lines to compare and show. */
export interface WalkSide {
  /** `ok 10.96.0.12`, `NXDOMAIN`, or the error that kept the walk from running (the pod is not on this side). */
  readonly result: string;
  /** One per query sent, in order: name, type, rcode and answers. */
  readonly queries: readonly string[];
}

export interface Walk {
  readonly name: string;
  readonly from: string;
  readonly libc: string;
  readonly differs: boolean;
  readonly old: WalkSide;
  readonly new: WalkSide;
}

const discard = (): Writable =>
  new Writable({
    write(_chunk, _enc, done) {
      done();
    },
  });

function sideOf(trace: Trace): WalkSide {
  const r = trace.result;
  return {
    result: [r.status, ...(r.error ? [`(${r.error})`] : []), ...r.answers].join(' '),
    queries: trace.queries.map((q) => [q.name, q.type, q.rcode, ...q.answers].join(' ')),
  };
}

async function walkOn(side: Side, flags: ClusterFlags, name: string, from: string, libc: string): Promise<WalkSide> {
  try {
    const trace = await resolveCommand(name, { ...flags, conf: side.conf, manifests: [...side.manifests], pod: from, libc, json: true }, discard(), discard());
    return sideOf(trace);
  } catch (e) {
    return { result: `error: ${(e as Error).message.split('\n')[0]}`, queries: [] };
  }
}

/** Each name's walk from pod `from` on both sides. */
export async function walks(before: Side, after: Side, flags: ClusterFlags, from: string, names: readonly string[], libc: string): Promise<Walk[]> {
  const out: Walk[] = [];
  for (const name of names) {
    const old = await walkOn(before, flags, name, from, libc);
    const now = await walkOn(after, flags, name, from, libc);
    const differs = old.result !== now.result || old.queries.length !== now.queries.length || old.queries.some((q, i) => q !== now.queries[i]);
    out.push({ name, from, libc, differs, old, new: now });
  }
  return out;
}
