// A paced UDP client for the edge hostile tests: sends queries at a steady rate (a bounded
// count) from one socket, and reports how many got no reply, the worst latency, and the rcodes.
import dgram from 'node:dgram';
import { holdsWithin } from '../helpers/wait.js';
import { buildQuery, idOf, parseHeader, T } from '../server/raw.js';

export interface LoadStats {
  sent: number;
  lost: number;
  maxMs: number;
  /** Replies per rcode. */
  rcodes: Record<number, number>;
  /** Replies with the TC bit. */
  truncated: number;
}

export interface SteadyLoad {
  /** Queries sent so far: a test waits on it for the load to be under way, or all sent. */
  sent(): number;
  /** Stops sending, waits up to `graceMs` for the replies still due, and closes the socket. */
  stop(graceMs?: number): Promise<LoadStats>;
}

/** Queries `names` (A, in turn) at `qps` until stopped or `max` are sent. */
export function steadyLoad(port: number, names: readonly string[], opts: { qps: number; max: number; type?: number }): SteadyLoad {
  const sock = dgram.createSocket('udp4');
  const pending = new Map<number, number>();
  const stats: LoadStats = { sent: 0, lost: 0, maxMs: 0, rcodes: {}, truncated: 0 };
  let nextId = 1;
  sock.on('message', (msg) => {
    const at = pending.get(idOf(msg));
    if (at === undefined) return;
    pending.delete(idOf(msg));
    stats.maxMs = Math.max(stats.maxMs, performance.now() - at);
    const h = parseHeader(msg);
    stats.rcodes[h.rcode] = (stats.rcodes[h.rcode] ?? 0) + 1;
    if (h.tc) stats.truncated++;
  });
  const every = 1000 / opts.qps;
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  // Sends what the schedule says is due, so a late timer catches up instead of slowing the rate.
  const tick = (): void => {
    const due = Math.min(opts.max, Math.floor((performance.now() - started) / every) + 1);
    while (stats.sent < due) {
      const id = nextId++ & 0xffff;
      pending.set(id, performance.now());
      sock.send(buildQuery({ id, name: names[stats.sent % names.length]!, type: opts.type ?? T.A }), port, '127.0.0.1');
      stats.sent++;
    }
    if (stats.sent < opts.max) timer = setTimeout(tick, every);
  };
  tick();
  return {
    sent: () => stats.sent,
    async stop(graceMs = 3000): Promise<LoadStats> {
      clearTimeout(timer);
      const deadline = performance.now() + graceMs;
      await holdsWithin(() => pending.size === 0, graceMs, 20);
      stats.lost = pending.size;
      // Unanswered queries count at the grace deadline: at least that late.
      for (const at of pending.values()) stats.maxMs = Math.max(stats.maxMs, deadline - at);
      sock.close();
      return stats;
    },
  };
}
