import { describe, expect, it } from 'vitest';
import { globMatch } from '../../src/pkg/glob.js';

describe('globMatch', () => {
  const table: [string, string, boolean][] = [
    ['web-0', 'web-0', true],
    ['web-0', 'web-1', false],
    ['web-?', 'web-1', true],
    ['web-?', 'web-10', false],
    ['web-*', 'web-', true],
    ['web-*', 'web-abc-def', true],
    ['*', '', true],
    ['', '', true],
    ['', 'a', false],
    ['*/api-*', 'default/api-7d9f-x', true],
    ['*/api-*', 'default/web-7d9f-x', false],
    ['prod/*-?', 'prod/db-0', true],
    ['prod/*-?', 'prod/db-10', false],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'aXXbYY', false],
    ['*a', 'bbba', true],
    ['*a', 'bbbab', false],
    ['a.b', 'aXb', false],
    ['**', 'x', true],
    ['?*?', 'ab', true],
    ['?*?', 'a', false],
  ];
  it.each(table)('%s ~ %s -> %s', (pattern, text, want) => {
    expect(globMatch(pattern, text)).toBe(want);
  });

  it('a pattern of many stars against a long name that almost matches (a RegExp of .* backtracks for hours)', () => {
    const pattern = `${'*a'.repeat(20)}*b`;
    const text = 'a'.repeat(253);
    expect(globMatch(pattern, text)).toBe(false);
    expect(globMatch(pattern, text + 'b')).toBe(true);
  });
});
