// Queries from UDP source port 0: no reply can reach port 0, and answering
// one logged an error per packet (1.13 MB for 2,000). They are dropped silently now, as BIND,
// Knot and Unbound do. No ordinary socket sends from port 0 (binding 0 picks an ephemeral
// port), so a small C program writes the UDP header itself on a raw socket (CAP_NET_RAW: root).
// The same program sending from a port this test listens on shows the raw path reaches the
// server and is answered, so the silence for port 0 is the server's choice, not a lost packet.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';
import { holdsWithin, quietFor } from '../helpers/wait.js';
import { buildQuery, idOf, parseHeader, Rcode, T, udpQuery } from '../server/raw.js';

const needs = process.getuid?.() !== 0 ? 'root (a raw socket needs CAP_NET_RAW)' : missingTools('musl-gcc');

describe.skipIf(skipOrFailInCI(needs, 'UDP source port 0'))('UDP queries from source port 0 (#21.20)', () => {
  let dir: string;
  let prog: string;
  let server: RunningServer;
  let listener: Socket;
  const replies: Buffer[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-port0-'));
    prog = path.join(dir, 'udp-from-port');
    execFileSync('musl-gcc', ['-static', '-O1', '-o', prog, path.join(repoRoot, 'test/hostile/programs/udp-from-port.c')], { timeout: 60_000 });
    writeFileSync(path.join(dir, 'z.zone'), '$ORIGIN z.test.\n$TTL 60\n@ IN SOA ns1 host 1 2h 30m 2w 300\n@ IN NS ns1\nns1 IN A 10.0.0.1\n');
    writeFileSync(path.join(dir, 'Corefile'), `z.test {\n    bind 127.0.0.1\n    file ${path.join(dir, 'z.zone')}\n}\n`);
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
    listener = createSocket('udp4');
    listener.on('message', (m) => replies.push(m));
    await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
  }, 60_000);
  afterAll(async () => {
    listener?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const send = (srcPort: number, count: number, query: Buffer): void => {
    execFileSync(prog, [String(srcPort), '127.0.0.1', String(server.port), String(count), query.toString('hex')], { timeout: 10_000 });
  };

  it('drops 500 queries from port 0 without a log line, and keeps answering', async () => {
    // The raw path works: from the listener's port, the server's reply arrives there.
    const control = buildQuery({ name: 'ns1.z.test', type: T.A });
    send(listener.address().port, 1, control);
    await holdsWithin(() => replies.some((r) => idOf(r) === idOf(control)), 3000, 20);
    expect(
      replies.some((r) => idOf(r) === idOf(control)),
      'reply to a raw query from a real port',
    ).toBe(true);

    const logsBefore = server.logs.length;
    send(0, 500, buildQuery({ name: 'ns1.z.test', type: T.A }));
    // A marker sent the same way after them: when it is answered, the server has read them all.
    const marker = buildQuery({ name: 'ns1.z.test', type: T.A });
    send(listener.address().port, 1, marker);
    await holdsWithin(() => replies.some((r) => idOf(r) === idOf(marker)), 5000, 20);
    expect(
      replies.some((r) => idOf(r) === idOf(marker)),
      'reply to the marker',
    ).toBe(true);
    await quietFor(300, 'log lines already written to reach this process');
    const logged = server.logs.slice(logsBefore);
    expect(logged.length, logged.slice(0, 3).join('\n')).toBe(0);

    const h = parseHeader(await udpQuery(buildQuery({ name: 'ns1.z.test', type: T.A }), { port: server.port }));
    expect([h.rcode, h.ancount]).toEqual([Rcode.NOERROR, 1]);
  }, 30_000);
});
