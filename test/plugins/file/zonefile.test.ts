// The master-file parser (src/dns/zonefile.ts) and zone checks (src/plugins/file/zone.ts):
// syntax rows, error rows (file:line: reason), and every example zone in zones/ compared with
// what BIND's own parser loads (`named-checkzone -D`, Debian package bind9-utils).
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Rr } from '../../../src/dns/records.js';
import { parseZoneFile, ZoneFileError } from '../../../src/dns/zonefile.js';
import { rdataText } from '../../../src/dns/present.js';
import { Zone } from '../../../src/plugins/file/zone.js';
import { loadZones } from '../../../src/plugins/file/plugin.js';
import { repoRoot, which } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const zonesDir = path.join(repoRoot, 'zones');
const fixtures = path.join(repoRoot, 'test/fixtures/file');

/** `owner TTL IN TYPE RDATA`, single spaces, RDATA as BIND prints it. */
function line(rr: Rr): string {
  const ttl = (rr as { ttl?: number }).ttl ?? 0;
  let rdata: string;
  if (rr.type === 'CAA') {
    const d = (rr as { data: { flags: number; tag: string; value: string } }).data;
    rdata = `${d.flags} ${d.tag} "${d.value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  } else rdata = rdataText(rr);
  return normalise(`${rr.name} ${ttl} IN ${rr.type} ${rdata}`);
}

/** Collapses white space outside quoted strings. */
function normalise(text: string): string {
  const toks = text.trim().match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
  return toks.join(' ');
}

function parse(text: string, origin = 'example.org.'): Rr[] {
  return parseZoneFile({ origin, file: 'test.zone', text }).records.map((r) => r.rr);
}

function lines(text: string, origin = 'example.org.'): string[] {
  return parse(text, origin).map(line);
}

const HEAD = '$TTL 300\n@ SOA ns hostmaster 1 7200 1800 86400 60\n';

describe('zone file syntax', () => {
  const rows: { why: string; text: string; want: string[]; origin?: string }[] = [
    {
      why: '@, relative names and $TTL',
      text: '$TTL 60\n@ IN A 192.0.2.1\nwww IN A 192.0.2.2',
      want: ['example.org. 60 IN A 192.0.2.1', 'www.example.org. 60 IN A 192.0.2.2'],
    },
    { why: 'TTL then class', text: 'a 10 IN A 192.0.2.1', want: ['a.example.org. 10 IN A 192.0.2.1'] },
    { why: 'class then TTL', text: 'a IN 10 A 192.0.2.1', want: ['a.example.org. 10 IN A 192.0.2.1'] },
    {
      why: 'neither: the last explicit TTL (RFC 1035) without $TTL',
      text: 'a 10 A 192.0.2.1\nb A 192.0.2.2',
      want: ['a.example.org. 10 IN A 192.0.2.1', 'b.example.org. 10 IN A 192.0.2.2'],
    },
    {
      why: 'with $TTL an explicit TTL does not change the default (RFC 2308)',
      text: '$TTL 60\na 10 A 192.0.2.1\nb A 192.0.2.2',
      want: ['a.example.org. 10 IN A 192.0.2.1', 'b.example.org. 60 IN A 192.0.2.2'],
    },
    {
      why: 'BIND TTL units',
      text: '$TTL 1h30m\na A 192.0.2.1\nb 2W A 192.0.2.2\nc 1d A 192.0.2.3',
      want: ['a.example.org. 5400 IN A 192.0.2.1', 'b.example.org. 1209600 IN A 192.0.2.2', 'c.example.org. 86400 IN A 192.0.2.3'],
    },
    {
      why: 'blank owner repeats the previous one',
      text: '$TTL 5\na A 192.0.2.1\n  AAAA 2001:db8::1',
      want: ['a.example.org. 5 IN A 192.0.2.1', 'a.example.org. 5 IN AAAA 2001:db8::1'],
    },
    {
      why: '$ORIGIN, relative $ORIGIN, absolute names',
      text: '$TTL 5\n$ORIGIN sub.example.org.\na A 192.0.2.1\n$ORIGIN deeper\nb A 192.0.2.2\nc.example.org. A 192.0.2.3',
      want: ['a.sub.example.org. 5 IN A 192.0.2.1', 'b.deeper.sub.example.org. 5 IN A 192.0.2.2', 'c.example.org. 5 IN A 192.0.2.3'],
    },
    {
      why: 'parentheses across lines with comments inside',
      text: '$TTL 5\n@ SOA ns hostmaster ( 1 ; serial\n 7200 ; refresh\n 1800 86400\n 60 ) ; minimum',
      want: ['example.org. 5 IN SOA ns.example.org. hostmaster.example.org. 1 7200 1800 86400 60'],
    },
    {
      why: 'SOA without any TTL takes its minimum (BIND)',
      text: '@ SOA ns hostmaster 1 7200 1800 86400 60\na A 192.0.2.1',
      want: ['example.org. 60 IN SOA ns.example.org. hostmaster.example.org. 1 7200 1800 86400 60', 'a.example.org. 60 IN A 192.0.2.1'],
    },
    {
      why: 'TXT: several strings, escapes, unquoted word',
      text: '$TTL 5\nt TXT "a b" "c;d"\nt TXT "q\\"\\\\\\065\\066"\nt TXT word',
      want: ['t.example.org. 5 IN TXT "a b" "c;d"', 't.example.org. 5 IN TXT "q\\"\\\\AB"', 't.example.org. 5 IN TXT "word"'],
    },
    { why: 'TXT: non-printable bytes as \\DDD', text: '$TTL 5\nt TXT "\\009tab\\255"', want: ['t.example.org. 5 IN TXT "\\009tab\\255"'] },
    {
      why: 'escaped dot in an owner label',
      text: '$TTL 5\na\\.b A 192.0.2.1\n\\065bc A 192.0.2.2',
      want: ['a\\.b.example.org. 5 IN A 192.0.2.1', 'abc.example.org. 5 IN A 192.0.2.2'],
    },
    {
      why: 'names lowercased except PTR/DNAME targets (CoreDNS zone.go)',
      text: '$TTL 5\nWWW CNAME WEB\nP PTR Host.Example.Net.\nD DNAME Other.Example.',
      want: ['www.example.org. 5 IN CNAME web.example.org.', 'p.example.org. 5 IN PTR Host.Example.Net.', 'd.example.org. 5 IN DNAME Other.Example.'],
    },
    {
      why: 'MX, SRV, CAA',
      text: '$TTL 5\n@ MX 10 mail\n_s._tcp SRV 1 2 3 t.example.net.\n@ CAA 0 issue "ca.example.net; account=1"',
      want: [
        'example.org. 5 IN MX 10 mail.example.org.',
        '_s._tcp.example.org. 5 IN SRV 1 2 3 t.example.net.',
        'example.org. 5 IN CAA 0 issue "ca.example.net; account=1"',
      ],
    },
    {
      why: 'AAAA canonical (RFC 5952)',
      text: '$TTL 5\na AAAA 2001:DB8:0:0:0:0:0:1\nb AAAA ::ffff:192.0.2.1',
      want: ['a.example.org. 5 IN AAAA 2001:db8::1', 'b.example.org. 5 IN AAAA ::ffff:192.0.2.1'],
    },
    { why: 'root origin', origin: '.', text: '$TTL 5\nexample A 192.0.2.1', want: ['example. 5 IN A 192.0.2.1'] },
  ];
  for (const r of rows) {
    it(r.why, () => {
      expect(lines(r.text, r.origin)).toEqual(r.want.map(normalise));
    });
  }

  it('$INCLUDE with an origin: relative to the including file; origin restored after it', () => {
    const files: Record<string, string> = {
      '/z/main.zone': '$TTL 5\n@ SOA ns hostmaster 1 2 3 4 5\n$INCLUDE sub/inc.zone hosts\nafter A 192.0.2.9\n',
      '/z/sub/inc.zone': 'printer A 192.0.2.1\n@ TXT "here"\n',
    };
    const parsed = parseZoneFile({
      origin: 'example.org.',
      file: '/z/main.zone',
      readFile: (p) =>
        files[p] ??
        (() => {
          throw new Error('ENOENT');
        })(),
    });
    expect(parsed.records.map((r) => `${r.file}:${r.line} ${line(r.rr)}`)).toEqual([
      '/z/main.zone:2 example.org. 5 IN SOA ns.example.org. hostmaster.example.org. 1 2 3 4 5',
      '/z/sub/inc.zone:1 printer.hosts.example.org. 5 IN A 192.0.2.1',
      '/z/sub/inc.zone:2 hosts.example.org. 5 IN TXT "here"',
      '/z/main.zone:4 after.example.org. 5 IN A 192.0.2.9',
    ]);
    expect(parsed.files).toEqual(['/z/main.zone', '/z/sub/inc.zone']);
  });
});

describe('zone file errors name file, line and reason', () => {
  const rows: { why: string; text: string; line: number; reason: RegExp }[] = [
    { why: 'bad IPv4', text: HEAD + 'a A 192.0.2.300', line: 3, reason: /A: "192\.0\.2\.300" is not an IPv4 address/ },
    { why: 'bad IPv6', text: HEAD + 'a AAAA 2001:db8::g', line: 3, reason: /AAAA: "2001:db8::g" is not an IPv6 address/ },
    { why: 'unknown type', text: HEAD + 'a FOO 1', line: 3, reason: /unknown record type "FOO"/ },
    { why: 'unsupported type', text: HEAD + 'a HINFO "x" "y"', line: 3, reason: /record type HINFO is not supported/ },
    { why: 'other class', text: HEAD + 'a CH TXT "x"', line: 3, reason: /class CH is not supported/ },
    { why: 'missing rdata', text: HEAD + 'a MX 10', line: 3, reason: /MX: expected PREFERENCE EXCHANGE, got 10/ },
    { why: 'number out of range', text: HEAD + '_s._tcp SRV 1 2 70000 t', line: 3, reason: /port "70000" must be an integer from 0 to 65535/ },
    { why: 'unclosed parenthesis (line of the "(")', text: HEAD + 'a TXT ( "x"\n\nb A 192.0.2.1', line: 3, reason: /"\(" is never closed/ },
    { why: 'stray ")"', text: HEAD + 'a A 192.0.2.1 )', line: 3, reason: /unbalanced "\)"/ },
    { why: 'unterminated quote', text: HEAD + 'a TXT "abc', line: 3, reason: /unterminated quoted string/ },
    { why: 'label over 63 octets', text: HEAD + `${'x'.repeat(64)} A 192.0.2.1`, line: 3, reason: /is 64 octets; the limit is 63/ },
    { why: 'TXT string over 255 octets', text: HEAD + `a TXT "${'x'.repeat(256)}"`, line: 3, reason: /character string of 256 octets/ },
    { why: 'bad \\DDD', text: HEAD + 'a TXT "\\300"', line: 3, reason: /escape \\300 is over 255/ },
    { why: 'no TTL anywhere', text: 'a A 192.0.2.1', line: 1, reason: /no TTL on this record/ },
    { why: 'blank owner first', text: '$TTL 5\n  A 192.0.2.1', line: 2, reason: /no owner name/ },
    { why: 'unknown directive', text: HEAD + '$FOO bar', line: 3, reason: /unknown directive \$FOO/ },
    { why: '$GENERATE', text: HEAD + '$GENERATE 1-4 host$ A 192.0.2.$', line: 3, reason: /\$GENERATE is a BIND extension/ },
    { why: 'CNAME and other data', text: HEAD + 'a A 192.0.2.1\na CNAME b', line: 4, reason: /CNAME at a\.example\.org\. beside A data \(line 3\)/ },
    { why: 'data after a CNAME', text: HEAD + 'a CNAME b\na TXT "x"', line: 4, reason: /TXT at a\.example\.org\. beside its CNAME \(line 3\)/ },
    { why: 'two CNAMEs', text: HEAD + 'a CNAME b\na CNAME c', line: 4, reason: /second CNAME/ },
    { why: 'out-of-zone owner', text: HEAD + 'www.example.net. A 192.0.2.1', line: 3, reason: /www\.example\.net\. is outside the zone example\.org\./ },
    {
      why: 'SOA below the apex',
      text: HEAD + 'a SOA ns hm 1 2 3 4 5',
      line: 3,
      reason: /SOA record at a\.example\.org\., but the zone apex is example\.org\./,
    },
    { why: 'second SOA', text: HEAD + '@ SOA ns hm 2 2 3 4 5', line: 3, reason: /second SOA record/ },
    { why: 'no SOA', text: '$TTL 5\na A 192.0.2.1', line: 1, reason: /no SOA record for the zone example\.org\./ },
  ];
  for (const r of rows) {
    it(r.why, () => {
      let err: unknown;
      try {
        const parsed = parseZoneFile({ origin: 'example.org.', file: 'db.test', text: r.text });
        new Zone('example.org.', parsed.records, 'db.test');
      } catch (e) {
        err = e;
      }
      expect(err, 'expected a ZoneFileError').toBeInstanceOf(ZoneFileError);
      const e = err as ZoneFileError;
      expect(`${e.file}:${e.line}`).toBe(`db.test:${r.line}`);
      expect(e.message).toMatch(new RegExp(`^db\\.test:${r.line}: `));
      expect(e.reason).toMatch(r.reason);
    });
  }

  it('an error in an included file names that file and its line', () => {
    const file = path.join(fixtures, 'broken-include.zone');
    expect(() => loadZones({ file, zones: ['example.org.'], reloadMs: 0 })).toThrow(
      `${path.join(fixtures, 'broken.inc')}:3: A: "192.0.2.300" is not an IPv4 address`,
    );
  });

  it('an $INCLUDE cycle is reported', () => {
    const file = path.join(fixtures, 'cycle-a.zone');
    expect(() => loadZones({ file, zones: ['example.org.'], reloadMs: 0 })).toThrow(
      /cycle-b\.inc:1: \$INCLUDE cycle: .*cycle-a\.zone -> .*cycle-b\.inc -> .*cycle-a\.zone/,
    );
  });
});

// ---- the example zones against BIND's parser ---------------------------------------------------

const checkzone = which('named-checkzone');
const exampleZones = readdirSync(zonesDir).filter((f) => f.endsWith('.zone'));

describeNeeding(['named-checkzone'], 'example zones load as BIND loads them (named-checkzone -D)', () => {
  it('zones/ holds example zones', () => {
    expect(exampleZones.length).toBeGreaterThanOrEqual(2);
  });
  for (const f of exampleZones) {
    it(f, () => {
      const origin = f.replace(/\.zone$/, '.');
      // BIND resolves $INCLUDE against its working directory: run it in zones/.
      const out = execFileSync(checkzone!, ['-D', '-o', '-', origin, f], { cwd: zonesDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      const bind = out
        .split('\n')
        .filter((l) => /^\S+\s+\d+\s+IN\s+\S+/.test(l))
        .map(normalise)
        .sort();
      const { zones } = loadZones({ file: path.join(zonesDir, f), zones: [origin], reloadMs: 0 });
      const ours = zones.get(origin)!.records.map(line).sort();
      expect(bind.length).toBeGreaterThan(3);
      expect(ours).toEqual(bind);
    });
  }
});
