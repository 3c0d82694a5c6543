// The README's library example is this repository's test file, word for word.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../helpers/server.js';

describe('README', () => {
  it('shows test/api/readme-example.test.ts as the library example', () => {
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const example = fs.readFileSync(path.join(repoRoot, 'test/api/readme-example.test.ts'), 'utf8');
    expect(readme).toContain('```ts\n' + example + '```');
  });
});
