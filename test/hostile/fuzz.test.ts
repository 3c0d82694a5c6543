// Structure-aware fuzzing of the real server over UDP and TCP (generator: ./fuzz.ts, runner:
// ./fuzz-run.ts): the kubernetes plugin behind cache, loadbalance and rewrite, and a file zone.
// In `npm test` it runs a fixed count of messages; `npm run fuzz` runs it for FUZZ_SECONDS
// (default 180). After every batch: a known name still answers correctly over UDP and TCP,
// nothing answered a QR=1 message, every reply is a well-formed response, and the server's RSS
// and open file descriptors stay within a fixed margin of where they started.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { expectStillServing, fixture } from '../server/raw.js';
import { KNOWN_NAMES } from './fuzz.js';
import { Checkpoint, fuzzSeconds, fuzzTcp, fuzzUdp, timed, BATCH, type FuzzTarget } from './fuzz-run.js';

const FIXED_UDP_BATCHES = 12;
const FIXED_TCP_BATCHES = 4;

let server: RunningServer;
let t: FuzzTarget;
let checkpoint: Checkpoint;

const REVERSE_NAME = /(^|\.)(in-addr|ip6)\.arpa\.$/i;

beforeAll(async () => {
  server = await startServer([
    '--conf',
    path.join(repoRoot, 'test/fixtures/fuzz/Corefile'),
    '--manifests',
    path.join(repoRoot, 'test/fixtures/protocol/manifests'),
  ]);
  const target = { host: '127.0.0.1', port: server.port };
  t = {
    target,
    pid: server.proc.pid!,
    alive: () => server.proc.exitCode === null && server.proc.signalCode === null,
    obituary: () => server.stderr.join(''),
    stillServing: () => expectStillServing(target),
    names: KNOWN_NAMES,
    // The one SERVFAIL the fixture makes on purpose: kubernetes has `fallthrough in-addr.arpa
    // ip6.arpa` and no plugin after it, so a reverse name it does not hold (any type but a PTR it
    // answers) falls off the chain: CoreDNS's NextOrFailure answers SERVFAIL ("no next plugin
    // found") there too. Any other SERVFAIL is a failure inside the server.
    servfailAllowed: (name) => REVERSE_NAME.test(name),
    marker: `fuzz-marker.default.svc.${fixture.zone}`,
  };
  await t.stillServing();
  checkpoint = new Checkpoint(t);
}, 30_000);

afterAll(async () => {
  const wasAlive = server ? t.alive() : true;
  await server?.stop();
  expect(wasAlive, `server died: ${server?.stderr.join('')}`).toBe(true);
});

describe(`structure-aware fuzzing (${timed ? `${fuzzSeconds} s, npm run fuzz` : 'fixed count'})`, () => {
  it(
    'UDP: every reply well formed, no reply to QR=1, a known name still answers, RSS and fds bounded',
    async () => {
      const { sent, rcodes, withAnswers } = await fuzzUdp(t, checkpoint, 0x5eed0000, FIXED_UDP_BATCHES, fuzzSeconds * (2 / 3));
      expect(sent).toBeGreaterThanOrEqual(BATCH);
      console.log(`UDP fuzz: ${sent} messages, replies by rcode ${JSON.stringify(Object.fromEntries(rcodes))}, ${withAnswers} with answers`);
      // The generator must reach the backends, not only the parser's error paths.
      expect(withAnswers, `replies by rcode: ${JSON.stringify([...rcodes])}`).toBeGreaterThan(sent / 50);
      expect(rcodes.get(0) ?? 0).toBeGreaterThan(0);
      expect(rcodes.get(3) ?? 0, 'some NXDOMAIN').toBeGreaterThan(0);
      expect(rcodes.get(1) ?? 0, 'some FORMERR').toBeGreaterThan(0);
    },
    timed ? fuzzSeconds * 1000 + 60_000 : 60_000,
  );

  it(
    'TCP: every reply well formed, a known name still answers, RSS and fds bounded',
    async () => {
      await fuzzTcp(t, checkpoint, 0x7c900000, FIXED_TCP_BATCHES, fuzzSeconds * (1 / 3));
    },
    timed ? fuzzSeconds * 1000 + 60_000 : 60_000,
  );
});
