// encodePacket: dns-packet's shapes in, RFC 1035 4.1.4 compressed wire out (miekg/dns rules:
// case-sensitive suffix matching, SRV targets and DNAME never compressed, pointers < 0x4000).
import { describe, it, expect } from 'vitest';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import type { Answer, Packet, Question } from 'dns-packet';
import { encodePacket, encodeSimple, parseName } from '../../src/dns/encode.js';
import { encodeGeneral, encodeResponse } from '../../src/dns/response.js';
import type { ParsedQuery } from '../../src/dns/query.js';
import type { DnsResponse } from '../../src/dns/records.js';
import { prng } from '../helpers/prng.js';

const execFileP = promisify(execFile);

/** Both encoders must mean the same thing; dns-packet mutates TXT input, so ours runs first. */
function compare(p: Packet): { ours: Buffer; theirs: Buffer } {
  const ours = encodePacket(p);
  const theirs = dnsPacket.encode(p);
  expect(dnsPacket.decode(ours)).toEqual(dnsPacket.decode(theirs));
  expect(ours.length).toBeLessThanOrEqual(theirs.length);
  return { ours, theirs };
}

const bare = (name: string): string => (name === '.' || name === '' ? '.' : name.replace(/\.$/, ''));

/** Every name of a packet, in the order written, as dns-packet decodes them. */
function namesOf(p: Packet): string[] {
  const out: string[] = [];
  for (const q of p.questions ?? []) out.push(bare(q.name));
  for (const list of [p.answers, p.authorities, p.additionals]) {
    for (const r of list ?? []) {
      out.push(bare(r.name));
      const d = (r as { data?: unknown }).data;
      switch (r.type) {
        case 'CNAME':
        case 'NS':
        case 'PTR':
        case 'DNAME':
          out.push(bare(d as string));
          break;
        case 'MX':
          out.push(bare((d as { exchange: string }).exchange));
          break;
        case 'SRV':
          out.push(bare((d as { target: string }).target));
          break;
        case 'SOA':
          out.push(bare((d as { mname: string }).mname), bare((d as { rname: string }).rname));
          break;
      }
    }
  }
  return out;
}

function resp(answers: Answer[], extra: Partial<Packet> = {}): Packet {
  const first = answers[0];
  return {
    id: 0x1234,
    type: 'response',
    flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED,
    questions: [{ name: first ? first.name : 'example.com.', type: first && first.type !== 'OPT' ? first.type : 'A', class: 'IN' } as Question],
    answers,
    ...extra,
  };
}

const opt = (flags: number, extendedRcode = 0, options: unknown[] = []): Answer =>
  ({ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode, ednsVersion: 0, flags, options }) as unknown as Answer;

const headless = 'Web.Default.svc.Cluster.Local.';
const hundredA: Answer[] = Array.from({ length: 100 }, (_, i) => ({
  name: headless,
  type: 'A',
  class: 'IN',
  ttl: 5,
  data: `10.0.${i >> 8}.${i & 255}`,
}));

const soa: Answer = {
  name: 'cluster.local.',
  type: 'SOA',
  class: 'IN',
  ttl: 5,
  data: { mname: 'ns.dns.cluster.local.', rname: 'hostmaster.cluster.local.', serial: 1712345678, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 },
};

const srvPacket: Packet = resp(
  ['0', '1', '2'].map((i) => ({
    name: '_http._tcp.api.prod.svc.cluster.local.',
    type: 'SRV' as const,
    class: 'IN' as const,
    ttl: 5,
    data: { priority: 0, weight: 33, port: 8080, target: `10-0-0-${i}.api.prod.svc.cluster.local.` },
  })),
  {
    additionals: [
      ...['0', '1', '2'].map((i) => ({
        name: `10-0-0-${i}.api.prod.svc.cluster.local.`,
        type: 'A' as const,
        class: 'IN' as const,
        ttl: 5,
        data: `10.0.0.${i}`,
      })),
      opt(0x8000),
    ],
  },
);

const table: Array<[string, Packet]> = [
  ['A with OPT', resp([{ name: 'web.default.svc.cluster.local.', type: 'A', ttl: 5, data: '10.96.0.10' }], { additionals: [opt(0)] })],
  [
    'AAAA forms',
    resp(
      ['::', '::1', '2001:db8::1', 'fd00:10:96::a', '1:2:3:4:5:6:7:8', '::ffff:10.1.2.3', 'FE80::ABCD:0:0:1'].map((a) => ({
        name: 'v6.example.com.',
        type: 'AAAA' as const,
        ttl: 30,
        data: a,
      })),
    ),
  ],
  [
    'CNAME chain, mixed case',
    resp([
      { name: 'WwW.ExAmple.com.', type: 'CNAME', ttl: 60, data: 'Web.ExAmple.com.' },
      { name: 'Web.ExAmple.com.', type: 'CNAME', ttl: 60, data: 'web.example.com.' },
      { name: 'web.example.com.', type: 'A', ttl: 60, data: '192.0.2.1' },
    ]),
  ],
  [
    'NS and PTR',
    resp([
      { name: 'cluster.local.', type: 'NS', ttl: 5, data: 'ns.dns.cluster.local.' },
      { name: '10.0.96.10.in-addr.arpa.', type: 'PTR', ttl: 5, data: 'kube-dns.kube-system.svc.cluster.local.' },
    ]),
  ],
  [
    'MX',
    resp([
      { name: 'example.com', type: 'MX', ttl: 300, data: { preference: 10, exchange: 'mail.example.com' } },
      { name: 'example.com', type: 'MX', ttl: 300, data: { exchange: 'MAIL2.example.com' } },
    ]),
  ],
  ['SOA in authority (NXDOMAIN)', { ...resp([]), flags: 0x0400 | 3, questions: [{ name: 'Nope.Cluster.Local.', type: 'A', class: 'IN' }], authorities: [soa] }],
  ['SOA with escaped rname', resp([{ name: 'example.com.', type: 'SOA', ttl: 5, data: { mname: 'ns1.example.com.', rname: 'john\\.doe.example.com.' } }])],
  ['SRV with glue', srvPacket],
  [
    'TXT shapes',
    resp([
      { name: 'dns-version.cluster.local.', type: 'TXT', ttl: 28800, data: '1.1.0' },
      { name: 'dns-version.cluster.local.', type: 'TXT', ttl: 28800, data: ['a', Buffer.from([0, 1, 2]), ''] },
      { name: 'dns-version.cluster.local.', type: 'TXT', ttl: 28800, data: Buffer.from('buf') },
      { name: 'dns-version.cluster.local.', type: 'TXT', ttl: 28800, data: 'x'.repeat(255) },
      { name: 'dns-version.cluster.local.', type: 'TXT', ttl: 28800, data: 'héllo wörld' },
    ]),
  ],
  [
    'CAA',
    resp([
      { name: 'example.com.', type: 'CAA', ttl: 5, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
      { name: 'example.com.', type: 'CAA', ttl: 5, data: { issuerCritical: true, tag: 'iodef', value: 'mailto:sec@example.com' } },
    ]),
  ],
  [
    'OPT with DO, extended rcode (BADVERS) and options',
    {
      ...resp([]),
      flags: 0,
      additionals: [
        opt(0x8000, 1, [
          { code: 10, data: Buffer.from('0123456789abcdef', 'hex') },
          { code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: '192.0.2.0' },
          { code: 'TCP_KEEPALIVE', timeout: 100 },
          { code: 'PADDING', length: 7 },
        ]),
      ],
    },
  ],
  ['100 A records, same owner, with OPT', resp(hundredA, { additionals: [opt(0x8000)] })],
  [
    'root names',
    {
      ...resp([]),
      questions: [{ name: '.', type: 'NS', class: 'IN' }],
      answers: [
        { name: '.', type: 'NS', ttl: 518400, data: 'a.root-servers.net.' },
        { name: '', type: 'NS', ttl: 518400, data: 'B.root-servers.net.' },
      ],
      authorities: [{ name: '.', type: 'SOA', ttl: 86400, data: { mname: '.', rname: '.', serial: 1 } }],
    },
  ],
  [
    'suffixes shared with different case',
    resp([
      { name: 'svc.ns.SVC.cluster.local.', type: 'CNAME', ttl: 5, data: 'Svc.NS.svc.cluster.local.' },
      { name: 'Svc.NS.svc.cluster.local.', type: 'CNAME', ttl: 5, data: 'svc.ns.svc.CLUSTER.LOCAL.' },
      { name: 'svc.ns.svc.CLUSTER.LOCAL.', type: 'A', ttl: 5, data: '10.0.0.1' },
      { name: 'SVC.NS.SVC.CLUSTER.LOCAL.', type: 'A', ttl: 5, data: '10.0.0.2' },
    ]),
  ],
  [
    'DNAME and fallback types',
    resp([
      { name: 'old.example.com.', type: 'DNAME', ttl: 5, data: 'new.example.com.' },
      { name: 'example.com.', type: 'HINFO', ttl: 5, data: { cpu: 'x86', os: 'linux' } },
      {
        name: 'example.com.',
        type: 'NAPTR',
        ttl: 5,
        data: { order: 1, preference: 2, flags: 'S', services: 'SIP+D2U', regexp: '', replacement: '_sip._udp.example.com' },
      },
      { name: 'example.com.', type: 'DS', ttl: 5, data: { keyTag: 1, algorithm: 8, digestType: 2, digest: Buffer.alloc(32, 7) } },
      { name: 'example.com.', type: 'SSHFP', ttl: 5, data: { algorithm: 1, hash: 1, fingerprint: 'a'.repeat(40) } },
      { name: 'example.com.', type: 'TLSA', ttl: 5, data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.alloc(32, 9) } },
      { name: 'example.com.', type: 'RP', ttl: 5, data: { mbox: 'admin.example.com', txt: 'txt.example.com' } },
      { name: 'example.com.', type: 'NSEC', ttl: 5, data: { nextDomain: 'a.example.com', rrtypes: ['A', 'TXT', 'RRSIG'] } },
      { name: 'example.com.', type: 'NULL', ttl: 5, data: Buffer.from('nothing') },
      { name: 'example.com.', type: 'UNKNOWN_65280', ttl: 5, data: Buffer.from([1, 2, 3]) } as unknown as Answer,
      {
        name: 'example.com.',
        type: 'RRSIG',
        ttl: 5,
        data: {
          typeCovered: 'A',
          algorithm: 8,
          labels: 2,
          originalTTL: 5,
          expiration: 2,
          inception: 1,
          keyTag: 3,
          signersName: 'example.com',
          signature: Buffer.alloc(16, 1),
        },
      },
      { name: 'example.com.', type: 'DNSKEY', ttl: 5, data: { flags: 257, algorithm: 8, key: Buffer.alloc(20, 3) } },
    ]),
  ],
  [
    'class, flush, lowercase type, query type',
    {
      id: 65535,
      type: 'query',
      flags: 0xffff,
      questions: [{ name: 'example.com', type: 'ANY', class: 'CH' } as unknown as Question],
      answers: [
        { name: 'example.com', type: 'a', class: 'HS', ttl: 0xffffffff, flush: true, data: '1.2.3.4' } as unknown as Answer,
        { name: 'example.com', type: 'txt', class: 'ANY', data: 'x' } as unknown as Answer,
      ],
    },
  ],
];

describe('encodePacket matches dns-packet semantics', () => {
  for (const [title, p] of table) {
    it(title, () => {
      const { ours } = compare(p);
      const decoded = dnsPacket.decode(ours);
      // every name keeps its exact spelling (SOA rname escapes survive dns-packet's mail decoding)
      expect(namesOf(decoded as Packet)).toEqual(namesOf(p).map(bare));
    });
  }
});

describe('compression', () => {
  it('shortens repeated names', () => {
    for (const [title, p] of table) {
      if (title.startsWith('100 A') || title.startsWith('SRV') || title.startsWith('CNAME') || title.startsWith('SOA in')) {
        const { ours, theirs } = compare(p);
        expect(ours.length, title).toBeLessThan(theirs.length);
      }
    }
  });

  it('100 A records for one name cost 16 octets each (pointer + fixed fields + address)', () => {
    const p = resp(hundredA);
    const ours = encodePacket(p);
    const header = 12;
    const question = headless.length + 1 + 4;
    expect(ours.length).toBe(header + question + 100 * 16);
    // every owner is a pointer to the question name at offset 12
    let off = header + question;
    for (let i = 0; i < 100; i++, off += 16) expect(ours.readUInt16BE(off)).toBe(0xc000 | 12);
  });

  it('headless services: 29 A records fit in 512 octets, 40 in an EDNS 1232', () => {
    const p = resp(hundredA.slice(0, 29));
    expect(encodePacket(p).length).toBeLessThanOrEqual(512);
    expect(dnsPacket.encode(p).length).toBeGreaterThan(512);
    const p40 = resp(hundredA.slice(0, 40), { additionals: [opt(0)] });
    expect(encodePacket(p40).length).toBeLessThanOrEqual(1232);
    expect(dnsPacket.encode(p40).length).toBeGreaterThan(1232);
  });

  it('matches suffixes case-sensitively', () => {
    const p = resp([
      { name: 'a.Example.com.', type: 'A', ttl: 1, data: '1.1.1.1' },
      { name: 'a.example.com.', type: 'A', ttl: 1, data: '1.1.1.2' },
    ]);
    const ours = encodePacket(p);
    // question a.Example.com at 12; answer 1 owner: pointer to 12; answer 2: "a" "example" then pointer to "com"
    const q = 12;
    const ans1 = q + 15 + 4;
    expect(ours.readUInt16BE(ans1)).toBe(0xc000 | q);
    const ans2 = ans1 + 16;
    expect(ours.subarray(ans2, ans2 + 10)).toEqual(Buffer.from('\x01a\x07example', 'latin1'));
    expect(ours.readUInt16BE(ans2 + 10)).toBe(0xc000 | (q + 10)); // "com" inside the question
    expect(dnsPacket.decode(ours).answers?.map((a) => a.name)).toEqual(['a.Example.com', 'a.example.com']);
  });

  it('never compresses SRV targets, but later names may point into them', () => {
    const ours = encodePacket(srvPacket);
    const decoded = dnsPacket.decode(ours);
    expect(decoded.answers).toHaveLength(3);
    // walk the answer section by hand
    let off = 12;
    while (ours[off] !== 0) off += ours[off]! + 1;
    off += 1 + 4;
    const targets: number[] = [];
    for (let i = 0; i < 3; i++) {
      expect(ours.readUInt16BE(off)).toBe(0xc00c); // owner: the question
      expect(ours.readUInt16BE(off + 2)).toBe(33);
      const rdlen = ours.readUInt16BE(off + 10);
      const rdata = ours.subarray(off + 12, off + 12 + rdlen);
      const target = `10-0-0-${i}.api.prod.svc.cluster.local`;
      const wire = Buffer.concat([...target.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
      expect(rdata.subarray(6)).toEqual(wire); // full, uncompressed target
      targets.push(off + 12 + 6);
      off += 12 + rdlen;
    }
    // glue owners are pointers to the SRV targets
    for (let i = 0; i < 3; i++) {
      expect(ours.readUInt16BE(off)).toBe(0xc000 | targets[i]!);
      off += 2 + 10 + 4;
    }
  });

  it("enters the first name's suffixes once another name needs them", () => {
    const q = 'Host.Example.com.';
    const p = resp([
      { name: q, type: 'A', ttl: 1, data: '1.1.1.1' }, // pointer to the question
      { name: q, type: 'SRV', ttl: 1, data: { port: 1, target: q } }, // written in full
      { name: 'sub.' + q, type: 'CNAME', ttl: 1, data: 'Example.com.' }, // both point into the question
    ]);
    const { ours } = compare(p);
    const last = ours.subarray(ours.length - 2 - 10 - 2 - 4);
    expect(last.readUInt16BE(4)).toBe(0xc00c); // "sub" + pointer to the question
    expect(last.readUInt16BE(last.length - 2)).toBe(0xc00c + 5); // "Example.com" inside it
  });

  it('never compresses DNAME targets', () => {
    const p = resp([{ name: 'old.example.com.', type: 'DNAME', ttl: 5, data: 'old.example.com.' }]);
    const ours = encodePacket(p);
    const rdata = ours.subarray(ours.length - 17);
    expect(rdata).toEqual(Buffer.from('\x03old\x07example\x03com\x00', 'latin1'));
  });

  it('only points below 0x4000', () => {
    // 400 TXT records of 60 octets push later names past offset 0x4000
    const answers: Answer[] = [];
    for (let i = 0; i < 400; i++) answers.push({ name: `n${i}.Example.com.`, type: 'TXT', ttl: 1, data: 'y'.repeat(60) });
    for (let i = 0; i < 400; i++) answers.push({ name: `n${i}.Example.com.`, type: 'CNAME', ttl: 1, data: `t${i}.example.com.` });
    const p = resp(answers);
    const { ours } = compare(p);
    expect(ours.length).toBeGreaterThan(0x8000);
    expect(namesOf(dnsPacket.decode(ours) as Packet)).toEqual(namesOf(p).map(bare));
  });
});

describe('names', () => {
  const wireOfQuestion = (name: string): Buffer => {
    const ours = encodePacket({ id: 1, type: 'response', questions: [{ name, type: 'A', class: 'IN' }] });
    return ours.subarray(12, ours.length - 4);
  };

  it('reads presentation escapes', () => {
    expect(wireOfQuestion('a\\.b.example.')).toEqual(Buffer.from('\x03a.b\x07example\x00', 'latin1'));
    expect(wireOfQuestion('a\\\\b.')).toEqual(Buffer.from('\x03a\\b\x00', 'latin1'));
    expect(wireOfQuestion('\\065bc\\000\\255.x')).toEqual(Buffer.from('\x05Abc\x00\xff\x01x\x00', 'latin1'));
    expect(wireOfQuestion('a\\.')).toEqual(Buffer.from('\x02a.\x00', 'latin1'));
    expect(wireOfQuestion('\\a\\-b.')).toEqual(Buffer.from('\x03a-b\x00', 'latin1'));
    expect(wireOfQuestion('bücher.de')).toEqual(Buffer.from('\x07b\xc3\xbccher\x02de\x00', 'latin1'));
    expect(wireOfQuestion('.')).toEqual(Buffer.from([0]));
    expect(wireOfQuestion('')).toEqual(Buffer.from([0]));
    expect(parseName('a\\.b.c.').map((l) => Buffer.from(l).toString('latin1'))).toEqual(['a.b', 'c']);
  });

  it('compresses escaped and plain spellings of the same octets', () => {
    const p = resp([{ name: '\\065bc.example.com.', type: 'A', ttl: 1, data: '1.2.3.4' }]);
    p.questions = [{ name: 'Abc.example.com.', type: 'A', class: 'IN' }];
    const ours = encodePacket(p);
    expect(ours.readUInt16BE(12 + 17 + 4)).toBe(0xc00c);
    const p2 = resp([{ name: 'x.a\\.b.com.', type: 'A', ttl: 1, data: '1.2.3.4' }]);
    p2.questions = [{ name: 'y.a\\046b.com', type: 'A', class: 'IN' }];
    const ours2 = encodePacket(p2);
    expect(ours2.readUInt16BE(12 + 11 + 4 + 2)).toBe(0xc00c + 2); // "a.b.com" inside the question
  });

  it('rejects bad names with a clear message', () => {
    const bad =
      (name: string): (() => Buffer) =>
      () =>
        encodePacket({ id: 1, type: 'response', questions: [{ name, type: 'A', class: 'IN' }] });
    expect(bad('x'.repeat(64) + '.com.')).toThrow(/label longer than 63 octets/);
    expect(bad('x'.repeat(63) + '.com.')).not.toThrow();
    const long = Array.from({ length: 4 }, () => 'x'.repeat(63)).join('.'); // 4*64 + 1 = 257 octets
    expect(bad(long)).toThrow(/longer than 255 octets/);
    const max = [...Array.from({ length: 3 }, () => 'x'.repeat(63)), 'x'.repeat(61)].join('.') + '.'; // 255
    expect(bad(max)).not.toThrow();
    expect(bad(max.replace(/^x/, '\\120'))).not.toThrow();
    expect(bad('x' + max)).toThrow(/longer than 255 octets/);
    expect(bad('\\120.' + max)).toThrow(/longer than 255 octets/);
    expect(bad('a..b.')).toThrow(/empty label/);
    expect(bad('.a.')).toThrow(/empty label/);
    expect(bad('a\\')).toThrow(/backslash/);
    expect(bad('a\\25')).toThrow(/escape/);
    expect(bad('a\\256')).toThrow(/escape/);
    expect(bad('\\' + 'x'.repeat(64))).toThrow(/63/);
  });

  it('splits TXT strings longer than 255 octets', () => {
    const p = resp([{ name: 'big.example.', type: 'TXT', ttl: 1, data: ['z'.repeat(600), Buffer.alloc(256, 1)] }]);
    const decoded = dnsPacket.decode(encodePacket(p));
    const data = (decoded.answers![0] as { data: Buffer[] }).data;
    expect(data.map((b) => b.length)).toEqual([255, 255, 90, 255, 1]);
    expect(Buffer.concat(data.slice(0, 3)).toString()).toBe('z'.repeat(600));
  });

  it('rejects bad addresses', () => {
    for (const a of ['1.2.3', '1.2.3.4.5', '256.1.1.1', '1..2.3', 'a.b.c.d', '']) {
      expect(() => encodePacket(resp([{ name: 'x.', type: 'A', ttl: 1, data: a }])), a).toThrow(/IPv4/);
    }
    for (const a of ['1::2::3', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '12345::', 'g::', '1:2:3:4:5:6:7::8']) {
      expect(() => encodePacket(resp([{ name: 'x.', type: 'AAAA', ttl: 1, data: a }])), a).toThrow(/IPv6/);
    }
  });

  it('does not change its input', () => {
    const p = resp([{ name: 'x.', type: 'TXT', ttl: 1, data: ['a', 'b'] }]);
    encodePacket(p);
    expect((p.answers![0] as { data: unknown[] }).data).toEqual(['a', 'b']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('randomized round trip', () => {
  it('500 packets decode the same as dns-packet and keep every spelling', () => {
    const rnd = prng(20240601);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const int = (n: number): number => Math.floor(rnd() * n);
    const labels = [
      'web',
      'api',
      'default',
      'kube-system',
      'svc',
      'pod',
      'cluster',
      'local',
      'example',
      'com',
      '_http',
      '_tcp',
      'a',
      'b1',
      'x-y-z',
      '10-0-0-1',
    ];
    const mixCase = (s: string): string => (rnd() < 0.3 ? [...s].map((c) => (rnd() < 0.5 ? c.toUpperCase() : c)).join('') : s);
    const zones = ['cluster.local', 'Cluster.Local', 'example.com', 'svc.cluster.local', 'in-addr.arpa'];
    const name = (): string => {
      if (rnd() < 0.03) return '.';
      const n = int(4);
      const parts: string[] = [];
      for (let i = 0; i < n; i++) parts.push(mixCase(pick(labels)));
      parts.push(pick(zones));
      return parts.join('.') + (rnd() < 0.8 ? '.' : '');
    };
    const ipv4 = (): string => [int(256), int(256), int(256), int(256)].join('.');
    const ipv6 = (): string => {
      const g = Array.from({ length: 8 }, () => (rnd() < 0.4 ? 0 : int(65536)).toString(16));
      const s = g.join(':');
      return rnd() < 0.5 ? s.replace(/(^|:)0(:0)+(:|$)/, '::') : s;
    };
    const record = (): Answer => {
      const owner = name();
      const ttl = int(100000);
      switch (int(11)) {
        case 0:
          return { name: owner, type: 'A', ttl, data: ipv4() };
        case 1:
          return { name: owner, type: 'AAAA', ttl, data: ipv6() };
        case 2:
          return { name: owner, type: 'CNAME', ttl, data: name() };
        case 3:
          return { name: owner, type: 'NS', ttl, data: name() };
        case 4:
          return { name: owner, type: 'PTR', ttl, data: name() };
        case 5:
          return { name: owner, type: 'MX', ttl, data: { preference: int(65536), exchange: name() } };
        case 6:
          return { name: owner, type: 'SRV', ttl, data: { priority: int(65536), weight: int(65536), port: int(65536), target: name() } };
        case 7:
          return {
            name: owner,
            type: 'SOA',
            ttl,
            data: { mname: name(), rname: name(), serial: int(2 ** 32), refresh: int(2 ** 31), retry: int(9999), expire: int(99999), minimum: int(999) },
          };
        case 8:
          return { name: owner, type: 'TXT', ttl, data: Array.from({ length: 1 + int(3) }, () => 'q'.repeat(int(256))) };
        case 9:
          return { name: owner, type: 'DNAME', ttl, data: name() };
        default:
          return { name: owner, type: 'CAA', ttl, data: { flags: 0, tag: 'issue', value: name() } };
      }
    };
    let shorter = 0;
    for (let i = 0; i < 500; i++) {
      const section = (max: number): Answer[] => Array.from({ length: int(max) }, record);
      const p: Packet = {
        id: int(65536),
        type: 'response',
        flags: int(65536),
        questions: rnd() < 0.95 ? [{ name: name(), type: pick(['A', 'AAAA', 'SRV', 'TXT', 'ANY']), class: 'IN' } as Question] : [],
        answers: section(12),
        authorities: section(3),
        additionals: [...section(5), ...(rnd() < 0.5 ? [opt(rnd() < 0.5 ? 0x8000 : 0, int(256))] : [])],
      };
      const expectedNames = namesOf(p).map(bare);
      const { ours, theirs } = compare(p);
      expect(namesOf(dnsPacket.decode(ours) as Packet)).toEqual(expectedNames);
      if (ours.length < theirs.length) shorter++;
    }
    expect(shorter).toBeGreaterThan(400);
  });
});

// ---------------------------------------------------------------------------------------------

async function hasDig(): Promise<boolean> {
  try {
    await execFileP('dig', ['-v']);
    return true;
  } catch {
    return false;
  }
}

describe.runIf(await hasDig())('dig reads our replies', () => {
  it('parses a compressed SRV reply with glue and keeps the spelling', async () => {
    const sock = createSocket('udp4');
    sock.on('message', (msg, rinfo) => {
      const q = dnsPacket.decode(msg);
      const qname = q.questions![0]!.name + '.';
      const out = encodePacket({
        ...srvPacket,
        id: q.id,
        flags: 0x0400,
        questions: [{ name: qname, type: 'SRV', class: 'IN' }],
        answers: srvPacket.answers!.map((a) => ({ ...a, name: qname })),
      });
      sock.send(out, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    const port = (sock.address() as AddressInfo).port;
    try {
      const { stdout } = await execFileP('dig', [
        '+norec',
        '+tries=1',
        '+time=3',
        '+nocookie',
        '+noall',
        '+answer',
        '+additional',
        '-p',
        String(port),
        '@127.0.0.1',
        '_HTTP._tcp.Api.prod.svc.cluster.local',
        'SRV',
      ]);
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/));
      const srv = lines.filter((l) => l[3] === 'SRV');
      const a = lines.filter((l) => l[3] === 'A');
      expect(srv).toHaveLength(3);
      for (const [i, l] of srv.entries()) {
        expect(l[0]).toBe('_HTTP._tcp.Api.prod.svc.cluster.local.');
        expect(l.slice(4)).toEqual(['0', '33', '8080', `10-0-0-${i}.api.prod.svc.cluster.local.`]);
      }
      expect(a.map((l) => [l[0], l[4]])).toEqual([0, 1, 2].map((i) => [`10-0-0-${i}.api.prod.svc.cluster.local.`, `10.0.0.${i}`]));
    } finally {
      sock.close();
    }
  });
});

describe('fitting a message into a size limit (miekg/dns Msg.Truncate, what CoreDNS sends)', () => {
  const optRr = opt(0x8000);
  const srvAnswers = srvPacket.answers!;
  const glue = srvPacket.additionals!.filter((r) => r.type !== 'OPT');
  const counts = (b: Buffer): number[] => [4, 6, 8, 10].map((o) => b.readUInt16BE(o));
  const tc = (b: Buffer): boolean => (b[2]! & 0x02) !== 0;

  it('leaves a message that fits unchanged: every record, no TC', () => {
    const p = resp(srvAnswers, { additionals: glue });
    const full = encodePacket({ ...p, additionals: [...glue, optRr] });
    const fitted = encodePacket(p, { limit: full.length, opt: optRr });
    expect(fitted.equals(full)).toBe(true);
    expect(tc(fitted)).toBe(false);
  });

  it('drops additional records first and keeps the whole answer, the OPT record last, TC set', () => {
    const p = resp(srvAnswers, { additionals: glue });
    const full = encodePacket({ ...p, additionals: [...glue, optRr] });
    const fitted = encodePacket(p, { limit: full.length - 1, opt: optRr });
    expect(tc(fitted)).toBe(true);
    expect(fitted.length).toBeLessThanOrEqual(full.length - 1);
    // One glue A record (16 octets: pointer, fixed fields, address) goes.
    expect(counts(fitted)).toEqual([1, 3, 0, 3]);
    const d = dnsPacket.decode(fitted);
    expect(d.answers!.map((a) => a.type)).toEqual(['SRV', 'SRV', 'SRV']);
    expect(d.additionals!.map((a) => a.type)).toEqual(['A', 'A', 'OPT']);
    expect((d.additionals![2] as unknown as { flags: number }).flags & 0x8000).toBe(0x8000);
  });

  it('keeps as many answer records as fit, in order, and nothing after them', () => {
    const p = resp(hundredA, { authorities: [soa], additionals: glue });
    for (const limit of [512, 1232]) {
      const fitted = encodePacket(p, { limit, opt: optRr });
      expect(tc(fitted)).toBe(true);
      expect(fitted.length).toBeLessThanOrEqual(limit);
      // 16 octets per A record; OPT is 11: no room for one more.
      expect(limit - fitted.length).toBeLessThan(16);
      const [qd, an, ns, ar] = counts(fitted);
      expect([qd, ns, ar]).toEqual([1, 0, 1]);
      const d = dnsPacket.decode(fitted);
      expect(d.answers!.map((a) => (a as { data?: unknown }).data)).toEqual(hundredA.slice(0, an).map((a) => (a as { data?: unknown }).data));
      expect(d.additionals!.map((a) => a.type)).toEqual(['OPT']);
    }
  });

  it('without an OPT record uses the whole limit', () => {
    const fitted = encodePacket(resp(hundredA), { limit: 512 });
    expect(tc(fitted)).toBe(true);
    expect(512 - fitted.length).toBeLessThan(16);
    expect(counts(fitted)[3]).toBe(0);
  });

  it('cuts an answer over 65,535 octets (one TCP frame) to the records that fit', () => {
    const many: Answer[] = Array.from({ length: 5000 }, (_, i) => ({ name: headless, type: 'A', class: 'IN', ttl: 5, data: `10.1.${i >> 8}.${i & 255}` }));
    const fitted = encodePacket(resp(many), { limit: 65535 });
    expect(tc(fitted)).toBe(true);
    expect(fitted.length).toBeLessThanOrEqual(65535);
    expect(65535 - fitted.length).toBeLessThan(16);
    expect(dnsPacket.decode(fitted).answers!.length).toBe(counts(fitted)[1]);
  });
});

describe('the fast path of common replies (encodeSimple) writes what the general writer writes', () => {
  it('5000 random address, NODATA and NXDOMAIN replies: same bytes or the same error, and most go fast', () => {
    const rnd = prng(20251203);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const int = (n: number): number => Math.floor(rnd() * n);
    // Labels that collide with the SOA's names above the zone (ns, dns, hostmaster) in any case.
    const labels = ['web', 'ns', 'dns', 'hostmaster', 'Dns', 'NS', 'svc', 'default', 'a', 'x'.repeat(63), 'cluster', 'local', 'ns1'];
    const zones = ['cluster.local.', 'Cluster.Local.', 'local.', 'dns.cluster.local.', 'example.com.'];
    const escaped = ['a\\.b', 'sp\\032ace', 'caf\\195\\169'];
    const qname = (zone: string): string => {
      if (rnd() < 0.02) return '.';
      const parts: string[] = [];
      for (let i = int(5); i > 0; i--) parts.push(rnd() < 0.03 ? pick(escaped) : pick(labels));
      if (rnd() < 0.03) parts.push('y'.repeat(64));
      return parts.join('.') + (parts.length > 0 ? '.' : '') + (rnd() < 0.9 ? zone : pick(zones));
    };
    const ttl = (): number | undefined => pick([30, 5, 0, 2 ** 32 - 1, undefined, ...(rnd() < 0.02 ? [-1, 2 ** 32, 1.5] : [])]);
    const soa = (zone: string): Answer => {
      const above = (): string => pick(['ns.dns.', 'hostmaster.', 'dns.', 'ns.', 'a.b.', '']);
      const under = rnd() < 0.9 ? zone : pick(zones);
      return {
        name: rnd() < 0.95 ? zone : pick(zones),
        type: 'SOA',
        class: rnd() < 0.95 ? 'IN' : 'CH',
        ttl: ttl(),
        data: {
          mname: rnd() < 0.9 ? `ns.dns.${under}` : above() + under,
          rname: rnd() < 0.9 ? `hostmaster.${under}` : above() + under,
          serial: pick([int(2 ** 31), 0, undefined]),
          refresh: 7200,
          retry: 1800,
          expire: 86400,
          minimum: ttl(),
        },
      } as Answer;
    };
    const address = (owner: string): Answer => {
      const v6 = rnd() < 0.3;
      const data =
        rnd() < 0.03
          ? pick(['10.0.0', '1::2::3', 'x'])
          : v6
            ? pick(['fd00::1', '2001:db8:0:0:1::ff', '::ffff:10.0.0.1'])
            : `10.${int(256)}.${int(256)}.${int(256)}`;
      return { name: rnd() < 0.95 ? owner : owner.toUpperCase(), type: v6 ? 'AAAA' : 'A', ttl: ttl(), data } as Answer;
    };
    let fast = 0;
    for (let i = 0; i < 5000; i++) {
      const zone = pick(zones);
      const name = qname(zone);
      const edns = rnd() < 0.5 ? { udpSize: pick([512, 1232, 4096]), version: 0, do: rnd() < 0.5 } : undefined;
      const q: ParsedQuery = {
        id: int(65536),
        flags: 0x0100 * int(2),
        opcode: 0,
        rd: false,
        name,
        qtype: pick([1, 28, 16, 33, 255, 65280, 64]),
        qclass: rnd() < 0.97 ? 1 : 3,
        questionEnd: 0,
        edns,
        signed: false,
      };
      const kind = int(3);
      const res: DnsResponse = {
        rcode: kind === 0 ? 0 : pick([0, 3, 16]),
        aa: rnd() < 0.9,
        answer: kind === 0 ? Array.from({ length: 1 + int(rnd() < 0.1 ? 60 : 4) }, () => address(name)) : [],
        authority: kind === 0 && rnd() < 0.8 ? [] : [soa(zone)],
        additional: rnd() < 0.05 ? [address(name)] : [],
      };
      const limit = pick([512, 1232, 65535]);
      let general: Buffer | Error;
      try {
        general = encodeGeneral(q, res, limit);
      } catch (err) {
        general = err as Error;
      }
      let ours: Buffer | Error;
      try {
        ours = encodeResponse(q, res, limit);
      } catch (err) {
        ours = err as Error;
      }
      if (general instanceof Error) expect(ours).toEqual(general);
      else expect((ours as Buffer).toString('hex'), `${name} ${JSON.stringify(res)}`).toBe(general.toString('hex'));
      const optTtl = (((res.rcode >> 4) & 0xff) << 24) | (edns?.do ? 0x8000 : 0);
      const flags = (0x0400 * Number(res.aa)) | (q.flags & 0x0100) | (res.rcode & 0xf);
      if (encodeSimple(q.id, flags, q.name, q.qtype, q.qclass, res.answer, res.authority, res.additional, edns ? 1232 : 0, optTtl, limit)) fast++;
    }
    // The fast path must actually run for the plain cases, not only fall back.
    expect(fast).toBeGreaterThan(1500);
  });

  it('points the SOA names at the question, and writes them out where the question ends in their label', () => {
    const q = (name: string): ParsedQuery => ({ id: 7, flags: 0x0100, opcode: 0, rd: true, name, qtype: 1, qclass: 1, questionEnd: 0, signed: false });
    const soa = {
      name: 'cluster.local.',
      type: 'SOA',
      class: 'IN',
      ttl: 5,
      data: { mname: 'ns.dns.cluster.local.', rname: 'hostmaster.cluster.local.', serial: 1, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 },
    } as Answer;
    const nx: DnsResponse = { rcode: 3, aa: true, answer: [], authority: [soa], additional: [] };
    for (const name of [
      'web.default.svc.cluster.local.',
      'cluster.local.',
      'x.dns.cluster.local.',
      'ns.dns.cluster.local.',
      'hostmaster.cluster.local.',
      'a.DNS.cluster.local.',
    ]) {
      const out = encodeResponse(q(name), nx, 512);
      expect(out.toString('hex'), name).toBe(encodeGeneral(q(name), nx, 512).toString('hex'));
      expect(dnsPacket.decode(out).authorities).toMatchObject([
        { name: 'cluster.local', data: { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local' } },
      ]);
    }
    // The ordinary case: owner, mname's and rname's zone are one pointer each to the question's zone.
    const out = encodeResponse(q('web.default.svc.cluster.local.'), nx, 512);
    const zoneAt = 12 + 'web.default.svc.'.length;
    const ptr = Buffer.from([0xc0 | (zoneAt >> 8), zoneAt & 0xff]);
    expect(out.indexOf(Buffer.concat([ptr, Buffer.from([0, 6, 0, 1])]))).toBeGreaterThan(0);
    expect(out.indexOf(Buffer.concat([Buffer.from('\x02ns\x03dns', 'latin1'), ptr, Buffer.from('\x0ahostmaster', 'latin1'), ptr]))).toBeGreaterThan(0);
  });
});
