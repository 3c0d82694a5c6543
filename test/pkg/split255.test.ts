import { describe, expect, it } from 'vitest';
import { split255 } from '../../src/pkg/split255.js';

const octets = (n: number, from = 0): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (from + i) % 256));

describe('split255', () => {
  // [octets in, lengths of the strings out]: CoreDNS's msg.split255 on the same lengths.
  const rows: [number, number[]][] = [
    [0, [0]],
    [1, [1]],
    [254, [254]],
    [255, [255, 0]],
    [256, [255, 1]],
    [509, [255, 254]],
    [510, [255, 255, 0]],
    [511, [255, 255, 1]],
    [1000, [255, 255, 255, 235]],
  ];
  it.each(rows)('%i octets -> strings of %j', (n, lengths) => {
    const input = octets(n);
    const out = split255(input);
    expect(out.map((s) => s.length)).toEqual(lengths);
    // Nothing lost, nothing reordered.
    expect(Buffer.concat(out)).toEqual(input);
  });

  it('counts octets, not characters: 200 two-octet characters are 400 octets', () => {
    const out = split255(Buffer.from('é'.repeat(200), 'utf8'));
    expect(out.map((s) => s.length)).toEqual([255, 145]);
  });
});
