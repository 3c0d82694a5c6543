// `clusterdns diff --from POD --name NAME`: the walk `clusterdns resolve` shows for each name, on
// each side, and whether it changed.
import { Writable } from 'node:stream';
import { buildApp } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
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

/** Each name's walk from pod `from` on one side, through one server built for the side. */
async function walksOn(side: Side, flags: ClusterFlags, names: readonly string[], from: string, libc: string): Promise<WalkSide[]> {
  const app = await buildApp({
    conf: side.conf,
    manifests: [...side.manifests],
    port: 53,
    logger: createLogger('silent', 2),
    cluster: clusterOptions(flags),
    corefileLimits: corefileLimits(flags),
    oneShot: true,
  });
  try {
    const out: WalkSide[] = [];
    for (const name of names) {
      try {
        const resolveFlags = { ...flags, conf: side.conf, manifests: [...side.manifests], pod: from, libc, json: true };
        out.push(sideOf(await resolveCommand(name, resolveFlags, discard(), discard(), app)));
      } catch (e) {
        // The pod may be on one side only.
        out.push({ result: `error: ${(e as Error).message.split('\n')[0]}`, queries: [] });
      }
    }
    return out;
  } finally {
    await app.close();
  }
}

/** Each name's walk from pod `from` on both sides. */
export async function walks(before: Side, after: Side, flags: ClusterFlags, from: string, names: readonly string[], libc: string): Promise<Walk[]> {
  const old = await walksOn(before, flags, names, from, libc);
  const now = await walksOn(after, flags, names, from, libc);
  return names.map((name, i) => {
    const a = old[i]!;
    const b = now[i]!;
    const differs = a.result !== b.result || a.queries.length !== b.queries.length || a.queries.some((q, j) => q !== b.queries[j]);
    return { name, from, libc, differs, old: a, new: b };
  });
}
