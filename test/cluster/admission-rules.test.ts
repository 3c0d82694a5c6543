// Every row of the admission table: its file alone loads with exactly one error, at the marked
// line, with the rule's code and message; valid.yaml loads without an error.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMISSION_DIR, errorsOf, rejectCases, validNames } from './admission-table.js';

describe('admission table', () => {
  it('holds one file per rule, at least 30, each marking its line', () => {
    expect(rejectCases.length).toBeGreaterThanOrEqual(30);
    expect(new Set(rejectCases.map((c) => c.file)).size).toBe(rejectCases.length);
    for (const c of rejectCases) {
      const lines = readFileSync(c.file, 'utf8').split('\n');
      expect(lines[c.line - 1], c.file).toContain('# <- rejected');
      expect(
        lines.filter((l) => l.includes('# <- rejected')),
        c.file,
      ).toHaveLength(1);
      expect(c.cites, c.file).not.toBe('');
    }
  });

  it.each(rejectCases.map((c) => [c.file.slice(ADMISSION_DIR.length + 1), c] as const))('%s is rejected by its rule alone', (_name, c) => {
    const errors = errorsOf([c.file]);
    expect(errors.map((f) => `${f.file}:${f.line} [${f.code ?? ''}] ${f.message}`)).toEqual([expect.stringContaining(`${c.file}:${c.line} [${c.rule}] `)]);
    expect(errors[0]!.message).toMatch(c.message);
  });

  it('valid.yaml loads without an error', () => {
    expect(errorsOf([join(ADMISSION_DIR, 'valid.yaml')])).toEqual([]);
  });

  it('the valid names and the absent ones are fully qualified cluster names', () => {
    for (const n of [...validNames, ...rejectCases.flatMap((c) => c.absent)]) expect(n).toMatch(/\.cluster\.local\.$/);
  });
});
