// rr(): the one record builder of the plugins. Each row is built, put on the wire by encodePacket
// and read back by dns-packet, so a builder whose output the encoder reads differently fails here.
import { describe, expect, it } from 'vitest';
import dnsPacket from 'dns-packet';
import { encodePacket } from '../../src/dns/encode.js';
import { optRr, rr, ttlOf, type RecordData, type RecordType, type Rr } from '../../src/dns/records.js';

interface Row<T extends RecordType> {
  type: T;
  name: string;
  ttl: number;
  data: RecordData<T>;
  /** The data as dns-packet decodes it, when it differs from what was given. */
  decoded?: unknown;
}

const row = <T extends RecordType>(r: Row<T>): Row<RecordType> => r as unknown as Row<RecordType>;

const ROWS: Row<RecordType>[] = [
  row({ type: 'A', name: 'web.default.svc.cluster.local.', ttl: 5, data: '10.96.0.10' }),
  row({ type: 'AAAA', name: 'web.example.', ttl: 30, data: 'fd00::a' }),
  row({ type: 'CNAME', name: 'www.example.', ttl: 0, data: 'web.example.', decoded: 'web.example' }),
  row({ type: 'PTR', name: '10.0.96.10.in-addr.arpa.', ttl: 5, data: 'web.default.svc.cluster.local.', decoded: 'web.default.svc.cluster.local' }),
  row({ type: 'NS', name: 'example.', ttl: 60, data: 'ns1.example.', decoded: 'ns1.example' }),
  row({
    type: 'SRV',
    name: '_http._tcp.web.example.',
    ttl: 5,
    data: { priority: 0, weight: 100, port: 80, target: 'web.example.' },
    decoded: { priority: 0, weight: 100, port: 80, target: 'web.example' },
  }),
  row({ type: 'MX', name: 'example.', ttl: 300, data: { preference: 10, exchange: 'mail.example.' }, decoded: { preference: 10, exchange: 'mail.example' } }),
  row({ type: 'TXT', name: 'txt.example.', ttl: 5, data: ['one', 'two'], decoded: [Buffer.from('one'), Buffer.from('two')] }),
  row({ type: 'TXT', name: 'txt.example.', ttl: 5, data: [Buffer.from([0, 0xff])], decoded: [Buffer.from([0, 0xff])] }),
  row({
    type: 'SOA',
    name: 'example.',
    ttl: 30,
    data: { mname: 'ns.dns.example.', rname: 'hostmaster.example.', serial: 12345, refresh: 7200, retry: 1800, expire: 86400, minimum: 30 },
    decoded: { mname: 'ns.dns.example', rname: 'hostmaster.example', serial: 12345, refresh: 7200, retry: 1800, expire: 86400, minimum: 30 },
  }),
];

describe('rr', () => {
  it.each(ROWS.map((r) => [`${r.type} ${JSON.stringify(r.data)}`, r] as const))('%s', (_label, r) => {
    const built = rr(r.name, r.type, r.ttl, r.data);
    expect(built).toEqual({ name: r.name, type: r.type, ttl: r.ttl, class: 'IN', data: r.data });
    const wire = encodePacket({ id: 1, type: 'response', flags: 0, questions: [], answers: [built] });
    const [back] = dnsPacket.decode(wire).answers ?? [];
    expect(back).toMatchObject({ name: r.name.replace(/\.$/, ''), type: r.type, ttl: r.ttl, class: 'IN', data: r.decoded ?? r.data });
  });

  it('ties the data to the type at compile time', () => {
    const ok: Rr[] = [rr('a.example.', 'A', 5, '192.0.2.1'), rr('a.example.', Math.random() < 2 ? 'A' : 'AAAA', 5, '192.0.2.1')];
    // @ts-expect-error an SRV record takes SrvData, not a string
    ok.push(rr('a.example.', 'SRV', 5, 'a.example.'));
    // @ts-expect-error an A record takes a string, never undefined
    ok.push(rr('a.example.', 'A', 5, undefined));
    // @ts-expect-error OPT is no record a zone holds
    ok.push(rr('.', 'OPT', 0, {}));
    expect(ok.map((r) => r.type)).toEqual(['A', 'A', 'SRV', 'A', 'OPT']);
  });
});

describe('optRr', () => {
  // [udp size, DO, extended rcode] -> the OPT record dns-packet reads back from both encoders.
  const rows: [number, boolean, number][] = [
    [1232, false, 0],
    [512, true, 0],
    [4096, true, 1],
    [65535, false, 0xff],
  ];
  it.each(rows)('size %i, DO %s, extended rcode %i', (size, dnssecOk, ext) => {
    const opt = optRr(size, dnssecOk, ext);
    for (const wire of [
      encodePacket({ id: 1, type: 'query', flags: 0, questions: [], additionals: [opt] }),
      dnsPacket.encode({ id: 1, type: 'query', flags: 0, questions: [], additionals: [opt] }),
    ]) {
      const [back] = dnsPacket.decode(wire).additionals ?? [];
      expect(back).toMatchObject({
        type: 'OPT',
        name: '.',
        udpPayloadSize: size,
        extendedRcode: ext,
        ednsVersion: 0,
        flags: dnssecOk ? 0x8000 : 0,
        flag_do: dnssecOk,
        options: [],
      });
    }
  });
});

describe('ttlOf', () => {
  const rows: [string, Rr, number][] = [
    ['a record with a TTL', rr('a.example.', 'A', 300, '192.0.2.1'), 300],
    ['a TTL of 0', rr('a.example.', 'A', 0, '192.0.2.1'), 0],
    ['a record built without one', { name: 'a.example.', type: 'A', data: '192.0.2.1' }, 0],
    ['an OPT record', optRr(1232, true), 0],
  ];
  it.each(rows)('%s', (_label, r, ttl) => {
    expect(ttlOf(r)).toBe(ttl);
  });
});
