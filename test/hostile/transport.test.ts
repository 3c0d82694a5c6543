// Hostile TCP clients: one that pipelines queries and never reads its replies, and
// slowloris connections that trickle bytes to hold every slot. Each runs against its own real
// server, with small limits set by flags so the test stays short; every loop is bounded in count
// and time, and every socket is closed at the end.
import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, type Socket } from 'node:net';
import { startServer, type RunningServer } from '../helpers/server.js';
import { TestDns } from '../fixtures/forward/upstreams.js';
import { holdsWithin, pace, quietFor, sampleFor, settleWithin, waitUntil } from '../helpers/wait.js';
import {
  buildQuery,
  encodeHeader,
  fixture,
  fixtureDir,
  frame,
  idOf,
  parseHeader,
  rawRecords,
  Rcode,
  serverArgs,
  T,
  tcpQuery,
  udpExchange,
  udpQuery,
} from '../server/raw.js';

const servers: RunningServer[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) {
    const alive = s.proc.exitCode === null && s.proc.signalCode === null;
    await s.stop();
    expect(alive, `server died: ${s.stderr.join('')}`).toBe(true);
  }
});

async function start(flags: string[]): Promise<RunningServer> {
  const s = await startServer([...serverArgs, ...flags]);
  servers.push(s);
  return s;
}

/** Resident memory of a process in MiB, from /proc. */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

interface Raw {
  sock: Socket;
  closedAt: number;
  data: number;
}

/** A TCP connection from a chosen loopback source address; tracks when the server closes it. */
function open(port: number, localAddress = '127.0.0.1', timeoutMs = 2000): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port, localAddress });
    sockets.push(sock);
    const raw: Raw = { sock, closedAt: 0, data: 0 };
    const timer = setTimeout(() => reject(new Error(`connect from ${localAddress} not done in ${timeoutMs} ms`)), timeoutMs);
    sock.on('data', (d: Buffer) => (raw.data += d.length));
    sock.on('error', () => undefined);
    sock.on('close', () => (raw.closedAt ||= Date.now()));
    sock.once('connect', () => {
      clearTimeout(timer);
      resolve(raw);
    });
  });
}

/** Resolves true once the server has closed `c`, false after timeoutMs. */
async function closedWithin(c: Raw, timeoutMs: number): Promise<boolean> {
  return holdsWithin(() => c.closedAt !== 0, timeoutMs, 20);
}

/** One query over a fresh connection from `localAddress`: the reply's header, or an error. */
async function tcpAsk(port: number, localAddress: string, timeoutMs = 2000, keepOpen = false): Promise<ReturnType<typeof parseHeader>> {
  const c = await open(port, localAddress, timeoutMs);
  const q = buildQuery({ name: fixture.nginx, type: T.A });
  let got = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no TCP reply from ${localAddress} within ${timeoutMs} ms (closed: ${c.closedAt !== 0})`)), timeoutMs);
    c.sock.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
        clearTimeout(timer);
        const reply = got.subarray(2, 2 + got.readUInt16BE(0));
        expect(idOf(reply)).toBe(idOf(q));
        c.sock.removeAllListeners('close');
        if (!keepOpen) c.sock.destroy();
        resolve(parseHeader(reply));
      }
    });
    c.sock.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`TCP connection from ${localAddress} closed before a reply`));
    });
    c.sock.write(frame(q));
  });
}

describe('a TCP client that pipelines queries and never reads the replies (#9.2)', () => {
  it('stops being read: server memory stays bounded, UDP keeps answering, and the connection is closed', async () => {
    const server = await start(['--tcp-write-timeout', '2s']);
    const pid = server.proc.pid!;
    const port = server.port;
    const before = rssMiB(pid);
    const c = await open(port);
    c.sock.pause(); // never read
    // ~2 KB of answer per 50-byte query: 100k queries would queue ~200 MB of replies unbounded.
    const q = frame(buildQuery({ name: fixture.big, type: T.A }));
    const batch = Buffer.concat(Array.from({ length: 500 }, () => q));
    let sent = 0;
    let peak = before;
    let udpWorst = 0;
    let udpMissed = 0;
    const deadline = Date.now() + 5000;
    const writer = (async () => {
      // Writes as fast as the server takes them, never more than one batch ahead of the kernel.
      while (sent < 100_000 && Date.now() < deadline && !c.closedAt) {
        if (!c.sock.write(batch)) {
          let wake = (): void => undefined;
          await settleWithin(new Promise<void>((r) => c.sock.once('drain', (wake = r))), 200);
          c.sock.off('drain', wake);
        }
        sent += 500;
      }
    })();
    // Until the server closes the connection (or the flood's 5 s end): memory, and a UDP query, every 100 ms.
    await holdsWithin(
      async () => {
        if (c.closedAt) return true;
        peak = Math.max(peak, rssMiB(pid));
        const t0 = Date.now();
        const r = await udpExchange(buildQuery({ name: fixture.nginx, type: T.A }), { port }, 1000);
        if (!r) udpMissed++;
        else udpWorst = Math.max(udpWorst, Date.now() - t0);
        return false;
      },
      Math.max(0, deadline - Date.now()),
      100,
    );
    await writer;
    peak = Math.max(peak, rssMiB(pid));
    const closed = await closedWithin(c, 5000);
    console.log(
      `never-reading client: ${sent} queries written, RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MiB, worst UDP ${udpWorst} ms, UDP missed ${udpMissed}`,
    );
    expect(udpMissed, 'UDP queries unanswered within 1 s during the flood').toBe(0);
    expect(udpWorst).toBeLessThan(1000);
    expect(peak - before, `RSS grew from ${before.toFixed(0)} to ${peak.toFixed(0)} MiB`).toBeLessThan(60);
    expect(closed, 'a client that never reads stays connected').toBe(true);
    // And the server still serves TCP afterwards.
    expect((await tcpAsk(port, '127.0.0.1')).rcode).toBe(Rcode.NOERROR);
  }, 20_000);

  it('bounds the unsent replies of all connections together (--tcp-max-unsent-total)', async () => {
    // Each connection alone may hold 64 MiB; together only 1 MiB.
    const server = await start(['--tcp-max-unsent', '64MiB', '--tcp-max-unsent-total', '1MiB', '--tcp-write-timeout', '3s']);
    const pid = server.proc.pid!;
    const before = rssMiB(pid);
    const q = frame(buildQuery({ name: fixture.big, type: T.A }));
    const batch = Buffer.concat(Array.from({ length: 500 }, () => q));
    const clients = await Promise.all([open(server.port, '127.0.0.2'), open(server.port, '127.0.0.3')]);
    let peak = before;
    const deadline = Date.now() + 3000;
    await Promise.all(
      clients.map(async (c) => {
        c.sock.pause();
        // 40k queries each: ~80 MB of replies per connection if nothing held them back.
        for (let sent = 0; sent < 40_000 && Date.now() < deadline && !c.closedAt; sent += 500) {
          if (!c.sock.write(batch)) {
            let wake = (): void => undefined;
            await settleWithin(new Promise<void>((r) => c.sock.once('drain', (wake = r))), 100);
            c.sock.off('drain', wake);
          }
          peak = Math.max(peak, rssMiB(pid));
        }
      }),
    );
    await sampleFor(Math.max(0, deadline - Date.now()), 100, () => {
      peak = Math.max(peak, rssMiB(pid));
    });
    console.log(`two never-reading clients, 1 MiB total: RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MiB`);
    expect(peak - before, `RSS grew from ${before.toFixed(0)} to ${peak.toFixed(0)} MiB`).toBeLessThan(40);
    expect((await udpExchange(buildQuery({ name: fixture.nginx, type: T.A }), { port: server.port }, 1000)) !== null).toBe(true);
  }, 15_000);

  it('a client that reads slowly but steadily gets every reply (backpressure, not loss)', async () => {
    const server = await start(['--tcp-max-unsent', '16KiB', '--tcp-write-timeout', '2s']);
    const c = await open(server.port);
    const n = 300; // ~600 KB of replies through a 16 KiB window
    c.sock.write(Buffer.concat(Array.from({ length: n }, (_, i) => frame(buildQuery({ id: i + 1, name: fixture.big, type: T.A })))));
    let got = Buffer.alloc(0);
    const ids = new Set<number>();
    c.sock.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      while (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
        ids.add(idOf(got.subarray(2)));
        got = got.subarray(2 + got.readUInt16BE(0));
      }
    });
    // Read in short bursts (20 ms every 200 ms): progress at every write deadline, so it is never
    // cut off. Until all came, the server closed, or 8 s.
    await holdsWithin(
      async () => {
        if (ids.size >= n || c.closedAt) return true;
        c.sock.resume();
        await pace(20);
        c.sock.pause();
        return false;
      },
      8000,
      200,
    );
    c.sock.resume();
    expect(ids.size, `replies received (closed: ${c.closedAt !== 0})`).toBe(n);
  }, 15_000);
});

describe('pipelined queries whose answers take time (forwarded)', () => {
  let upstream: TestDns | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await upstream?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers at most --tcp-max-in-flight of one connection at once, and all of them in the end', async () => {
    upstream = await new TestDns(({ name }) => ({ delayMs: 300, answers: [{ name, type: 'A', ttl: 5, data: '192.0.2.1' }] })).start();
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-inflight-'));
    const conf = path.join(dir, 'Corefile');
    writeFileSync(conf, `. {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${upstream.port}\n}\n`);
    const server = await startServer(['--conf', conf, '--tcp-max-in-flight', '4']);
    servers.push(server);
    const c = await open(server.port);
    const n = 20;
    c.sock.write(Buffer.concat(Array.from({ length: n }, (_, i) => frame(buildQuery({ id: i + 1, name: `q${i}.ext.test`, type: T.A })))));
    let got = Buffer.alloc(0);
    const ids = new Set<number>();
    c.sock.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      while (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
        ids.add(idOf(got.subarray(2)));
        got = got.subarray(2 + got.readUInt16BE(0));
      }
    });
    await quietFor(150, 'a server without the cap to forward more than 4');
    // The default (100) would have forwarded all 20 by now.
    expect(upstream.count(), 'queries forwarded while the first ones are still being answered').toBe(4);
    await holdsWithin(() => ids.size >= n, 5000, 50);
    expect(ids.size).toBe(n);
    expect(upstream.count()).toBe(n);
  }, 15_000);
});

describe('slowloris: connections that trickle bytes (#9.3)', () => {
  it('closes a message still incomplete at the deadline from its first byte, however steadily bytes arrive', async () => {
    const server = await start(['--tcp-message-timeout', '1s']);
    const c = await open(server.port);
    const msg = frame(buildQuery({ name: fixture.nginx, type: T.A }));
    const started = Date.now();
    // One byte every 200 ms: each renews an I/O timeout, none renews the message deadline.
    for (let i = 0; i < msg.length - 1 && !c.closedAt && Date.now() - started < 6000; i++) {
      c.sock.write(msg.subarray(i, i + 1));
      await pace(200);
    }
    expect(await closedWithin(c, 1000), 'trickling connection still open').toBe(true);
    const after = c.closedAt - started;
    expect(after, `closed after ${after} ms`).toBeGreaterThanOrEqual(900);
    expect(after, `closed after ${after} ms`).toBeLessThan(2500);
  }, 15_000);

  it("caps connections per client address: the client's idle ones make room, other clients are untouched", async () => {
    const server = await start(['--tcp-max-connections-per-client', '4', '--tcp-max-connections', '50']);
    const other = await open(server.port, '127.0.0.3');
    other.sock.write(Buffer.from([0])); // a slow connection of another client
    const mine: Raw[] = [];
    for (let i = 0; i < 10; i++) {
      const c = await open(server.port, '127.0.0.2');
      c.sock.write(Buffer.from([0]));
      mine.push(c);
      await pace(30);
    }
    // Each connection past the fourth evicts one: six of the ten are closed, then none more.
    await waitUntil('six evictions', () => mine.filter((c) => c.closedAt).length >= 6, 3000, 20);
    const open2 = mine.filter((c) => !c.closedAt).length;
    expect(open2, 'connections from 127.0.0.2 still open').toBe(4);
    // The oldest went first, the newest stayed.
    expect(mine.slice(-4).every((c) => !c.closedAt)).toBe(true);
    expect(other.closedAt, "another client's connection was closed").toBe(0);
    // The capped client still gets answers (one of its slow connections makes room).
    expect((await tcpAsk(server.port, '127.0.0.2')).rcode).toBe(Rcode.NOERROR);
  }, 15_000);

  it('at the global cap, slow connections make room for a new client instead of refusing it', async () => {
    const cap = 40;
    const server = await start(['--tcp-max-connections', String(cap), '--tcp-max-connections-per-client', '10', '--tcp-message-timeout', '20s']);
    // Fill every slot from 8 addresses, each connection holding a partial message.
    const slow: Raw[] = [];
    for (let i = 0; i < cap; i++) {
      const c = await open(server.port, `127.0.1.${(i % 8) + 1}`);
      c.sock.write(frame(buildQuery({ name: fixture.nginx, type: T.A })).subarray(0, 5));
      slow.push(c);
    }
    await quietFor(200, 'a slow connection closed before the cap is reached');
    expect(slow.filter((c) => c.closedAt).length, 'slow connections closed before the cap was reached').toBe(0);
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      // Newcomers stay connected, so each needs a slot of its own.
      const h = await tcpAsk(server.port, `127.0.2.${i + 1}`, 1500, true);
      expect(h.rcode).toBe(Rcode.NOERROR);
    }
    expect(Date.now() - started).toBeLessThan(3000);
    await waitUntil('ten slow connections closed', () => slow.filter((c) => c.closedAt).length >= 10, 3000, 20);
    // Each newcomer displaced one slow connection, the oldest first.
    const closed = slow.filter((c) => c.closedAt);
    expect(closed.length).toBe(10);
    expect(slow.slice(0, 10).every((c) => c.closedAt)).toBe(true);
  }, 20_000);
});

describe('unknown opcodes are checked before the question (#11.1)', () => {
  // RFC 1035 4.1.1 and RFC 8906 8.1.4: an opcode we do not implement gets NOTIMP, even when
  // the rest of the packet would be a format error. Flags as for every NOTIMP: AA, TC, RA, Z,
  // AD, CD 0, RD copied, opcode and ID echoed; with no readable question, header only.
  const cases: [string, number, Buffer][] = [
    ['opcode 15, header only (QDCOUNT 0)', 15, Buffer.alloc(0)],
    ['opcode 2 (STATUS), QDCOUNT 0', 2, Buffer.alloc(0)],
    ['opcode 15, QDCOUNT 1 and a label longer than 63', 15, Buffer.concat([Buffer.from([64]), Buffer.alloc(64, 0x61), Buffer.from([0, 0, 1, 0, 1])])],
  ];
  it.each(cases)('%s: NOTIMP, header only', async (_label, opcode, body) => {
    const server = await start([]);
    for (const rd of [true, false]) {
      const qdcount = body.length > 0 ? 1 : 0;
      const msg = Buffer.concat([encodeHeader({ id: 0x0f0f, opcode, rd, qdcount, aa: true, ra: true, z: true, ad: true, cd: true }), body]);
      const reply = await udpExchange(msg, { port: server.port }, 2000);
      expect(reply, 'no reply').not.toBeNull();
      const h = parseHeader(reply!);
      expect(h.rcode, `rcode ${h.rcode}`).toBe(Rcode.NOTIMP);
      expect({ qr: h.qr, id: h.id, opcode: h.opcode, rd: h.rd }).toEqual({ qr: true, id: 0x0f0f, opcode, rd });
      expect({ aa: h.aa, tc: h.tc, ra: h.ra, z: h.z, ad: h.ad, cd: h.cd }).toEqual({ aa: false, tc: false, ra: false, z: false, ad: false, cd: false });
      expect([h.qdcount, h.ancount, h.nscount, h.arcount]).toEqual([0, 0, 0, 0]);
      expect(reply!.length).toBe(12);
    }
    // Opcode QUERY with QDCOUNT 0 stays a format error.
    const formerr = await udpExchange(encodeHeader({ id: 0x0e0e, qdcount: 0 }), { port: server.port }, 2000);
    expect(parseHeader(formerr!).rcode).toBe(Rcode.FORMERR);
  });
});

describe('truncation keeps the records that fit (#9.4, #11.18)', () => {
  let dir: string;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A headless service with `n` ready endpoints, as a JSON manifest list in a fresh directory. */
  function headless(name: string, n: number): string {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-trunc-'));
    const slices = [];
    for (let s = 0; s * 1000 < n; s++) {
      const endpoints = [];
      for (let i = s * 1000; i < Math.min(n, (s + 1) * 1000); i++) {
        endpoints.push({ addresses: [`10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`], conditions: { ready: true } });
      }
      slices.push({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-${s}`, namespace: 'proto', labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        endpoints,
      });
    }
    const items = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'proto' } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'proto' },
        spec: { clusterIP: 'None', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      },
      ...slices,
    ];
    writeFileSync(path.join(dir, 'svc.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    return dir;
  }

  it('UDP: an SRV answer that fits without its additional records is sent whole, with TC', async () => {
    const m = headless('srv', 17);
    const server = await startServer(['--conf', path.join(fixtureDir, 'Corefile'), '--manifests', m]);
    servers.push(server);
    const name = '_http._tcp.srv.proto.svc.cluster.local';
    const full = await tcpQuery(buildQuery({ name, type: T.SRV, edns: { udpSize: 1232 } }), { port: server.port });
    const fh = parseHeader(full);
    expect(fh.ancount).toBe(17);
    expect(fh.arcount).toBe(18); // 17 A glue records and OPT
    // Preconditions: the whole reply is over 1232, the answer section alone is not.
    const answerEnd = rawRecords(full).find((r) => r.section === 'additional')!.offset;
    expect(full.length).toBeGreaterThan(1232);
    expect(answerEnd + 11).toBeLessThanOrEqual(1232);

    const q = buildQuery({ name, type: T.SRV, edns: { udpSize: 1232 } });
    const reply = await udpQuery(q, { port: server.port });
    const h = parseHeader(reply);
    expect(h.tc).toBe(true);
    expect(reply.length).toBeLessThanOrEqual(1232);
    expect(h.ancount, 'every SRV record is kept').toBe(17);
    const recs = rawRecords(reply);
    expect(recs.filter((r) => r.section === 'answer').map((r) => r.rdata.toString('hex'))).toEqual(
      rawRecords(full)
        .filter((r) => r.section === 'answer')
        .map((r) => r.rdata.toString('hex')),
    );
    // Glue records fill what is left (16 octets each), and the OPT record is last.
    const extra = recs.filter((r) => r.section === 'additional');
    expect(extra.at(-1)!.type).toBe(T.OPT);
    expect(extra.slice(0, -1).every((r) => r.type === T.A)).toBe(true);
    expect(1232 - reply.length).toBeLessThan(16);
  });

  it('TCP: an answer over 65,535 octets gets as many records as fit and TC, not an empty reply', async () => {
    const n = 5000; // 5000 A records of 16 octets: 80,000 octets
    const m = headless('huge', n);
    const server = await startServer(['--conf', path.join(fixtureDir, 'Corefile'), '--manifests', m]);
    servers.push(server);
    const reply = await tcpQuery(buildQuery({ name: 'huge.proto.svc.cluster.local', type: T.A }), { port: server.port }, 5000);
    const h = parseHeader(reply);
    expect(h.tc).toBe(true);
    expect(reply.length).toBeLessThanOrEqual(65535);
    expect(65535 - reply.length).toBeLessThan(16);
    expect(h.ancount).toBeGreaterThan(4000);
    expect(h.ancount).toBeLessThan(n);
    const ips = new Set(rawRecords(reply).map((r) => r.rdata.join('.')));
    expect(ips.size).toBe(h.ancount);
  }, 20_000);
});
