// glibc getaddrinfo's AI_ADDRCONFIG: a host without any IPv6 address but ::1 asks no AAAA.
import { describe, it, expect } from 'vitest';
import { resolveStub } from '../../src/resolver/stub.js';
import { parseResolvConf } from '../../src/pkg/resolvconf.js';
import type { SendFn } from '../../src/resolver/types.js';

const conf = parseResolvConf('search ns.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n', 'glibc');
const send: SendFn = async (name, type) =>
  name === 'db.svc.cluster.local.' && type === 'A'
    ? { rcode: 'NOERROR', answers: ['A 10.96.5.5'] }
    : { rcode: name === 'db.svc.cluster.local.' ? 'NOERROR' : 'NXDOMAIN', answers: [] };

describe('glibc AI_ADDRCONFIG', () => {
  it('sends A and AAAA per candidate when the host has IPv6 (the default)', async () => {
    const t = await resolveStub('db', { libc: 'glibc', conf, send });
    expect(t.queries.map((q) => `${q.name} ${q.type}`)).toEqual([
      'db.ns.svc.cluster.local. A',
      'db.ns.svc.cluster.local. AAAA',
      'db.svc.cluster.local. A',
      'db.svc.cluster.local. AAAA',
    ]);
  });

  it('sends A alone when the host has no IPv6 address', async () => {
    const t = await resolveStub('db', { libc: 'glibc', conf, send, ipv6: false });
    expect(t.queries.map((q) => `${q.name} ${q.type}`)).toEqual(['db.ns.svc.cluster.local. A', 'db.svc.cluster.local. A']);
    expect(t.result.answers).toEqual(['10.96.5.5']);
  });

  it('does not change musl or Go, which do not filter by the host addresses here', async () => {
    const t = await resolveStub('db', {
      libc: 'musl',
      conf: parseResolvConf('search ns.svc.cluster.local svc.cluster.local\noptions ndots:5\n', 'musl'),
      send,
      ipv6: false,
    });
    expect(t.queries.some((q) => q.type === 'AAAA')).toBe(true);
  });
});
