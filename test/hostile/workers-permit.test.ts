// A frozen worker holding the load permit: with `serve --workers 2` a reload
// has both workers ask the primary for the one permit; the one granted it is stopped with
// SIGSTOP mid-load. Before, the other worker waited for good; now the permit is a lease
// (--worker-load-timeout, set to 2s here) that the primary takes back, naming the worker, and the
// other worker reloads. The load is made long enough (1,000 Services, most of a second) for the
// SIGSTOP to land inside it; a round where it did not (the load was given back first) is retried.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../helpers/server.js';
import { quietFor, waitUntil } from '../helpers/wait.js';
import { buildQuery, parseHeader, Rcode, T, udpQuery } from '../server/raw.js';

let dir: string;
let server: RunningServer | undefined;
let frozen: number | undefined;
const SERVICES = 1000;

/** SERVICES Services plus `extra` (so each reload has something new to load). */
function writeManifests(extra: number): void {
  const docs: string[] = [];
  for (let i = 0; i < SERVICES + extra; i++) {
    docs.push(
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: s${i}\n  namespace: default\nspec:\n  clusterIP: 10.96.${1 + Math.floor(i / 250)}.${1 + (i % 250)}\n  ports:\n  - port: 80\n`,
    );
  }
  writeFileSync(path.join(dir, 'manifests', 'svc.yaml'), docs.join('---\n'));
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-permit-'));
  mkdirSync(path.join(dir, 'manifests'));
});
afterAll(async () => {
  if (frozen !== undefined) {
    try {
      process.kill(frozen, 'SIGCONT');
    } catch {
      /* gone */
    }
  }
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Line {
  msg: string;
  level: number;
  worker?: number;
  pid?: number;
}
const parse = (l: string): Line => JSON.parse(l) as Line;

describe('serve --workers 2: a frozen worker holding the load permit (#21.21)', () => {
  it('the primary takes the permit back after --worker-load-timeout and the other worker reloads', async () => {
    writeManifests(0);
    const conf = path.join(dir, 'Corefile');
    writeFileSync(conf, 'cluster.local {\n    bind 127.0.0.1\n    kubernetes\n}\n');
    const s = await startServer(
      ['--conf', conf, '--manifests', path.join(dir, 'manifests'), '--workers', '2', '--log-level', 'debug', '--worker-load-timeout', '2s'],
      { timeoutMs: 20_000 },
    );
    server = s;
    await waitUntil('both workers ready', () => s.logs.some((l) => l.includes('"all workers ready"')), 20_000);

    let round = 0;
    let holder: Line | undefined;
    for (round = 1; round <= 3 && holder === undefined; round++) {
      const mark = s.logs.length;
      writeManifests(round);
      process.kill(s.proc.pid!, 'SIGHUP');
      let grant: Line | undefined;
      await waitUntil(
        'a load permit granted after SIGHUP',
        () =>
          (grant = s.logs
            .slice(mark)
            .map(parse)
            .find((l) => l.msg === 'load permit granted')) !== undefined,
        10_000,
      );
      process.kill(grant!.pid!, 'SIGSTOP');
      frozen = grant!.pid!;
      // Frozen mid-load unless it gave the permit back before the signal landed.
      await quietFor(200, 'a "permit given back" line written before the SIGSTOP to reach this process');
      const gaveBack = s.logs
        .slice(mark)
        .map(parse)
        .some((l) => l.msg === 'load permit given back' && l.worker === grant!.worker);
      if (!gaveBack) {
        holder = grant;
        break;
      }
      process.kill(frozen, 'SIGCONT');
      frozen = undefined;
      await waitUntil('both workers reloaded', () => s.logs.slice(mark).filter((l) => l.includes('"configuration reloaded"')).length === 2, 15_000);
    }
    expect(holder, 'a worker frozen while holding the permit in 3 rounds').toBeDefined();
    const mark = s.logs.findIndex((l) => l.includes('"load permit granted"') && parse(l).pid === holder!.pid && parse(l).worker === holder!.worker);

    // The other worker gets the permit once the lease ran out, and reloads.
    await waitUntil(
      'the other worker reloaded',
      () => s.logs.slice(mark).some((l) => l.includes('"configuration reloaded"') && parse(l).worker !== holder!.worker),
      15_000,
    );
    const reclaimed = s.logs
      .slice(mark)
      .map(parse)
      .filter((l) => l.level === 40 && l.msg.includes('--worker-load-timeout'));
    // Every permit taken back was the frozen worker's (a second ask of its own, granted while it
    // was still frozen, is taken back the same way).
    expect(reclaimed.length).toBeGreaterThanOrEqual(1);
    expect(
      new Set(reclaimed.map((l) => l.worker)),
      s.logs
        .slice(mark)
        .filter((l) => /permit|reloaded/.test(l))
        .join('\n'),
    ).toEqual(new Set([holder!.worker]));
    expect(reclaimed[0]!.pid).toBe(holder!.pid);

    // Thawed, the frozen worker finishes its own reload; its late give-back is harmless.
    process.kill(frozen!, 'SIGCONT');
    frozen = undefined;
    await waitUntil('the thawed worker reloaded', () => s.logs.slice(mark).filter((l) => l.includes('"configuration reloaded"')).length >= 2, 15_000);
    const h = parseHeader(await udpQuery(buildQuery({ name: `s${SERVICES + round - 1}.default.svc.cluster.local`, type: T.A }), { port: s.port }));
    expect([h.rcode, h.ancount]).toEqual([Rcode.NOERROR, 1]);
  }, 60_000);
});
