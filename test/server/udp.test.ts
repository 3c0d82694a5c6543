// UDP answers of a well-formed query: header bits, question echo, EDNS0, truncation.
// Spec: README.md "Protocol behaviour"; RFC 1035 4.1.1, RFC 6891, RFC 3225, RFC 4035 3.1.6.
import { describe, it, expect } from 'vitest';
import { createSocket } from 'node:dgram';
import { serverForSuite } from '../helpers/suite.js';
import {
  buildQuery,
  decode,
  expectStillServing,
  fixture,
  idOf,
  optRecords,
  parseHeader,
  questions,
  rawRecords,
  Rcode,
  serverArgs,
  T,
  C,
  tcpQuery,
  udpQuery,
} from './raw.js';
import { holdsWithin } from '../helpers/wait.js';

const { target } = serverForSuite(serverArgs);

describe('UDP: a normal query', () => {
  it('is answered with the same ID, QR=1, opcode QUERY, NOERROR, AA=1, RA=0, the cluster IP', async () => {
    const q = buildQuery({ id: 0xbeef, name: fixture.nginx, type: T.A });
    const reply = await udpQuery(q, target);
    const h = parseHeader(reply);
    expect(h.id).toBe(0xbeef);
    expect(h.qr).toBe(true);
    expect(h.opcode).toBe(0);
    expect(h.rcode).toBe(Rcode.NOERROR);
    expect(h.aa).toBe(true);
    expect(h.ra).toBe(false);
    expect(h.tc).toBe(false);
    expect(h.z).toBe(false);
    const d = decode(reply);
    expect(d.answers).toHaveLength(1);
    expect(d.answers![0]).toMatchObject({ type: 'A', class: 'IN', ttl: 5, data: fixture.nginxIp });
  });

  it("echoes the question with the query's letter case (0x20)", async () => {
    const name = 'NgInX.default.svc.CLUSTER.local';
    const q = buildQuery({ name, type: T.A });
    const reply = await udpQuery(q, target);
    const h = parseHeader(reply);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.NOERROR);
    expect(questions(reply)).toEqual([{ name, type: T.A, klass: C.IN }]);
    // The question bytes are returned exactly as sent.
    expect(reply.subarray(12, q.length).equals(q.subarray(12))).toBe(true);
    const d = decode(reply);
    expect(d.answers).toHaveLength(1);
    expect(d.answers![0]!.name.toLowerCase()).toBe(fixture.nginx.toLowerCase());
    expect(d.answers![0]).toMatchObject({ type: 'A', data: fixture.nginxIp });
  });

  it("spells the answer owner as the question was spelled (README.md, Protocol behaviour: answers echo the question's case)", async () => {
    const name = 'NgInX.default.svc.CLUSTER.local';
    const reply = await udpQuery(buildQuery({ name, type: T.A }), target);
    const d = decode(reply);
    expect(d.answers?.[0]?.name).toBe(name);
  });

  it('copies RD (both values)', async () => {
    for (const rd of [true, false]) {
      const q = buildQuery({ name: fixture.nginx, type: T.A, rd });
      const h = parseHeader(await udpQuery(q, target));
      expect(h.id).toBe(idOf(q));
      expect(h.rd).toBe(rd);
      expect(h.rcode).toBe(Rcode.NOERROR);
    }
  });

  it('copies CD (RFC 4035 3.1.6, as CoreDNS) and keeps RA=0 even when RD=1', async () => {
    const q = buildQuery({ name: fixture.nginx, type: T.A, rd: true, cd: true });
    const h = parseHeader(await udpQuery(q, target));
    expect(h.cd).toBe(true);
    expect(h.ra).toBe(false);
    expect(h.aa).toBe(true);
    expect(h.rcode).toBe(Rcode.NOERROR);
  });

  it('keeps positive answers minimal: no authority, no additional for an A answer', async () => {
    const reply = await udpQuery(buildQuery({ name: fixture.nginx, type: T.A }), target);
    const h = parseHeader(reply);
    expect(h.nscount).toBe(0);
    expect(h.arcount).toBe(0);
  });

  it("keeps positive answers minimal: SRV additional holds only the targets' addresses", async () => {
    const name = `_http._tcp.${fixture.nginx}`;
    const reply = await udpQuery(buildQuery({ name, type: T.SRV, edns: { udpSize: 1232 } }), target);
    const h = parseHeader(reply);
    expect(h.rcode).toBe(Rcode.NOERROR);
    const d = decode(reply);
    expect(d.answers!.length).toBeGreaterThan(0);
    const targets = new Set(d.answers!.map((a) => (a.type === 'SRV' ? a.data.target.toLowerCase().replace(/\.$/, '') : '?')));
    expect(targets.has('?')).toBe(false);
    expect(h.nscount).toBe(0);
    for (const rr of d.additionals ?? []) {
      if (rr.type === 'OPT') continue;
      expect(['A', 'AAAA']).toContain(rr.type);
      expect(targets.has(rr.name.toLowerCase().replace(/\.$/, ''))).toBe(true);
    }
  });
});

describe('UDP: EDNS0 (RFC 6891)', () => {
  it('has no OPT in the reply when the query had none', async () => {
    const reply = await udpQuery(buildQuery({ name: fixture.nginx, type: T.A }), target);
    expect(optRecords(reply)).toHaveLength(0);
  });

  it('has exactly one OPT with payload size 1232, version 0, extended rcode 0 when the query had one', async () => {
    for (const udpSize of [512, 1232, 4096, 65535]) {
      const q = buildQuery({ name: fixture.nginx, type: T.A, edns: { udpSize } });
      const reply = await udpQuery(q, target);
      const h = parseHeader(reply);
      expect(h.id).toBe(idOf(q));
      expect(h.rcode).toBe(Rcode.NOERROR);
      const opts = optRecords(reply);
      expect(opts).toHaveLength(1);
      expect(opts[0]).toMatchObject({ udpSize: 1232, version: 0, extRcode: 0 });
      // OPT sits in the additional section only.
      const recs = rawRecords(reply).filter((r) => r.type === T.OPT);
      expect(recs.map((r) => r.section)).toEqual(['additional']);
    }
  });

  it("copies the DO bit into the reply's OPT (RFC 3225)", async () => {
    for (const doBit of [true, false]) {
      const reply = await udpQuery(buildQuery({ name: fixture.nginx, type: T.A, edns: { udpSize: 1232, do: doBit } }), target);
      const opts = optRecords(reply);
      expect(opts).toHaveLength(1);
      expect(opts[0]!.do).toBe(doBit);
      expect(parseHeader(reply).rcode).toBe(Rcode.NOERROR);
    }
  });

  it('answers EDNS version 1 with BADVERS: header rcode 0 + OPT extended rcode 1, OPT version 0, question echoed, no answer, DO copied', async () => {
    for (const doBit of [true, false]) {
      const name = 'NgInX.default.svc.cluster.LOCAL';
      const q = buildQuery({ id: 0x4242, name, type: T.A, rd: true, edns: { udpSize: 1232, version: 1, do: doBit } });
      const reply = await udpQuery(q, target);
      const h = parseHeader(reply);
      expect(h.id).toBe(0x4242);
      expect(h.qr).toBe(true);
      expect(h.rcode).toBe(Rcode.BADVERS & 0xf); // 0
      expect(h.ancount).toBe(0);
      expect(h.rd).toBe(true);
      expect(questions(reply)).toEqual([{ name, type: T.A, klass: C.IN }]);
      const opts = optRecords(reply);
      expect(opts).toHaveLength(1);
      expect(opts[0]!.extRcode).toBe(Rcode.BADVERS >> 4); // 1
      expect(opts[0]!.version).toBe(0);
      expect(opts[0]!.do).toBe(doBit);
    }
    await expectStillServing(target);
  });

  it('ignores NSID, EXPIRE, COOKIE and ECS options and returns none of them (a cookie may only be echoed)', async () => {
    const clientCookie = Buffer.from('0123456789abcdef', 'hex');
    const ecs = Buffer.from([0, 1, 24, 0, 10, 1, 2]); // family 1, /24, scope 0, 10.1.2.0
    const q = buildQuery({
      name: fixture.nginx,
      type: T.A,
      edns: {
        udpSize: 1232,
        options: [
          { code: 3, data: Buffer.alloc(0) }, // NSID
          { code: 9, data: Buffer.alloc(0) }, // EXPIRE
          { code: 10, data: clientCookie }, // COOKIE (client part only)
          { code: 8, data: ecs }, // EDNS Client Subnet
        ],
      },
    });
    const reply = await udpQuery(q, target);
    const h = parseHeader(reply);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.NOERROR);
    expect(decode(reply).answers).toHaveLength(1);
    const opts = optRecords(reply);
    expect(opts).toHaveLength(1);
    for (const o of opts[0]!.options) {
      expect([3, 8, 9]).not.toContain(o.code);
      if (o.code === 10) expect(o.data.subarray(0, 8).equals(clientCookie)).toBe(true);
    }
  });
});

describe('UDP: payload size and truncation', () => {
  /**
   * TC reply shape (CoreDNS, miekg/dns Msg.Truncate): question (as sent) kept, as many of the
   * answer's A records as fit within the limit (16 octets each, so fewer than 16 octets left
   * over), each one of the service's addresses.
   */
  function expectTruncated(reply: Buffer, q: Buffer, name: string, limit: number): void {
    const h = parseHeader(reply);
    expect(h.id).toBe(idOf(q));
    expect(reply.length).toBeLessThanOrEqual(limit);
    expect(limit - reply.length, `${limit - reply.length} octets left unused`).toBeLessThan(16);
    expect(h.tc).toBe(true);
    expect(h.rcode).toBe(Rcode.NOERROR);
    expect(h.ancount).toBeGreaterThan(0);
    expect(h.nscount).toBe(0);
    const answers = decode(reply).answers!;
    expect(answers.every((a) => a.type === 'A' && a.name.toLowerCase() === name.toLowerCase())).toBe(true);
    expect(new Set(answers.map((a) => (a.type === 'A' ? a.data : ''))).size).toBe(h.ancount);
    expect(questions(reply)).toEqual([{ name, type: T.A, klass: C.IN }]);
  }

  it('answers a small answer in full without EDNS', async () => {
    const q = buildQuery({ name: fixture.small, type: T.A });
    const reply = await udpQuery(q, target);
    const h = parseHeader(reply);
    expect(h.tc).toBe(false);
    expect(h.ancount).toBe(fixture.smallCount);
    expect(reply.length).toBeLessThanOrEqual(512);
  });

  it('truncates an answer over 512 bytes without EDNS: TC=1, <= 512 bytes, the A records that fit, question kept', async () => {
    for (const name of [fixture.medium, fixture.big]) {
      const q = buildQuery({ name, type: T.A });
      const reply = await udpQuery(q, target);
      expectTruncated(reply, q, name, 512);
      expect(optRecords(reply)).toHaveLength(0);
    }
  });

  it('treats a client UDP size below 512 as 512', async () => {
    for (const udpSize of [0, 100, 511]) {
      // ~216 bytes: fits in 512, would not fit in 100.
      const q = buildQuery({ name: fixture.small, type: T.A, edns: { udpSize } });
      const reply = await udpQuery(q, target);
      const h = parseHeader(reply);
      expect(h.id).toBe(idOf(q));
      expect(h.tc).toBe(false);
      expect(h.ancount).toBe(fixture.smallCount);
      expect(optRecords(reply)).toHaveLength(1);
      // ~696 bytes: over 512 -> truncated to <= 512, OPT kept.
      const q2 = buildQuery({ name: fixture.medium, type: T.A, edns: { udpSize } });
      const r2 = await udpQuery(q2, target);
      expectTruncated(r2, q2, fixture.medium, 512);
      expect(optRecords(r2)).toHaveLength(1);
    }
  });

  it("uses the client's EDNS size up to 1232: an answer between 512 and 1232 bytes fits exactly, one byte less truncates", async () => {
    // The full reply's size, whatever the server's name compression: the same query over TCP.
    const full = await tcpQuery(buildQuery({ name: fixture.window, type: T.A, edns: { udpSize: 1232 } }), target);
    expect(parseHeader(full).ancount).toBe(fixture.windowCount);
    const size = full.length;
    expect(size).toBeGreaterThan(512);
    expect(size).toBeLessThanOrEqual(1232);
    for (const udpSize of [size, 1232, 4096]) {
      const q = buildQuery({ name: fixture.window, type: T.A, edns: { udpSize } });
      const reply = await udpQuery(q, target);
      const h = parseHeader(reply);
      expect(h.id).toBe(idOf(q));
      expect(h.tc, `TC with udpSize ${udpSize} for a ${size}-byte answer`).toBe(false);
      expect(h.ancount).toBe(fixture.windowCount);
      expect(reply.length).toBe(size);
    }
    const q = buildQuery({ name: fixture.window, type: T.A, edns: { udpSize: size - 1 } });
    const reply = await udpQuery(q, target);
    expectTruncated(reply, q, fixture.window, size - 1);
    expect(optRecords(reply)).toHaveLength(1);
  });

  it('caps UDP replies at 1232 even when the client offers 4096: TC=1, the A records that fit, question and OPT kept', async () => {
    for (const udpSize of [1232, 4096, 65535]) {
      const q = buildQuery({ name: fixture.big, type: T.A, edns: { udpSize, do: true } });
      const reply = await udpQuery(q, target);
      expectTruncated(reply, q, fixture.big, 1232);
      const opts = optRecords(reply);
      expect(opts).toHaveLength(1);
      expect(opts[0]).toMatchObject({ udpSize: 1232, version: 0, do: true });
    }
  });

  it('answers the same big query over TCP in full, without TC', async () => {
    for (const edns of [undefined, { udpSize: 4096 }]) {
      const q = buildQuery({ name: fixture.big, type: T.A, edns });
      const reply = await tcpQuery(q, target);
      const h = parseHeader(reply);
      expect(h.id).toBe(idOf(q));
      expect(h.tc).toBe(false);
      expect(h.rcode).toBe(Rcode.NOERROR);
      expect(h.ancount).toBe(fixture.bigCount);
      expect(reply.length).toBeGreaterThan(1232);
      const ips = new Set(decode(reply).answers!.map((a) => (a.type === 'A' ? a.data : '')));
      expect(ips.size).toBe(fixture.bigCount);
      expect(optRecords(reply)).toHaveLength(edns ? 1 : 0);
    }
  });
});

describe('UDP: a burst of queries (replies held while the waiting datagrams are read, then sent together)', () => {
  it('answers every query of two clients sending at once, each reply to its own client, in the order asked', async () => {
    const host = target.host ?? '127.0.0.1';
    const clients = [createSocket('udp4'), createSocket('udp4')];
    const got: number[][] = [[], []];
    const names: string[][] = [[], []];
    for (let c = 0; c < 2; c++) {
      clients[c]!.on('message', (m) => {
        got[c]!.push(idOf(m));
        names[c]!.push(questions(m)[0]!.name);
      });
    }
    await Promise.all(clients.map((sock) => new Promise<void>((resolve) => sock.bind(0, host, () => resolve()))));
    try {
      // Within the socket buffers: a larger burst overflows them (the kernel drops, with or without holding).
      const per = 60;
      const name = (c: number, i: number): string => (i % 3 === 0 ? fixture.nginx : `missing-${c}-${i}.default.svc.cluster.local`);
      // Sent without waiting, alternating clients, so the server reads many per loop turn.
      const sent: Promise<void>[] = [];
      for (let i = 0; i < per; i++) {
        for (let c = 0; c < 2; c++) {
          const q = buildQuery({ id: c * 1000 + i, name: name(c, i), type: T.A });
          sent.push(new Promise<void>((resolve) => clients[c]!.send(q, target.port, host, () => resolve())));
        }
      }
      await Promise.all(sent);
      await holdsWithin(() => got[0]!.length >= per && got[1]!.length >= per, 5000, 20);
      for (let c = 0; c < 2; c++) {
        expect(got[c]).toEqual(Array.from({ length: per }, (_, i) => c * 1000 + i));
        expect(names[c]).toEqual(Array.from({ length: per }, (_, i) => name(c, i)));
      }
    } finally {
      for (const sock of clients) sock.close();
    }
  });
});
