// Cache-Control max-age of DoH answers, as CoreDNS's response.Typify and
// dnsutil.MinimalTTLWithMaximum compute it, on encoded replies of each kind.
import { expect, it } from 'vitest';
import { dohMaxAge } from '../../src/server/doh-ttl.js';
import { encodeHeader, encodeOpt, encodeQuestion, encodeRr, Opcode, Rcode, T, type EdnsOpts } from './raw.js';

const IN = 1;
const a = (ttl: number): Buffer => encodeRr('x.test', T.A, IN, ttl, Buffer.from([10, 0, 0, 1]));
const soa = (ttl: number): Buffer => encodeRr('test', T.SOA, IN, ttl, Buffer.concat([Buffer.from([2, 110, 115, 0, 1, 104, 0]), Buffer.alloc(20, 0)]));
const ns = (ttl: number): Buffer => encodeRr('sub.test', T.NS, IN, ttl, Buffer.from([2, 110, 115, 0]));
const cname = (ttl: number): Buffer => encodeRr('x.test', T.CNAME, IN, ttl, Buffer.from([1, 121, 0]));
/** An RRSIG valid from `inception` to `expiration` (seconds since the epoch). */
const rrsig = (ttl: number, inception: number, expiration: number): Buffer => {
  const rdata = Buffer.alloc(18 + 1 + 2);
  rdata.writeUInt16BE(T.A, 0);
  rdata.writeUInt32BE(expiration >>> 0, 8);
  rdata.writeUInt32BE(inception >>> 0, 12);
  return encodeRr('x.test', 46, IN, ttl, rdata);
};

interface Shape {
  rcode?: number;
  opcode?: number;
  qtype?: number;
  answer?: Buffer[];
  authority?: Buffer[];
  additional?: Buffer[];
  edns?: EdnsOpts;
}

function reply(s: Shape): Buffer {
  const additional = [...(s.additional ?? []), ...(s.edns ? [encodeOpt(s.edns)] : [])];
  return Buffer.concat([
    encodeHeader({
      id: 1,
      qr: true,
      opcode: s.opcode ?? Opcode.QUERY,
      rcode: s.rcode ?? Rcode.NOERROR,
      qdcount: 1,
      ancount: s.answer?.length ?? 0,
      nscount: s.authority?.length ?? 0,
      arcount: additional.length,
    }),
    encodeQuestion('x.test', s.qtype ?? T.A),
    ...(s.answer ?? []),
    ...(s.authority ?? []),
    ...additional,
  ]);
}

const now = Date.UTC(2026, 0, 1) / 1000;

it.each<[string, Shape, number]>([
  ['an answer: its TTL', { answer: [a(30)], edns: {} }, 30],
  ['the smallest TTL over answer, authority and additional', { answer: [a(300)], authority: [ns(200)], additional: [a(10)], edns: {} }, 10],
  ['no more than an hour', { answer: [a(86_400)] }, 3600],
  ['NXDOMAIN: the SOA TTL', { rcode: Rcode.NXDOMAIN, authority: [soa(60)] }, 60],
  ['NODATA: the SOA TTL', { authority: [soa(45)] }, 45],
  ['SERVFAIL: 5 s', { rcode: Rcode.SERVFAIL }, 5],
  ['REFUSED: 5 s', { rcode: Rcode.REFUSED, edns: {} }, 5],
  ['NOERROR with nothing but OPT: 5 s', { edns: {} }, 5],
  ['a TTL of 0 stays 0', { answer: [a(0)] }, 0],
  ['a delegation: 5 s', { authority: [ns(600)] }, 5],
  ['a zone transfer: 5 s', { qtype: T.AXFR, answer: [soa(600)] }, 5],
  ['NOTIFY: 5 s', { opcode: Opcode.NOTIFY, answer: [soa(600)] }, 5],
  ['NXDOMAIN with an answer (a dangling CNAME): 5 s', { rcode: Rcode.NXDOMAIN, answer: [cname(600)] }, 5],
  ['BADVERS (extended RCODE in OPT) with records: 5 s', { answer: [a(600)], edns: { extRcode: 1 } }, 5],
  ['DO with a current signature: its TTL', { answer: [a(600), rrsig(400, now - 3600, now + 3600)], edns: { do: true } }, 400],
  ['DO with an expired signature: 5 s', { answer: [a(600), rrsig(400, now - 7200, now - 3600)], edns: { do: true } }, 5],
  ['an expired signature without DO: its TTL', { answer: [a(600), rrsig(400, now - 7200, now - 3600)] }, 400],
])('%s', (_what, shape, maxAge) => {
  expect(dohMaxAge(reply(shape), now * 1000)).toBe(maxAge);
});

it('a truncated reply gets the floor rather than an exception', () => {
  expect(dohMaxAge(reply({ answer: [a(600)] }).subarray(0, 40))).toBe(5);
});
