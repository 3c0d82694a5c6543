// IPv6 transport: a server block with `bind ::1` answers over UDP and TCP on [::1].
// Skipped, visibly, where ::1 cannot be bound.
import { createSocket } from 'node:dgram';
import { describe, it, expect } from 'vitest';
import { serverForSuite } from '../helpers/suite.js';
import { buildQuery, corefileIpv6, decode, fixture, idOf, manifests, parseHeader, Rcode, T, tcpQuery, udpExchange, udpQuery } from './raw.js';

const ipv6Loopback = await new Promise<boolean>((resolve) => {
  const sock = createSocket('udp6');
  sock.once('error', () => resolve(false));
  sock.bind(0, '::1', () => sock.close(() => resolve(true)));
});
if (!ipv6Loopback) console.warn('ipv6.test.ts: skipped, ::1 cannot be bound on this host');

describe.skipIf(!ipv6Loopback)(ipv6Loopback ? 'IPv6 (bind ::1)' : 'IPv6 (bind ::1) [SKIPPED: ::1 not available on this host]', () => {
  const { target } = serverForSuite(['--conf', corefileIpv6, '--manifests', manifests], { host: '::1' });

  it('answers over UDP on [::1]', async () => {
    const q = buildQuery({ name: fixture.nginx, type: T.A });
    const r = await udpQuery(q, target);
    const h = parseHeader(r);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.NOERROR);
    expect(h.aa).toBe(true);
    expect(decode(r).answers?.[0]).toMatchObject({ type: 'A', data: fixture.nginxIp });
  });

  it('answers over TCP on [::1], big answers in full', async () => {
    const q = buildQuery({ name: fixture.big, type: T.A });
    const r = await tcpQuery(q, target);
    const h = parseHeader(r);
    expect(h.id).toBe(idOf(q));
    expect(h.tc).toBe(false);
    expect(h.ancount).toBe(fixture.bigCount);
  });

  it('truncates over UDP on [::1] as on IPv4', async () => {
    const q = buildQuery({ name: fixture.big, type: T.A });
    const r = await udpQuery(q, target);
    expect(r.length).toBeLessThanOrEqual(512);
    expect(parseHeader(r).tc).toBe(true);
    // The A records that fit (16 octets each) are kept.
    expect(parseHeader(r).ancount).toBe(Math.floor((512 - (r.length - parseHeader(r).ancount * 16)) / 16));
  });

  it('does not answer on 127.0.0.1 (the block binds ::1 only)', async () => {
    const r = await udpExchange(buildQuery({ name: fixture.nginx, type: T.A }), { host: '127.0.0.1', port: target.port }, 300);
    expect(r).toBeNull();
  });
});
