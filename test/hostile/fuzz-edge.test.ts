// The fuzz suite (./fuzz-run.ts) against the parts added after the first hostile round: the edge
// plugins (k8s_gateway with every resource, k8s_external), the etcd plugin on a real etcd (CNAME
// chains, a fan-out, wildcards, TXT with odd bytes, values it must skip), and `serve --workers 2`,
// where the sockets are shared by worker processes. Same checks as fuzz.test.ts after every batch.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { namePath } from '../../src/plugins/etcd/path.js';
import { buildQuery, decode, expectStillServing, fixture, idOf, parseHeader, Rcode, T, tcpQuery, udpQuery, type Target } from '../server/raw.js';
import { KNOWN_NAMES } from './fuzz.js';
import { Checkpoint, fuzzSeconds, fuzzTcp, fuzzUdp, type FuzzTarget } from './fuzz-run.js';

/** Batches per target in `npm test` (each 250 messages); `npm run fuzz` shares FUZZ_SECONDS between them. */
const UDP_BATCHES = 4;
const TCP_BATCHES = 2;
const share = fuzzSeconds / 3;

/** Throws unless `name` A answers NOERROR with `ip` among the answers, over UDP and TCP. */
async function expectAddress(target: Target, name: string, ip: string): Promise<void> {
  for (const send of [udpQuery, tcpQuery]) {
    const q = buildQuery({ name, type: T.A });
    const reply = await send(q, target);
    const h = parseHeader(reply);
    const data = (decode(reply).answers ?? []).map((a) => a.data);
    if (h.id !== idOf(q) || h.rcode !== Rcode.NOERROR || !data.includes(ip)) {
      throw new Error(`${name} A over ${send === udpQuery ? 'UDP' : 'TCP'} after a batch: rcode ${h.rcode}, answers ${JSON.stringify(data)}`);
    }
  }
}

function serverTarget(
  server: RunningServer,
  names: readonly string[],
  stillServing: (t: Target) => Promise<void>,
  marker: string,
  watchPid = true,
): FuzzTarget {
  const target = { host: '127.0.0.1', port: server.port };
  return {
    target,
    ...(watchPid ? { pid: server.proc.pid! } : {}),
    alive: () => server.proc.exitCode === null && server.proc.signalCode === null,
    obituary: () => server.stderr.join('') + server.logs.slice(-20).join('\n'),
    stillServing: () => stillServing(target),
    names,
    marker,
  };
}

async function fuzzBoth(t: FuzzTarget, seed: number): Promise<void> {
  const checkpoint = new Checkpoint(t);
  const { sent, rcodes, withAnswers } = await fuzzUdp(t, checkpoint, seed, UDP_BATCHES, share * (2 / 3));
  console.log(`fuzz ${t.names[0]}…: ${sent} UDP messages, replies by rcode ${JSON.stringify(Object.fromEntries(rcodes))}, ${withAnswers} with answers`);
  // The generator must reach the backends, not only the parser's error paths.
  expect(withAnswers, `replies by rcode: ${JSON.stringify([...rcodes])}`).toBeGreaterThan(sent / 50);
  await fuzzTcp(t, checkpoint, seed + 0x10000, TCP_BATCHES, share / 3);
}

const testTimeout = fuzzSeconds > 0 ? share * 1000 + 60_000 : 60_000;

describeNeeding([], 'fuzzing k8s_gateway and k8s_external', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer([
      '--conf',
      path.join(repoRoot, 'test/fixtures/fuzz/edge/Corefile'),
      '--manifests',
      path.join(repoRoot, 'test/fixtures/edge/gateway/manifests'),
    ]);
  }, 30_000);
  afterAll(async () => server?.stop());

  it(
    'UDP and TCP: every reply well formed, no reply to QR=1, no SERVFAIL, api.example.com still answers, RSS and fds bounded',
    async () => {
      const names = [
        'api.example.com',
        'api2.example.com',
        'shop.example.com',
        'pooled.example.com',
        'x.wild.example.com',
        'exact.wild.example.com',
        'grpc.example.com',
        'txt.example.com',
        'rec.example.com',
        'rec6.example.com',
        'dns1.kube-system.example.com',
        'example.com',
        'sneaky.example.com',
        'nope.example.com',
        'api.apps.example.org',
        'web.apps.example.org',
        'dns1.kube-system.example.org',
        'example.org',
        'kubernetes.default.svc.cluster.local',
        'api.apps.svc.cluster.local',
      ];
      const t = serverTarget(server, names, (target) => expectAddress(target, 'api.example.com', '203.0.113.10'), 'fuzz-marker.example.com');
      // k8s_external's apex test compares the name as spelled (CoreDNS external.go `state.Name() ==
      // zone`): the apex in other letter case reaches External() with no labels below the zone,
      // which answers SERVFAIL in CoreDNS too (kubernetes/external.go, `last < 0`).
      t.servfailAllowed = (name) => name.toLowerCase() === 'example.org.' && name !== 'example.org.';
      await t.stillServing();
      await fuzzBoth(t, 0xed6e0000);
    },
    testTimeout,
  );
});

describeNeeding(['etcd'], 'fuzzing the etcd plugin on a real etcd', () => {
  let etcd: EtcdCluster;
  let client: Etcd3;
  let server: RunningServer;
  let dir: string;
  const put = (name: string, value: Record<string, unknown> | string): Promise<unknown> =>
    client
      .put(namePath(name, 'skydns'))
      .value(typeof value === 'string' ? value : JSON.stringify(value))
      .exec();

  beforeAll(async () => {
    etcd = await startEtcd(1);
    client = etcd.client();
    await put('www.fuzz.test.', { host: '10.0.0.1' });
    await put('a.srv.fuzz.test.', { host: '10.0.0.2', port: 80 });
    await put('b.srv.fuzz.test.', { host: 'www.fuzz.test', port: 443, priority: 5 });
    await put('six.fuzz.test.', { host: '2001:db8::6' });
    await put('txt.fuzz.test.', { text: 'plain "quoted" \\255 \\\\ é' });
    await put('mail.fuzz.test.', { host: 'www.fuzz.test', mail: true, priority: 10 });
    // A CNAME chain, a loop, a CNAME out of the zone, and a small fan-out (three names, each
    // with three entries pointing at the next level).
    await put('c1.fuzz.test.', { host: 'c2.fuzz.test' });
    await put('c2.fuzz.test.', { host: 'www.fuzz.test' });
    await put('loop1.fuzz.test.', { host: 'loop2.fuzz.test' });
    await put('loop2.fuzz.test.', { host: 'loop1.fuzz.test' });
    await put('out.fuzz.test.', { host: 'nowhere.invalid' });
    for (let level = 0; level < 3; level++) {
      for (let i = 0; i < 3; i++) await put(`e${i}.l${level}.fuzz.test.`, { host: `l${level + 1}.fuzz.test` });
    }
    await put('l3.fuzz.test.', { host: '10.0.0.3' });
    // Values to skip: not JSON, a wrong type, a host that is not a name.
    await put('bad1.fuzz.test.', 'not json');
    await put('bad2.fuzz.test.', { host: 10 });
    await put('bad3.fuzz.test.', { host: 'a..b' });
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-fuzz-etcd-'));
    writeFileSync(
      path.join(dir, 'Corefile'),
      `fuzz.test {\n    bind 127.0.0.1\n    etcd {\n        path /skydns\n        endpoint ${etcd.endpoints.join(' ')}\n    }\n}\n`,
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    client?.close();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'UDP and TCP: every reply well formed, no reply to QR=1, no SERVFAIL, www.fuzz.test still answers, RSS and fds bounded',
    async () => {
      const names = [
        'www.fuzz.test',
        'srv.fuzz.test',
        '_http._tcp.srv.fuzz.test',
        'six.fuzz.test',
        'txt.fuzz.test',
        'mail.fuzz.test',
        'c1.fuzz.test',
        'c2.fuzz.test',
        'loop1.fuzz.test',
        'out.fuzz.test',
        'l0.fuzz.test',
        'l1.fuzz.test',
        'e0.l0.fuzz.test',
        'bad1.fuzz.test',
        'bad2.fuzz.test',
        'bad3.fuzz.test',
        'fuzz.test',
        '*.fuzz.test',
        'any.fuzz.test',
        'nope.fuzz.test',
      ];
      const t = serverTarget(server, names, (target) => expectAddress(target, 'www.fuzz.test', '10.0.0.1'), 'fuzz-marker.fuzz.test');
      await t.stillServing();
      await fuzzBoth(t, 0xe7cd0000);
    },
    testTimeout,
  );
});

describeNeeding([], 'fuzzing serve --workers 2', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(
      ['--conf', path.join(repoRoot, 'test/fixtures/fuzz/Corefile'), '--manifests', path.join(repoRoot, 'test/fixtures/protocol/manifests'), '--workers', '2'],
      { timeoutMs: 30_000 },
    );
  }, 40_000);
  afterAll(async () => server?.stop());

  it(
    'UDP and TCP through shared sockets: every reply well formed, no reply to QR=1, the primary alive, a known name still answers',
    async () => {
      // The primary only supervises: its RSS is not the workers', so only liveness and answers are checked.
      const t = serverTarget(server, KNOWN_NAMES, (target) => expectStillServing(target), `fuzz-marker.default.svc.${fixture.zone}`, false);
      t.servfailAllowed = (name) => /(^|\.)(in-addr|ip6)\.arpa\.$/i.test(name);
      await t.stillServing();
      await fuzzBoth(t, 0x3a7c0000);
    },
    testTimeout,
  );
});
