// Behaviour of the file plugin serving zones/example.org.zone and zones/2.0.192.in-addr.arpa.zone,
// as CoreDNS's plugin/file answers (lookup.go; tests lookup_test.go, wildcard_test.go,
// delegation_test.go, ent_test.go, dname_test.go), RFC 1034 4.3.2, RFC 4592 and RFC 6672. The
// same table runs in process, through the real server with dig over UDP and TCP, and with
// c-ares. CoreDNS specifics the rows check:
//  - positive answers carry the apex NS RRset in the authority section (lookup.go: z.ns());
//  - NXDOMAIN/NODATA carry the SOA with TTL min(SOA TTL, MINIMUM) as RFC 2308 section 3 asks
//    (CoreDNS's z.soa() sends the record's own TTL; clusterdns follows the RFC);
//  - referrals: NS of the cut in authority, in-bailiwick glue in additional, AA clear;
//  - apex NS answers have the NS targets' addresses in additional and no authority.
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { repoRoot } from '../../helpers/server.js';
import { runTable, type Case } from '../../helpers/clients.js';
import { buildApp, type App } from '../../../src/app.js';
import { FilePlugin } from '../../../src/plugins/file/plugin.js';
import { recordText } from '../../../src/dns/present.js';

const fixtures = path.join(repoRoot, 'test/fixtures/file');

const SOA = 'example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 2024060101 7200 1800 1209600 300';
const NS = ['example.org. 3600 IN NS ns1.example.org.', 'example.org. 3600 IN NS ns2.example.org.', 'example.org. 3600 IN NS ns.partner.test.'];
const WEB = ['web.example.org. 3600 IN A 192.0.2.80', 'web.example.org. 3600 IN A 192.0.2.81'];
// The SOA of a negative answer: TTL 300, the zone's MINIMUM, not its own 3600 (RFC 2308 3).
const NEG_SOA = SOA.replace(' 3600 IN SOA ', ' 300 IN SOA ');
const NODATA = { rcode: 'NOERROR', authority: [NEG_SOA] } as const;
const NXDOMAIN = { rcode: 'NXDOMAIN', authority: [NEG_SOA] } as const;
const SUB_NS = ['sub.example.org. 3600 IN NS ns.sub.example.org.', 'sub.example.org. 3600 IN NS ns.partner.test.'];
const SUB_GLUE = ['ns.sub.example.org. 3600 IN A 192.0.2.200', 'ns.sub.example.org. 3600 IN AAAA 2001:db8::200'];
const REFERRAL = { rcode: 'NOERROR', aa: false, authority: SUB_NS, additional: SUB_GLUE } as const;
const REV_SOA = '2.0.192.in-addr.arpa. 86400 IN SOA ns1.example.org. hostmaster.example.org. 2024060101 7200 1800 1209600 600';
const REV_NEG_SOA = REV_SOA.replace(' 86400 IN SOA ', ' 600 IN SOA ');
const REV_NS = ['2.0.192.in-addr.arpa. 86400 IN NS ns1.example.org.', '2.0.192.in-addr.arpa. 86400 IN NS ns2.example.org.'];

const cases: Case[] = [
  // ---- apex: SOA, NS (glue for in-zone targets), other types
  { q: 'example.org. SOA', rcode: 'NOERROR', answer: [SOA], authority: NS, why: 'lookup.go: SOA answer, NS authority' },
  {
    q: 'example.org. NS',
    rcode: 'NOERROR',
    answer: NS,
    why: 'apex NS: addresses of in-zone targets in additional',
    additional: ['ns1.example.org. 300 IN A 192.0.2.53', 'ns1.example.org. 300 IN AAAA 2001:db8::53', 'ns2.example.org. 3600 IN A 192.0.2.54'],
  },
  { q: 'example.org. A', rcode: 'NOERROR', answer: ['example.org. 3600 IN A 192.0.2.1'], authority: NS },
  { q: 'example.org. AAAA', rcode: 'NOERROR', answer: ['example.org. 3600 IN AAAA 2001:db8::1'], authority: NS, why: 'written long, served canonical' },
  {
    q: 'example.org. MX',
    rcode: 'NOERROR',
    authority: NS,
    why: 'additional A/AAAA only for the in-zone exchange',
    answer: ['example.org. 3600 IN MX 10 mail.example.org.', 'example.org. 3600 IN MX 20 mail.partner.test.'],
    additional: ['mail.example.org. 600 IN A 192.0.2.25', 'mail.example.org. 600 IN AAAA 2001:db8::25'],
  },
  { q: 'example.org. TXT', rcode: 'NOERROR', answer: ['example.org. 3600 IN TXT "v=spf1 mx -all"'], authority: NS },
  { q: 'example.org. SRV', ...NODATA },

  // ---- exact names, NODATA, NXDOMAIN, TTL/class order
  { q: 'ns1.example.org. A', rcode: 'NOERROR', answer: ['ns1.example.org. 300 IN A 192.0.2.53'], authority: NS, why: 'TTL before class' },
  { q: 'ns1.example.org. AAAA', rcode: 'NOERROR', answer: ['ns1.example.org. 300 IN AAAA 2001:db8::53'], authority: NS, why: 'class before TTL' },
  { q: 'web.example.org. A', rcode: 'NOERROR', answer: WEB, authority: NS },
  { q: 'web.example.org. AAAA', ...NODATA, why: 'name exists, type does not' },
  { q: 'nothere.example.org. A', ...NXDOMAIN },
  { q: 'a.b.nothere.example.org. TXT', ...NXDOMAIN },
  { q: 'ent.example.org. A', ...NODATA, why: 'empty non-terminal (ent_test.go): NOERROR, not NXDOMAIN' },
  { q: 'deep.ent.example.org. A', rcode: 'NOERROR', answer: ['deep.ent.example.org. 3600 IN A 192.0.2.101'], authority: NS },
  {
    q: 'long.example.org. TXT',
    rcode: 'NOERROR',
    answer: ['long.example.org. 3600 IN TXT "first part of a record written " "across several lines"'],
    authority: NS,
    why: 'two strings, parentheses across lines',
  },
  { q: 'ptr.example.org. PTR', rcode: 'NOERROR', answer: ['ptr.example.org. 3600 IN PTR web.example.org.'], authority: NS },

  // ---- CNAME chains
  { q: 'www.example.org. A', rcode: 'NOERROR', answer: ['www.example.org. 3600 IN CNAME web.example.org.', ...WEB], authority: NS },
  {
    q: 'alias.example.org. A',
    rcode: 'NOERROR',
    authority: NS,
    why: 'two links followed inside the zone',
    answer: ['alias.example.org. 3600 IN CNAME www.example.org.', 'www.example.org. 3600 IN CNAME web.example.org.', ...WEB],
  },
  {
    q: 'alias.example.org. CNAME',
    rcode: 'NOERROR',
    answer: ['alias.example.org. 3600 IN CNAME www.example.org.'],
    authority: NS,
    why: 'qtype CNAME: no chasing',
  },
  {
    q: 'www.example.org. MX',
    rcode: 'NOERROR',
    answer: ['www.example.org. 3600 IN CNAME web.example.org.'],
    authority: NS,
    why: 'target has no MX: the CNAME alone',
  },
  {
    q: 'outside.example.org. A',
    rcode: 'NOERROR',
    answer: ['outside.example.org. 3600 IN CNAME target.partner.test.'],
    authority: NS,
    why: 'chain leaves the zone: stops there',
  },
  {
    q: 'loop1.example.org. A',
    rcode: 'NOERROR',
    authority: NS,
    why: 'a CNAME loop ends when it comes back',
    answer: ['loop1.example.org. 3600 IN CNAME loop2.example.org.', 'loop2.example.org. 3600 IN CNAME loop1.example.org.'],
  },

  // ---- SRV with additional addresses
  {
    q: '_http._tcp.example.org. SRV',
    rcode: 'NOERROR',
    answer: ['_http._tcp.example.org. 3600 IN SRV 0 5 80 web.example.org.'],
    authority: NS,
    additional: WEB,
  },
  {
    q: '_ldap._tcp.example.org. SRV',
    rcode: 'NOERROR',
    answer: ['_ldap._tcp.example.org. 3600 IN SRV 10 0 389 ldap.partner.test.'],
    authority: NS,
    why: 'target outside the zone: no additional',
  },
  { q: '_tcp.example.org. SRV', ...NODATA, why: '_tcp is an empty non-terminal' },

  // ---- wildcards (RFC 4592)
  {
    q: 'foo.wild.example.org. A',
    rcode: 'NOERROR',
    answer: ['foo.wild.example.org. 3600 IN A 192.0.2.99'],
    authority: NS,
    why: 'owner synthesised as the query name',
  },
  {
    q: 'a.b.wild.example.org. TXT',
    rcode: 'NOERROR',
    answer: ['a.b.wild.example.org. 3600 IN TXT "from the wildcard"'],
    authority: NS,
    why: 'a wildcard covers several labels',
  },
  { q: 'foo.wild.example.org. MX', ...NODATA, why: 'wildcard NODATA' },
  { q: 'wild.example.org. A', ...NODATA, why: 'the wildcard parent is an empty non-terminal, not covered by *' },
  { q: 'exists.wild.example.org. TXT', ...NODATA, why: 'the name exists: no wildcard (RFC 4592 2.2)' },
  { q: 'x.exists.wild.example.org. A', ...NXDOMAIN, why: 'closest encloser exists.wild has no * child' },
  { q: '*.wild.example.org. A', rcode: 'NOERROR', answer: ['*.wild.example.org. 3600 IN A 192.0.2.99'], authority: NS, why: 'asking for the wildcard itself' },
  {
    q: 'foo.cname-wild.example.org. A',
    rcode: 'NOERROR',
    answer: ['foo.cname-wild.example.org. 3600 IN CNAME web.example.org.', ...WEB],
    authority: NS,
    why: 'wildcard CNAME, chased',
  },

  // ---- delegation: referral with glue, AA clear
  { q: 'sub.example.org. NS', ...REFERRAL, why: 'NS at the cut is a referral too (delegation_test.go)' },
  { q: 'sub.example.org. A', ...REFERRAL },
  { q: 'hidden.sub.example.org. A', ...REFERRAL, why: 'data below the cut is occluded' },
  { q: 'x.y.sub.example.org. TXT', ...REFERRAL },
  { q: 'ns.sub.example.org. A', ...REFERRAL, why: 'glue is not authoritative data' },

  // ---- DNAME (RFC 6672)
  {
    q: 'www.dept.example.org. A',
    rcode: 'NOERROR',
    authority: NS,
    why: 'DNAME, synthesised CNAME, then the chain inside the zone',
    answer: [
      'dept.example.org. 3600 IN DNAME example.org.',
      'www.dept.example.org. 3600 IN CNAME www.example.org.',
      'www.example.org. 3600 IN CNAME web.example.org.',
      ...WEB,
    ],
  },
  { q: 'dept.example.org. DNAME', rcode: 'NOERROR', answer: ['dept.example.org. 3600 IN DNAME example.org.'], authority: NS },
  { q: 'dept.example.org. A', ...NODATA, why: 'the DNAME owner itself is not redirected' },
  {
    q: 'foo.partner.example.org. A',
    rcode: 'NOERROR',
    authority: NS,
    why: 'DNAME target outside the zone: stop after the CNAME',
    answer: ['partner.example.org. 3600 IN DNAME partner.test.', 'foo.partner.example.org. 3600 IN CNAME foo.partner.test.'],
  },

  // ---- $INCLUDE with origin; the included $TTL applies after it (as BIND loads it)
  { q: 'printer.hosts.example.org. A', rcode: 'NOERROR', answer: ['printer.hosts.example.org. 120 IN A 192.0.2.150'], authority: NS },
  { q: 'hosts.example.org. TXT', rcode: 'NOERROR', answer: ['hosts.example.org. 120 IN TXT "hosts included from example.org.hosts.inc"'], authority: NS },
  { q: 'after-include.example.org. A', rcode: 'NOERROR', answer: ['after-include.example.org. 120 IN A 192.0.2.120'], authority: NS },

  // ---- answers echo the question's spelling for the query name and its ancestors
  {
    q: 'WwW.ExAmPlE.oRg. A',
    rcode: 'NOERROR',
    why: 'owner as asked (0x20); chain targets as stored',
    answer: ['WwW.ExAmPlE.oRg. 3600 IN CNAME web.example.org.', ...WEB],
    authority: NS.map((l) => l.replace(/^example\.org\./, 'ExAmPlE.oRg.')),
  },
  { q: 'NoThere.Example.ORG. A', rcode: 'NXDOMAIN', authority: [NEG_SOA.replace(/^example\.org\./, 'Example.ORG.')] },
  { q: 'Foo.WILD.example.org. A', rcode: 'NOERROR', answer: ['Foo.WILD.example.org. 3600 IN A 192.0.2.99'], authority: NS },

  // ---- ANY (RFC 8482 4.1): one RRset of the name (CNAME, else A, else AAAA, else the first in
  // file order), never an empty answer for a name that has data
  { q: 'example.org. ANY', rcode: 'NOERROR', answer: ['example.org. 3600 IN A 192.0.2.1'], authority: NS, why: 'apex: the A RRset' },
  { q: 'www.example.org. ANY', rcode: 'NOERROR', answer: ['www.example.org. 3600 IN CNAME web.example.org.'], authority: NS, why: 'the CNAME, not chased' },
  { q: 'web.example.org. ANY', rcode: 'NOERROR', answer: WEB, authority: NS },
  { q: 'mail.example.org. ANY', rcode: 'NOERROR', answer: ['mail.example.org. 600 IN A 192.0.2.25'], authority: NS, why: 'A before AAAA' },
  {
    q: 'txt.example.org. ANY',
    rcode: 'NOERROR',
    authority: NS,
    why: 'the whole TXT RRset',
    answer: [
      'txt.example.org. 3600 IN TXT "two strings" "in one record"',
      'txt.example.org. 3600 IN TXT "quote \\" backslash \\\\ semicolon ; decimal ABC"',
      'txt.example.org. 3600 IN TXT "unquoted-word"',
    ],
  },
  {
    q: '_http._tcp.example.org. ANY',
    rcode: 'NOERROR',
    answer: ['_http._tcp.example.org. 3600 IN SRV 0 5 80 web.example.org.'],
    authority: NS,
    additional: WEB,
    why: 'SRV with its additional addresses',
  },
  { q: 'foo.wild.example.org. ANY', rcode: 'NOERROR', answer: ['foo.wild.example.org. 3600 IN A 192.0.2.99'], authority: NS, why: 'from the wildcard' },
  { q: 'ent.example.org. ANY', ...NODATA, why: 'an empty non-terminal has no RRset' },
  { q: 'nothere.example.org. ANY', ...NXDOMAIN },
  { q: 'hidden.sub.example.org. ANY', ...REFERRAL, why: 'below a cut: the referral' },

  // ---- the reverse zone
  { q: '80.2.0.192.in-addr.arpa. PTR', rcode: 'NOERROR', answer: ['80.2.0.192.in-addr.arpa. 86400 IN PTR web.example.org.'], authority: REV_NS },
  { q: '7.2.0.192.in-addr.arpa. PTR', rcode: 'NXDOMAIN', authority: [REV_NEG_SOA], why: 'SOA TTL 86400, MINIMUM 600: the denial carries 600' },
  { q: '2.0.192.in-addr.arpa. SOA', rcode: 'NOERROR', answer: [REV_SOA], authority: REV_NS },

  // ---- outside every zone: the server refuses
  { q: 'example.com. A', rcode: 'REFUSED', aa: false },
];

runTable('file plugin: zones/example.org.zone and the reverse zone', { conf: path.join(fixtures, 'Corefile.main'), manifests: [], cases });

// ---- rows the shared table cannot express ------------------------------------------------------

describe('file plugin: in process only', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ conf: path.join(fixtures, 'Corefile.main'), port: 0 });
  });
  afterAll(async () => {
    await app.close();
  });

  it('CAA records (flags, tag, value)', async () => {
    const p = await ask(app, 'example.org.', 'CAA');
    expect(p.rcode).toBe('NOERROR');
    const caa = (p.answers ?? []).map((a) => (a as { data: { flags: number; tag: string; value: string } }).data);
    expect(caa.map((d) => `${d.flags} ${d.tag} ${d.value}`).sort()).toEqual(['0 issue letsencrypt.org', '128 iodef mailto:security@example.org']);
    expect((p.flags ?? 0) & dnsPacket.AUTHORITATIVE_ANSWER).toBeTruthy();
  });

  it('TXT escapes and several strings reach the wire byte for byte', async () => {
    const p = await ask(app, 'txt.example.org.', 'TXT');
    const txt = (p.answers ?? []).map((a) => (a as { data: Buffer[] }).data.map((b) => b.toString('latin1')));
    expect(txt).toEqual(expect.arrayContaining([['two strings', 'in one record'], ['quote " backslash \\ semicolon ; decimal ABC'], ['unquoted-word']]));
    expect(txt).toHaveLength(3);
  });

  it('an owner with an escaped dot (asked of the plugin: dns-packet cannot encode \\. in a question)', async () => {
    const plugin = app.chains.flatMap((c) => c.plugins).find((p): p is FilePlugin => p instanceof FilePlugin && p.cfg.zones.includes('example.org.'))!;
    const name = 'Has\\.Dot.example.org.';
    const local = { address: '127.0.0.1', port: 53 };
    const res = await plugin.serve(
      { id: 1, name, qname: name.toLowerCase(), qtype: 'TXT', qclass: 'IN', opcode: 'QUERY', rd: false, protocol: 'udp', client: local, local },
      () => {
        throw new Error('no next');
      },
    );
    expect(res.rcode).toBe(0);
    expect(res.answer.map((a) => recordText(a))).toEqual(['Has\\.Dot.example.org.\t3600\tIN\tTXT\t"a label with a dot in it"']);
  });

  it('AXFR and IXFR are REFUSED (no transfer plugin), AA clear', async () => {
    for (const t of ['AXFR', 'IXFR']) {
      const p = await ask(app, 'example.org.', t, { protocol: 'tcp' });
      expect(p.rcode, t).toBe('REFUSED');
      expect((p.flags ?? 0) & dnsPacket.AUTHORITATIVE_ANSWER, t).toBe(0);
    }
  });

  it('records() lists every record of the zone, SOA first', () => {
    const plugin = app.chains.flatMap((c) => c.plugins).find((p): p is FilePlugin => p instanceof FilePlugin && p.cfg.zones.includes('example.org.'))!;
    const rrs = plugin.records();
    expect(rrs[0]!.type).toBe('SOA');
    expect(rrs).toHaveLength(47); // as many as named-checkzone -D prints (zonefile.test.ts)
    expect(rrs.map(recordText)).toContain('*.wild.example.org.\t3600\tIN\tA\t192.0.2.99');
  });
});

// ---- the chain: kubernetes before file, fallthrough --------------------------------------------

const chainCases: Case[] = [
  {
    q: 'svc1.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    answer: ['svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'],
    why: 'kubernetes runs first and answers',
  },
  {
    q: 'static.cluster.local. A',
    rcode: 'NOERROR',
    why: 'kubernetes NXDOMAIN falls through to file',
    answer: ['static.cluster.local. 60 IN A 192.0.2.77'],
    authority: ['cluster.local. 60 IN NS ns.file.cluster.local.'],
  },
  {
    q: 'nothing.cluster.local. A',
    rcode: 'NXDOMAIN',
    authority: ['cluster.local. 30 IN SOA ns.file.cluster.local. hostmaster.cluster.local. 7 7200 1800 86400 30'],
    why: 'both miss: file answers NXDOMAIN with its SOA',
  },
  { q: 'nothere.example.org. A', rcode: 'SERVFAIL', aa: false, why: 'file fallthrough with nothing after it: SERVFAIL (NextOrFailure)' },
  { q: 'web.example.org. AAAA', ...NODATA, why: 'NODATA does not fall through' },
  { q: 'ent.example.org. A', ...NODATA, why: 'an empty non-terminal does not fall through' },
  { q: 'x.other.example.net. A', rcode: 'SERVFAIL', aa: false, why: 'inside the fallthrough zone' },
  {
    q: 'x.example.net. A',
    rcode: 'NXDOMAIN',
    authority: ['example.net. 30 IN SOA ns.example.net. hostmaster.example.net. 1 7200 1800 86400 30'],
    why: 'outside the fallthrough zone',
  },
  { q: 'www.example.net. A', rcode: 'NOERROR', answer: ['www.example.net. 60 IN A 192.0.2.80'], authority: ['example.net. 60 IN NS ns.example.net.'] },
];

runTable('file plugin in a chain: kubernetes fallthrough, file fallthrough', { conf: path.join(fixtures, 'Corefile.chain'), manifests: [], cases: chainCases });
