import { describe, expect, it } from 'vitest';
import { escapeLabel, fqdn, isReverse, isSubdomain, labelsBelow, matchZone } from '../../src/pkg/names.js';
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
    const zone = parseZoneFile({ origin: 'example.', file: 'z', text: '$ORIGIN example.\n@ 60 IN SOA ns. h. 1 2 3 4 5\nA\\.\\032\\\\\\195 60 IN A 10.0.0.1\n' });
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
