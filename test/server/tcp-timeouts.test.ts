// TCP timeouts (RFC 7766 6.2.3; README.md, Protocol behaviour: idle connections closed after 10 s, a slow or
// incomplete message closed after a few seconds of I/O timeout, other clients never blocked).
// Slow by nature: the tests run concurrently, each bounded well under its vitest timeout.
import { describe, it, expect } from 'vitest';
import { serverForSuite } from '../helpers/suite.js';
import { buildQuery, fixture, frame, idOf, parseHeader, Rcode, serverArgs, T, tcpQuery, udpQuery } from './raw.js';

const { target, conn } = serverForSuite(serverArgs);

describe.concurrent('TCP timeouts', () => {
  it('closes an idle connection (after an answered query) after about 10 s: not before 5 s, within 15 s', async () => {
    const c = await conn();
    const q = buildQuery({ name: fixture.nginx, type: T.A });
    await c.send(q);
    expect(parseHeader(await c.read()).id).toBe(idOf(q));
    const idleSince = Date.now();
    const closed = await c.waitClosed(15_000);
    const after = (c.closedAt || Date.now()) - idleSince;
    expect(closed, 'idle connection still open after 15 s').toBe(true);
    // 10 s (README.md, Limits: --tcp-idle-timeout); RFC 7766 asks servers not to cut clients off too eagerly.
    expect(after, `closed after ${after} ms`).toBeGreaterThanOrEqual(5_000);
  }, 25_000);

  it('closes a connection on which nothing was ever sent within 15 s', async () => {
    const c = await conn();
    expect(await c.waitClosed(15_000), 'silent connection still open after 15 s').toBe(true);
  }, 25_000);

  it('an incomplete message does not block other clients, and its connection is closed within 15 s', async () => {
    const slow = await conn();
    const q = buildQuery({ name: fixture.nginx, type: T.A });
    // Length prefix says the whole query, then only part of it.
    await slow.write(frame(q).subarray(0, 10));
    const half = await conn();
    await half.write(Buffer.from([0x00])); // half a length prefix

    const started = Date.now();
    const other = buildQuery({ name: fixture.small, type: T.A });
    const tr = await tcpQuery(other, target, 1000);
    expect(parseHeader(tr).id).toBe(idOf(other));
    expect(parseHeader(tr).rcode).toBe(Rcode.NOERROR);
    const ur = await udpQuery(buildQuery({ id: 0x2468, name: fixture.nginx, type: T.A }), target, 1000);
    expect(parseHeader(ur).id).toBe(0x2468);
    expect(Date.now() - started).toBeLessThan(2000);

    const [a, b] = await Promise.all([slow.waitClosed(15_000), half.waitClosed(15_000)]);
    expect(a, 'connection with an incomplete message still open after 15 s').toBe(true);
    expect(b, 'connection with half a length prefix still open after 15 s').toBe(true);
    // The incomplete message was never answered.
    expect(slow.pending()).toBe(0);
  }, 25_000);

  it('keeps answering other clients while 50 connections sit on incomplete messages', async () => {
    const stuck = await Promise.all(Array.from({ length: 50 }, () => conn()));
    const q = buildQuery({ name: fixture.nginx, type: T.A });
    await Promise.all(stuck.map((c) => c.write(frame(q).subarray(0, 7))));
    for (let i = 0; i < 20; i++) {
      const other = buildQuery({ name: fixture.nginx, type: T.A });
      expect(parseHeader(await tcpQuery(other, target, 1000)).id).toBe(idOf(other));
    }
    for (const c of stuck) c.destroy();
  }, 25_000);
});
