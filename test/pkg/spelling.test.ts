import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/pkg/spelling.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['a', '', 1],
    ['kubernets', 'kubernetes', 1],
    ['kitten', 'sitting', 3],
    ['http', 'htpt', 2],
    ['abc', 'abc', 0],
  ])('%s -> %s: %d', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it('counts a swap of neighbours as one edit when asked (optimal string alignment)', () => {
    expect(editDistance('htpt', 'http', Infinity, true)).toBe(1);
    expect(editDistance('deploymnet', 'deployment', 2, true)).toBe(1);
    expect(editDistance('kitten', 'sitting', Infinity, true)).toBe(3);
  });

  it('stops counting past max', () => {
    expect(editDistance('kitten', 'sitting', 1)).toBe(2);
    expect(editDistance('a', 'abcdef', 2)).toBe(3);
  });
});

describe('closest', () => {
  const plugins = ['cache', 'forward', 'kubernetes', 'k8s_external', 'log', 'loop'];
  it.each([
    ['kubernets', 'kubernetes'],
    ['Kubernetes', 'kubernetes'],
    ['forwrd', 'forward'],
    ['lgo', 'log'],
    ['frobnicate', undefined],
    ['log', undefined], // the name itself: nothing to suggest
    ['lop', 'log'], // a tie (log, loop) goes to the first in alphabetical order
  ])('%s -> %s', (word, want) => {
    expect(closest(word, plugins)).toBe(want);
  });

  it('suggests nothing past max edits', () => {
    expect(closest('grcp', ['http'], 2)).toBeUndefined();
    expect(closest('metric', ['metrics'], 1)).toBe('metrics');
    expect(closest('metrix', ['metrics'], 1)).toBeUndefined();
  });
});
