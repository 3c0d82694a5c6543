// Odd and malformed packets over UDP: one test per row of README.md's protocol behaviour table
// (RFC 1035 4.1.1, RFC 6891 6.1.1/7, RFC 8482, RFC 5936/1995, RFC 8945). After every bad packet
// the server must still answer a good query.
import { describe, it, expect } from 'vitest';
import { serverForSuite } from '../helpers/suite.js';
import {
  buildQuery,
  C,
  decode,
  encodeHeader,
  encodeName,
  encodeOpt,
  encodeQuestion,
  encodeRr,
  expectStillServing,
  fixture,
  idOf,
  optRecords,
  parseHeader,
  prng,
  questions,
  rawRecords,
  Rcode,
  serverArgs,
  T,
  udpBlast,
  udpExchange,
  udpQuery,
} from './raw.js';

// The server must have survived everything in this file.
const suite = serverForSuite(serverArgs, { mustSurvive: true });
const { target, alive } = suite;

/** No datagram comes back within 300 ms, and the server keeps serving. */
async function expectDropped(msg: Buffer): Promise<void> {
  const reply = await udpExchange(msg, target, 300);
  expect(reply, `unexpected reply ${reply?.toString('hex')}`).toBeNull();
  await expectStillServing(target);
}

/**
 * README.md, Protocol behaviour: "FORMERR, header only, ID and opcode echoed, RD copied". The reply is a response
 * (QR=1) of exactly 12 bytes with all counts 0.
 */
function expectHeaderOnlyFormerr(reply: Buffer | null, query: Buffer): void {
  expect(reply, 'no reply').not.toBeNull();
  const q = parseHeader(query);
  const h = parseHeader(reply!);
  expect(h.qr).toBe(true);
  expect(h.id).toBe(q.id);
  expect(h.opcode).toBe(q.opcode);
  expect(h.rd).toBe(q.rd);
  expect(h.rcode).toBe(Rcode.FORMERR);
  expect(h.ancount).toBe(0);
  expect(h.nscount).toBe(0);
  expect(h.arcount).toBe(0);
  expect(h.qdcount).toBe(0);
  expect(reply!.length).toBe(12);
}

const hdr = (over: Parameters<typeof encodeHeader>[0] = {}): Buffer => encodeHeader({ id: 0xa1b2, rd: true, qdcount: 1, ...over });
const typeClass = (type: number = T.A, klass: number = C.IN): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt16BE(type, 0);
  b.writeUInt16BE(klass, 2);
  return b;
};

describe('packets shorter than a header', () => {
  it.each([0, 1, 2, 11])('drops a %i-byte datagram without a reply', async (n) => {
    const msg = Buffer.alloc(n, 0);
    if (n >= 2) msg.writeUInt16BE(0x7777, 0);
    await expectDropped(msg);
  });
});

describe('a full header, then a malformed question: FORMERR, header only', () => {
  const longLabel = Buffer.concat([Buffer.from([64]), Buffer.alloc(64, 0x61), Buffer.from([0])]);
  const label63 = Buffer.concat([Buffer.from([63]), Buffer.alloc(63, 0x62)]);
  const longName = Buffer.concat([label63, label63, label63, label63, label63, Buffer.from([0])]); // 321 bytes
  const cases: [string, Buffer][] = [
    ['label longer than 63 (length byte 64)', Buffer.concat([hdr(), longLabel, typeClass()])],
    ['label length byte 0x80 (reserved label type)', Buffer.concat([hdr(), Buffer.from([0x80, 0x61, 0]), typeClass()])],
    ['name longer than 255 bytes', Buffer.concat([hdr(), longName, typeClass()])],
    ['compression pointer to itself', Buffer.concat([hdr(), Buffer.from([0xc0, 12]), typeClass()])],
    ['two pointers forming a loop', Buffer.concat([hdr(), Buffer.from([0xc0, 14, 0xc0, 12]), typeClass()])],
    ['forward compression pointer', Buffer.concat([hdr(), Buffer.from([0xc0, 18]), typeClass(), encodeName('cluster.local')])],
    ['pointer past the end of the message', Buffer.concat([hdr(), Buffer.from([0xc0, 0xff]), typeClass()])],
    ['QDCOUNT 1 but nothing follows the header', hdr()],
    ['name not terminated (runs past the end)', Buffer.concat([hdr(), Buffer.from([5, 0x61, 0x62, 0x63, 0x64, 0x65])])],
    ['name but no type and class', Buffer.concat([hdr(), encodeName(fixture.nginx)])],
    ['name and only half the type/class', Buffer.concat([hdr(), encodeName(fixture.nginx), Buffer.from([0, 1])])],
    ['QDCOUNT 2 (two valid questions)', Buffer.concat([hdr({ qdcount: 2 }), encodeQuestion(fixture.nginx, T.A), encodeQuestion(fixture.nginx, T.AAAA)])],
    ['QDCOUNT 2 with one question present', Buffer.concat([hdr({ qdcount: 2 }), encodeQuestion(fixture.nginx, T.A)])],
  ];
  it.each(cases)('%s', async (_label, msg) => {
    expectHeaderOnlyFormerr(await udpExchange(msg, target, 2000), msg);
    await expectStillServing(target);
  });

  it('copies RD=0 and echoes the opcode in a FORMERR', async () => {
    const msg = Buffer.concat([hdr({ rd: false, id: 0x0102 }), longLabel, typeClass()]);
    expectHeaderOnlyFormerr(await udpExchange(msg, target, 2000), msg);
    await expectStillServing(target);
  });
});

describe('message-level format errors', () => {
  it('answers QDCOUNT 0 (no cookie) with FORMERR', async () => {
    const msg = hdr({ qdcount: 0 });
    const reply = await udpExchange(msg, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.qr).toBe(true);
    expect(h.id).toBe(0xa1b2);
    expect(h.rd).toBe(true);
    expect(h.rcode).toBe(Rcode.FORMERR);
    expect(h.ancount).toBe(0);
    await expectStillServing(target);
  });

  it('answers QDCOUNT 0 with an OPT (no cookie) with FORMERR', async () => {
    const msg = Buffer.concat([hdr({ qdcount: 0, arcount: 1 }), encodeOpt({ udpSize: 1232 })]);
    const reply = await udpExchange(msg, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.id).toBe(0xa1b2);
    expect(h.rcode).toBe(Rcode.FORMERR);
    await expectStillServing(target);
  });

  // README.md, Protocol behaviour: "bytes after the last record: FORMERR (answering normally is tolerated)".
  it.each([1, 17, 300])('answers a query with %i trailing garbage bytes with FORMERR or a normal answer, never silence', async (n) => {
    const q = buildQuery({ id: 0x5150, name: fixture.nginx, type: T.A });
    const msg = Buffer.concat([q, Buffer.alloc(n, 0xab)]);
    const reply = await udpExchange(msg, target, 2000);
    expect(reply, 'no reply to a query with trailing bytes').not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.qr).toBe(true);
    expect(h.id).toBe(0x5150);
    expect([Rcode.FORMERR, Rcode.NOERROR]).toContain(h.rcode);
    if (h.rcode === Rcode.NOERROR) {
      expect(decode(reply!).answers?.[0]).toMatchObject({ type: 'A', data: fixture.nginxIp });
    }
    await expectStillServing(target);
  });

  it('answers ARCOUNT 1 with no record following with FORMERR', async () => {
    const msg = Buffer.concat([hdr({ arcount: 1 }), encodeQuestion(fixture.nginx, T.A)]);
    const reply = await udpExchange(msg, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.id).toBe(0xa1b2);
    expect(h.rcode).toBe(Rcode.FORMERR);
    await expectStillServing(target);
  });

  it('does not answer a response (QR=1)', async () => {
    await expectDropped(buildQuery({ name: fixture.nginx, type: T.A, qr: true }));
    await expectDropped(buildQuery({ name: fixture.nginx, type: T.A, qr: true, aa: true, ancount: 0, edns: { udpSize: 1232 } }));
    // A response with a garbage question: still no reply (not even FORMERR).
    await expectDropped(Buffer.concat([hdr({ qr: true }), Buffer.from([0xc0, 12]), typeClass()]));
  });
});

describe('opcodes', () => {
  // README.md, Protocol behaviour: NOTIMP with AA, TC, RA, Z, AD, CD all 0, RD copied, question echoed.
  it.each([1, 3, 15])('answers opcode %i with NOTIMP, the question echoed, flags cleared, RD copied', async (opcode) => {
    for (const rd of [true, false]) {
      const name = 'NgInX.default.svc.cluster.local';
      const q = buildQuery({ name, type: T.A, opcode, rd, aa: true, tc: false, ra: true, z: true, ad: true, cd: true });
      const reply = await udpExchange(q, target, 2000);
      expect(reply, `no reply to opcode ${opcode}`).not.toBeNull();
      const h = parseHeader(reply!);
      expect(h.qr).toBe(true);
      expect(h.id).toBe(idOf(q));
      expect(h.opcode).toBe(opcode);
      expect(h.rcode).toBe(Rcode.NOTIMP);
      expect(h.rd).toBe(rd);
      expect({ aa: h.aa, tc: h.tc, ra: h.ra, z: h.z, ad: h.ad, cd: h.cd }).toEqual({ aa: false, tc: false, ra: false, z: false, ad: false, cd: false });
      expect(h.ancount).toBe(0);
      expect(questions(reply!)).toEqual([{ name, type: T.A, klass: C.IN }]);
    }
    await expectStillServing(target);
  });

  it('answers UPDATE (opcode 5) with NOTIMP', async () => {
    // RFC 2136: zone section (SOA IN), then one update RR adding an A record.
    const msg = Buffer.concat([
      encodeHeader({ id: 0x0505, opcode: 5, qdcount: 1, nscount: 1 }),
      encodeQuestion(fixture.zone, T.SOA, C.IN),
      encodeRr('added.cluster.local', T.A, C.IN, 300, Buffer.from([1, 2, 3, 4])),
    ]);
    const reply = await udpExchange(msg, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.qr).toBe(true);
    expect(h.id).toBe(0x0505);
    expect(h.opcode).toBe(5);
    expect(h.rcode).toBe(Rcode.NOTIMP);
    await expectStillServing(target);
    // And the update had no effect.
    const check = await udpQuery(buildQuery({ name: 'added.cluster.local', type: T.A }), target);
    expect(parseHeader(check).ancount).toBe(0);
  });
});

describe('OPT format errors (RFC 6891 section 7): FORMERR with an OPT record', () => {
  function expectFormerrWithOpt(reply: Buffer | null, id: number): void {
    expect(reply, 'no reply').not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.qr).toBe(true);
    expect(h.id).toBe(id);
    expect(h.rcode).toBe(Rcode.FORMERR);
    expect(h.ancount).toBe(0);
    const opts = optRecords(reply!);
    expect(opts).toHaveLength(1);
    expect(opts[0]!.extRcode).toBe(0);
    expect(opts[0]!.version).toBe(0);
  }

  it('two OPT records', async () => {
    const msg = Buffer.concat([
      hdr({ id: 0x0a0a, arcount: 2 }),
      encodeQuestion(fixture.nginx, T.A),
      encodeOpt({ udpSize: 1232 }),
      encodeOpt({ udpSize: 4096 }),
    ]);
    expectFormerrWithOpt(await udpExchange(msg, target, 2000), 0x0a0a);
    await expectStillServing(target);
  });

  it('an option whose length runs past the OPT rdata', async () => {
    // One option: code 10 (COOKIE), declared length 40, 8 bytes present.
    const rawRdata = Buffer.concat([Buffer.from([0, 10, 0, 40]), Buffer.alloc(8, 1)]);
    const msg = Buffer.concat([hdr({ id: 0x0b0b, arcount: 1 }), encodeQuestion(fixture.nginx, T.A), encodeOpt({ udpSize: 1232, rawRdata })]);
    expectFormerrWithOpt(await udpExchange(msg, target, 2000), 0x0b0b);
    await expectStillServing(target);
  });

  it('an OPT record in the answer section', async () => {
    const msg = Buffer.concat([hdr({ id: 0x0c0c, ancount: 1 }), encodeQuestion(fixture.nginx, T.A), encodeOpt({ udpSize: 1232 })]);
    expectFormerrWithOpt(await udpExchange(msg, target, 2000), 0x0c0c);
    await expectStillServing(target);
  });
});

describe('classes and zones: REFUSED with AA=0', () => {
  it.each([
    ['CH class for a name in the IN zone', fixture.nginx, T.A, C.CH],
    ['CH TXT version.bind', 'version.bind', T.TXT, C.CH],
    ['HS class', fixture.nginx, T.A, C.HS],
    ['unknown class 42', fixture.nginx, T.A, 42],
    ['a name outside every zone (example.org)', 'example.org', T.A, C.IN],
    ['a name outside every zone (www.example.org AAAA)', 'www.example.org', T.AAAA, C.IN],
    ['the root', '', T.NS, C.IN],
  ] as [string, string, number, number][])('%s', async (_label, name, type, klass) => {
    const q = buildQuery({ name, type, class: klass, edns: { udpSize: 1232 } });
    const reply = await udpExchange(q, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.qr).toBe(true);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.REFUSED);
    expect(h.aa).toBe(false);
    expect(h.ancount).toBe(0);
    expect(h.nscount).toBe(0);
    await expectStillServing(target);
  });
});

describe('ANY (RFC 8482)', () => {
  it.each([fixture.nginx, fixture.zone, fixture.big])('answers ANY %s with at most one RRset', async (name) => {
    const q = buildQuery({ name, type: T.ANY, edns: { udpSize: 1232 } });
    const reply = await udpExchange(q, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.NOERROR);
    const answer = rawRecords(reply!).filter((r) => r.section === 'answer');
    const d = decode(reply!);
    const rrsets = new Set((d.answers ?? []).map((a) => `${a.name.toLowerCase()}|${a.type}`));
    expect(rrsets.size, `answer has RRsets ${[...rrsets].join(', ')}`).toBeLessThanOrEqual(1);
    expect(answer.length).toBe(d.answers?.length ?? 0);
    await expectStillServing(target);
  });
});

describe('zone transfers over UDP', () => {
  it('answers AXFR over UDP with NOTIMP', async () => {
    const q = buildQuery({ name: fixture.zone, type: T.AXFR, rd: false });
    const reply = await udpExchange(q, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.id).toBe(idOf(q));
    expect(h.rcode).toBe(Rcode.NOTIMP);
    expect(h.ancount).toBe(0);
    await expectStillServing(target);
  });

  it('answers IXFR over UDP with REFUSED (no transfer plugin)', async () => {
    // RFC 1995: the client's SOA goes in the authority section.
    const soa = Buffer.concat([encodeName('ns.dns.cluster.local'), encodeName('hostmaster.cluster.local'), Buffer.alloc(20)]);
    soa.writeUInt32BE(1, soa.length - 20);
    const msg = Buffer.concat([
      encodeHeader({ id: 0x1f1f, qdcount: 1, nscount: 1 }),
      encodeQuestion(fixture.zone, T.IXFR, C.IN),
      encodeRr(fixture.zone, T.SOA, C.IN, 5, soa),
    ]);
    const reply = await udpExchange(msg, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.id).toBe(0x1f1f);
    expect(h.rcode).toBe(Rcode.REFUSED);
    expect(h.ancount).toBe(0);
    await expectStillServing(target);
  });
});

describe('TSIG (RFC 8945)', () => {
  it('never answers normally to a query signed with an unknown key: NOTAUTH+BADKEY with an unsigned TSIG, or REFUSED', async () => {
    const time = Buffer.alloc(6);
    time.writeUIntBE(Math.floor(Date.now() / 1000), 0, 6);
    const q = buildQuery({ id: 0x7357, name: fixture.nginx, type: T.A, arcount: 1 });
    const rdata = Buffer.concat([
      encodeName('hmac-sha256'),
      time,
      Buffer.from([0x01, 0x2c]), // fudge 300
      Buffer.from([0, 32]),
      Buffer.alloc(32, 0x5a), // MAC
      Buffer.from([0x73, 0x57]), // original ID
      Buffer.from([0, 0]), // error
      Buffer.from([0, 0]), // other len
    ]);
    const msg = Buffer.concat([q, encodeRr('unknown-key.example', T.TSIG, C.ANY, 0, rdata)]);
    const reply = await udpExchange(msg, target, 2000);
    expect(reply).not.toBeNull();
    const h = parseHeader(reply!);
    expect(h.id).toBe(0x7357);
    expect([Rcode.NOTAUTH, Rcode.REFUSED]).toContain(h.rcode);
    expect(h.ancount).toBe(0);
    if (h.rcode === Rcode.NOTAUTH) {
      const tsig = rawRecords(reply!).filter((r) => r.type === T.TSIG);
      expect(tsig).toHaveLength(1);
      expect(tsig[0]!.section).toBe('additional');
      // rdata: algorithm name, time(6), fudge(2), mac size(2), mac, original id(2), error(2), other.
      const rd = tsig[0]!.rdata;
      let o = 0;
      for (let guard = 0; guard < 128 && o < rd.length && rd[o] !== 0 && (rd[o]! & 0xc0) !== 0xc0; guard++) o += rd[o]! + 1;
      o += rd[o] === 0 ? 1 : 2;
      o += 8;
      expect(rd.length).toBeGreaterThanOrEqual(o + 6);
      const macSize = rd.readUInt16BE(o);
      expect(macSize).toBe(0);
      o += 2 + macSize + 2;
      expect(rd.readUInt16BE(o)).toBe(17); // BADKEY
    }
    await expectStillServing(target);
  });
});

describe('fuzzing', () => {
  it('survives 2,000 random and mutated packets (seeded, <= 10 s) and still answers', async () => {
    const rand = prng(0xc1d5);
    const int = (n: number): number => Math.floor(rand() * n);
    const seeds: Buffer[] = [
      buildQuery({ name: fixture.nginx, type: T.A }),
      buildQuery({ name: 'NgInX.default.svc.CLUSTER.local', type: T.SRV, edns: { udpSize: 4096, do: true } }),
      buildQuery({ name: fixture.big, type: T.A, edns: { udpSize: 1232, options: [{ code: 10, data: Buffer.alloc(8, 7) }] } }),
      buildQuery({ name: fixture.zone, type: T.SOA }),
      buildQuery({ name: fixture.zone, type: T.AXFR }),
      buildQuery({ name: 'example.org', type: T.ANY, class: C.CH }),
      Buffer.concat([hdr({ arcount: 2 }), encodeQuestion(fixture.nginx, T.A), encodeOpt(), encodeOpt()]),
    ];
    function mutate(): Buffer {
      const kind = int(6);
      if (kind === 0) {
        // Pure noise.
        const b = Buffer.alloc(int(600));
        for (let i = 0; i < b.length; i++) b[i] = int(256);
        return b;
      }
      const base = Buffer.from(seeds[int(seeds.length)]!);
      if (kind === 1) {
        // Bit flips.
        const flips = 1 + int(8);
        for (let i = 0; i < flips; i++) base[int(base.length)]! ^= 1 << int(8);
        return base;
      }
      if (kind === 2) {
        // Truncation.
        return base.subarray(0, int(base.length));
      }
      if (kind === 3) {
        // Random counts / flags in an otherwise valid query.
        for (let i = 2; i < 12; i++) if (rand() < 0.3) base[i] = int(256);
        return base;
      }
      if (kind === 4) {
        // Random bytes appended or spliced in.
        const extra = Buffer.alloc(1 + int(64));
        for (let i = 0; i < extra.length; i++) extra[i] = int(256);
        const at = 12 + int(Math.max(1, base.length - 12));
        return Buffer.concat([base.subarray(0, at), extra, base.subarray(at)]);
      }
      // Compression pointers dropped at random places in the name area.
      const at = 12 + int(Math.max(1, base.length - 13));
      base[at] = 0xc0 | int(64);
      base[at + 1] = int(256);
      return base;
    }
    const packets = Array.from({ length: 2000 }, mutate);
    const { sent, replies } = await udpBlast(packets, target, { deadline: Date.now() + 10_000, pauseEvery: 25 });
    expect(sent).toBeGreaterThan(0);
    expect(alive(), `server died: ${suite.server.stderr.join('')}`).toBe(true);
    // Whatever the server said back is a well-formed response.
    for (const r of replies) {
      expect(r.length).toBeGreaterThanOrEqual(12);
      expect(parseHeader(r).qr).toBe(true);
      expect(() => rawRecords(r), r.toString('hex')).not.toThrow();
      expect(r.length).toBeLessThanOrEqual(1232);
    }
    await expectStillServing(target);
    expect(alive()).toBe(true);
  }, 30_000);
});
