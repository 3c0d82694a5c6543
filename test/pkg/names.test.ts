import { describe, expect, it } from 'vitest';
import {
  escapeLabel,
  fqdn,
  isReverse,
  isSubdomain,
  labelsBelow,
  matchZone,
  NameSyntaxError,
  presentationLabels,
  type NameProblem,
} from '../../src/pkg/names.js';
import { parseName } from '../../src/dns/encode.js';
import { parseDomainName } from '../../src/dns/zonefile.js';
import { parseQuery, isProblem } from '../../src/dns/query.js';
import { parseZoneFile } from '../../src/dns/zonefile.js';

const bytes = (s: string): number[] => [...Buffer.from(s, 'latin1')];

describe('escapeLabel (miekg/dns presentation form)', () => {
  const cases: Array<[number[], string]> = [
    [bytes('www'), 'www'],
    [bytes('a.b'), 'a\\.b'],
    [bytes('a\\b'), 'a\\\\b'],
    [bytes('a b'), 'a\\032b'],
    [[0], '\\000'],
    [[0x7f, 0xff], '\\127\\255'],
    [bytes('_srv-1'), '_srv-1'],
    [bytes('*'), '*'],
  ];
  it.each(cases)('%j -> %s', (label, text) => {
    expect(escapeLabel(label)).toBe(text);
    expect(escapeLabel(Buffer.from(label))).toBe(text);
    // A slice of a larger buffer, as the question parser passes it.
    expect(escapeLabel(Buffer.from([9, ...label, 9]), 1, label.length + 1)).toBe(text);
  });
  it('the question parser and the zone file parser print the same label', () => {
    const label = [0x41, 0x2e, 0x20, 0x5c, 0xc3];
    const q = Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, label.length, ...label, 0, 0, 1, 0, 1]);
    const parsed = parseQuery(q);
    if (isProblem(parsed)) throw new Error('query did not parse');
    expect(parsed.name).toBe('A\\.\\032\\\\\\195.');
    const zone = parseZoneFile({
      origin: 'example.',
      file: 'z',
      text: '$ORIGIN example.\n@ 60 IN SOA ns. h. 1 2 3 4 5\nA\\.\\032\\\\\\195 60 IN A 10.0.0.1\n',
    });
    expect(zone.records.map((r) => r.rr.name)).toContain('a\\.\\032\\\\\\195.example.');
  });
});

describe('name helpers', () => {
  it.each([
    ['a.example.', 'example.', true],
    ['example.', 'example.', true],
    ['aexample.', 'example.', false],
    ['example.', 'a.example.', false],
    ['anything.', '.', true],
  ])('isSubdomain(%s, %s) = %s', (name, zone, inside) => {
    expect(isSubdomain(name, zone)).toBe(inside);
  });
  it('matchZone takes the longest zone', () => {
    expect(matchZone('a.b.example.', ['.', 'example.', 'b.example.'])).toBe('b.example.');
    expect(matchZone('a.test.', ['example.'])).toBeUndefined();
  });
  it('labelsBelow, fqdn, isReverse', () => {
    expect(labelsBelow('a.b.example.', 'example.')).toEqual(['a', 'b']);
    expect(labelsBelow('example.', 'example.')).toEqual([]);
    expect(labelsBelow('a.', '.')).toEqual(['a']);
    expect([fqdn(''), fqdn('a'), fqdn('a.')]).toEqual(['.', 'a.', 'a.']);
    expect([isReverse('1.0.10.in-addr.arpa.'), isReverse('ip6.arpa.'), isReverse('arpa.')]).toEqual([true, true, false]);
  });
});

describe('presentationLabels (the one presentation-name parser: zone files and the encoder)', () => {
  const x = (n: number): string => 'x'.repeat(n);
  // text, labels as byte arrays, absolute
  const good: Array<[string, number[][], boolean]> = [
    ['', [], true],
    ['.', [], true],
    ['a', [bytes('a')], false],
    ['a.B.', [bytes('a'), bytes('B')], true],
    ['a\\.b.c.', [bytes('a.b'), bytes('c')], true],
    ['a\\\\b.', [bytes('a\\b')], true],
    ['\\065bc.', [bytes('Abc')], true],
    ['\\000\\255.', [[0, 255]], true],
    ['\\ a.', [bytes(' a')], true],
    ['\\..', [bytes('.')], true],
    ['caf\u00e9.', [[0x63, 0x61, 0x66, 0xc3, 0xa9]], true],
    ['a\\\u00e9.', [[0x61, 0xc3, 0xa9]], true],
    ['\ud83d\ude00.x', [[0xf0, 0x9f, 0x98, 0x80], bytes('x')], false],
    ['*.svc.', [bytes('*'), bytes('svc')], true],
  ];
  it.each(good)('%j', (text, labels, absolute) => {
    const r = presentationLabels(text, true);
    expect(r.labels.map((l) => [...l])).toEqual(labels);
    expect(r.absolute).toBe(absolute);
    expect(presentationLabels(text, false).labels.map((l) => [...l])).toEqual(labels);
  });

  // text, problem with limits, problem without (undefined: parses), digits
  const bad: Array<[string, NameProblem, NameProblem | undefined, string]> = [
    ['a..b.', 'empty label', 'empty label', ''],
    ['.a.', 'empty label', 'empty label', ''],
    ['..', 'empty label', 'empty label', ''],
    ['a\\', 'lone backslash', 'lone backslash', ''],
    ['\\1.', 'short escape', 'short escape', '1'],
    ['\\12', 'short escape', 'short escape', '12'],
    ['\\256.', 'escape over 255', 'escape over 255', '256'],
    [`${x(64)}.`, 'label too long', undefined, ''],
    [`${x(63)}.`.repeat(4), 'name too long', undefined, ''],
    // The first problem from the left wins.
    [`${x(64)}.\\300.`, 'label too long', 'escape over 255', '300'],
    [`\\300.${x(64)}.`, 'escape over 255', 'escape over 255', '300'],
  ];
  it.each(bad)('%j', (text, limited, unlimited, digits) => {
    const problem = (limits: boolean): NameSyntaxError | undefined => {
      try {
        presentationLabels(text, limits);
        return undefined;
      } catch (err) {
        if (err instanceof NameSyntaxError) return err;
        throw err;
      }
    };
    expect(problem(true)?.problem).toBe(limited);
    expect(problem(false)?.problem).toBe(unlimited);
    if (unlimited !== undefined) expect(problem(false)?.digits).toBe(digits);
  });

  it('limits are the wire limits: 63-octet labels and 255-octet names pass', () => {
    expect(presentationLabels(`${x(63)}.`, true).labels[0]!.length).toBe(63);
    const max = `${x(63)}.`.repeat(3) + `${x(61)}.`;
    expect(presentationLabels(max, true).labels.length).toBe(4);
    expect(presentationLabels(max.replace(/^x/, '\\120'), true).labels.length).toBe(4);
  });

  it('the encoder and the zone file parser read names through it, each with its own words', () => {
    expect(parseName('a\\.b.c.').map((l) => [...l])).toEqual([bytes('a.b'), bytes('c')]);
    expect(() => parseName('\\256.')).toThrow(/bad \\DDD escape/);
    expect(() => parseName('a\\')).toThrow(/ends in a lone backslash/);
    const fail = (reason: string): never => {
      throw new Error(reason);
    };
    expect(parseDomainName('A\\.b', 'example.com.', fail)).toBe('a\\.b.example.com.');
    expect(parseDomainName('a\\\u00e9.', '.', fail, true)).toBe('a\\195\\169.');
    expect(() => parseDomainName('\\256.', '.', fail)).toThrow('escape \\256 is over 255');
    expect(() => parseDomainName('\\12.', '.', fail)).toThrow('escape \\12 must have three decimal digits (\\DDD)');
    expect(() => parseDomainName('a..b', '.', fail)).toThrow('empty label in name "a..b"');
  });
});
