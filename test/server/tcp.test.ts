// DNS over TCP (RFC 1035 4.2.2, RFC 7766): 2-byte length framing, several and pipelined
// queries per connection, bad lengths, many connections. Timeouts are in tcp-timeouts.test.ts.
import { describe, it, expect } from 'vitest';
import { serverForSuite } from '../helpers/suite.js';
import { buildQuery, C, decode, expectStillServing, fixture, frame, idOf, parseHeader, questions, Rcode, serverArgs, T, tcpQuery } from './raw.js';
import { pace, quietFor } from '../helpers/wait.js';

// The server must survive everything in this file.
const { target, conn } = serverForSuite(serverArgs, { mustSurvive: true });

/** Ten different queries (names, types, letter case, EDNS) with distinct IDs. */
function tenQueries(): Buffer[] {
  const specs: [string, number][] = [
    [fixture.nginx, T.A],
    ['NGINX.default.svc.cluster.local', T.A],
    [`_http._tcp.${fixture.nginx}`, T.SRV],
    [fixture.nginx, T.AAAA],
    [fixture.small, T.A],
    [fixture.big, T.A],
    [fixture.zone, T.SOA],
    ['nope.default.svc.cluster.local', T.A],
    [fixture.medium, T.A],
    ['example.org', T.A],
  ];
  return specs.map(([name, type], i) => buildQuery({ id: 0x1000 + i * 17, name, type, edns: i % 2 ? { udpSize: 1232 } : undefined }));
}

/** Every reply matches exactly one query by ID, with the question as sent. */
function expectMatching(queries: Buffer[], replies: Buffer[]): void {
  expect(replies).toHaveLength(queries.length);
  const byId = new Map(queries.map((q) => [idOf(q), q]));
  const seen = new Set<number>();
  for (const r of replies) {
    const h = parseHeader(r);
    expect(h.qr).toBe(true);
    expect(h.tc).toBe(false);
    const q = byId.get(h.id);
    expect(q, `reply with unknown id ${h.id}`).toBeDefined();
    expect(seen.has(h.id), `two replies for id ${h.id}`).toBe(false);
    seen.add(h.id);
    expect(questions(r)).toEqual(questions(q!));
  }
  expect(seen.size).toBe(queries.length);
}

describe('TCP framing', () => {
  it('answers one length-prefixed query with one length-prefixed reply, same ID, no TC', async () => {
    const c = await conn();
    const q = buildQuery({ id: 0x7cb1, name: fixture.nginx, type: T.A });
    await c.send(q);
    const reply = await c.read();
    const h = parseHeader(reply);
    expect(h.id).toBe(0x7cb1);
    expect(h.qr).toBe(true);
    expect(h.aa).toBe(true);
    expect(h.tc).toBe(false);
    expect(h.rcode).toBe(Rcode.NOERROR);
    expect(decode(reply).answers?.[0]).toMatchObject({ type: 'A', data: fixture.nginxIp });
    await quietFor(100, 'anything more on the connection (there must be nothing)');
    expect(c.pending()).toBe(0);
    expect(c.closed).toBe(false);
    c.destroy();
  });

  it('answers several queries one after the other on one connection', async () => {
    const c = await conn();
    for (const q of tenQueries()) {
      await c.send(q);
      const r = await c.read();
      expect(parseHeader(r).id).toBe(idOf(q));
      expect(parseHeader(r).tc).toBe(false);
    }
    expect(c.closed).toBe(false);
    c.destroy();
  });

  it('answers the big (120 A) answer in full, also twice in a row on one connection', async () => {
    const c = await conn();
    for (let i = 0; i < 2; i++) {
      const q = buildQuery({ name: fixture.big, type: T.A, edns: i ? { udpSize: 512 } : undefined });
      await c.send(q);
      const r = await c.read();
      const h = parseHeader(r);
      expect(h.id).toBe(idOf(q));
      expect(h.tc).toBe(false);
      expect(h.ancount).toBe(fixture.bigCount);
      expect(r.length).toBeGreaterThan(1232);
    }
    c.destroy();
  });

  it('answers 10 queries pipelined in one write, each with its ID', async () => {
    const c = await conn();
    const qs = tenQueries();
    await c.write(Buffer.concat(qs.map(frame)));
    expectMatching(qs, await c.readN(qs.length, 5000));
    c.destroy();
  });

  it('answers 10 pipelined queries written one byte at a time', async () => {
    const c = await conn();
    const qs = tenQueries();
    const bytes = Buffer.concat(qs.map(frame));
    for (let i = 0; i < bytes.length; i++) {
      await c.write(bytes.subarray(i, i + 1));
      if (i % 4 === 0) await pace(1);
    }
    expectMatching(qs, await c.readN(qs.length, 5000));
    c.destroy();
  }, 20_000);

  it('answers a query whose length prefix and body arrive in separate writes', async () => {
    const c = await conn();
    const q = buildQuery({ name: fixture.nginx, type: T.A });
    const f = frame(q);
    // 50 ms apart, so each piece reaches the server on its own.
    await c.write(f.subarray(0, 1));
    await pace(50);
    await c.write(f.subarray(1, 2));
    await pace(50);
    await c.write(f.subarray(2, 10));
    await pace(50);
    await c.write(f.subarray(10));
    expect(parseHeader(await c.read()).id).toBe(idOf(q));
    c.destroy();
  });

  it.each([0, 1, 5, 11])('closes the connection on a message of length %i', async (len) => {
    const c = await conn();
    const body = Buffer.alloc(len, 0);
    if (len >= 2) body.writeUInt16BE(0x3333, 0);
    await c.write(frame(body));
    expect(await c.waitClosed(3000), `connection still open 3 s after a length-${len} message`).toBe(true);
    await expectStillServing(target);
  });

  it('answers a malformed question over TCP with FORMERR (same rules as UDP)', async () => {
    const c = await conn();
    const hdr = Buffer.alloc(12);
    hdr.writeUInt16BE(0x0f0f, 0);
    hdr.writeUInt16BE(0x0100, 2); // RD
    hdr.writeUInt16BE(1, 4);
    const msg = Buffer.concat([hdr, Buffer.from([0xc0, 12, 0, 1, 0, 1])]); // pointer loop
    await c.send(msg);
    const r = await c.read();
    const h = parseHeader(r);
    expect(h.id).toBe(0x0f0f);
    expect(h.rcode).toBe(Rcode.FORMERR);
    expect(h.rd).toBe(true);
    c.destroy();
    await expectStillServing(target);
  });

  it('answers AXFR over TCP with REFUSED (no transfer plugin)', async () => {
    const q = buildQuery({ name: fixture.zone, type: T.AXFR, class: C.IN, rd: false });
    const r = await tcpQuery(q, target);
    const h = parseHeader(r);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.REFUSED);
    expect(h.ancount).toBe(0);
  });
});

describe('many TCP connections', () => {
  async function concurrent(n: number): Promise<void> {
    const conns = await Promise.all(Array.from({ length: n }, () => conn(10_000)));
    const qs = conns.map((_, i) => buildQuery({ id: (i * 7 + 1) & 0xffff, name: i % 2 ? fixture.nginx : fixture.small, type: T.A }));
    await Promise.all(conns.map((c, i) => c.send(qs[i]!)));
    const replies = await Promise.all(conns.map((c) => c.read(15_000)));
    replies.forEach((r, i) => {
      const h = parseHeader(r);
      expect(h.id).toBe(idOf(qs[i]!));
      expect(h.rcode).toBe(Rcode.NOERROR);
      expect(h.ancount).toBe(i % 2 ? 1 : fixture.smallCount);
    });
    for (const c of conns) c.destroy();
  }

  it('answers 200 concurrent connections, each on its own connection', async () => {
    await concurrent(200);
    await expectStillServing(target);
  }, 30_000);

  it('answers 500 concurrent connections (at least 500 served)', async () => {
    await concurrent(500);
    await expectStillServing(target);
  }, 40_000);

  it('never leaves a connection hanging: with 1,500 open, each is answered or closed within 15 s', async () => {
    const settled = await Promise.allSettled(Array.from({ length: 1500 }, () => conn(10_000)));
    const conns = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    // A refused connect is a fine way to say no; a hang is not.
    expect(conns.length).toBeGreaterThan(0);
    const outcomes = await Promise.all(
      conns.map(async (c, i) => {
        const q = buildQuery({ id: i & 0xffff, name: fixture.nginx, type: T.A });
        try {
          await c.send(q);
        } catch {
          return 'closed';
        }
        try {
          const r = await c.read(15_000);
          return parseHeader(r).id === idOf(q) ? 'answered' : 'wrong-id';
        } catch {
          return c.closed ? 'closed' : 'hanging';
        }
      }),
    );
    const count = (k: string): number => outcomes.filter((o) => o === k).length;
    expect(count('hanging'), `answered ${count('answered')}, closed ${count('closed')}`).toBe(0);
    expect(count('wrong-id')).toBe(0);
    expect(count('answered')).toBeGreaterThanOrEqual(Math.min(500, conns.length));
    for (const c of conns) c.destroy();
    await quietFor(200, 'the closes of every connection to reach the server before it is asked again');
    await expectStillServing(target);
  }, 60_000);
});
