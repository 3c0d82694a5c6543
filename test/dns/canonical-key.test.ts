// canonicalKey must sort exactly as canonicalCompare (RFC 4034 6.1) does: records sorts hundreds
// of thousands of names by it.
import { describe, expect, it } from 'vitest';
import { canonicalCompare, canonicalKey } from '../../src/dns/canonical.js';
import { prng } from '../server/raw.js';

describe('canonicalKey', () => {
  it('orders names as canonicalCompare does (RFC 4034 6.1 example and random names)', () => {
    const rfc = [
      'example.',
      'a.example.',
      'yljkjljk.a.example.',
      'Z.a.example.',
      'zABC.a.EXAMPLE.',
      'z.example.',
      '\\001.z.example.',
      '*.z.example.',
      '\\200.z.example.',
    ];
    const rand = prng(7);
    const alphabet = ['a', 'b', 'A', '-', '0', '\\.', '\\000', '\\255', 'z'];
    const random = Array.from({ length: 400 }, () => {
      const n = 1 + Math.floor(rand() * 4);
      return (
        Array.from(
          { length: n },
          () => Array.from({ length: Math.floor(rand() * 3) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('') || 'a',
        ).join('.') + '.'
      );
    });
    for (const names of [rfc, random]) {
      const byCompare = [...names].sort(canonicalCompare);
      const byKey = [...names].sort((a, b) => {
        const x = canonicalKey(a);
        const y = canonicalKey(b);
        return x < y ? -1 : x > y ? 1 : 0;
      });
      // Names equal under canonical order (case) may sit in either order: compare keys.
      expect(byKey.map(canonicalKey)).toEqual(byCompare.map(canonicalKey));
    }
    expect([...rfc].sort(canonicalCompare)).toEqual(rfc);
  });
});
