// `clusterdns --version` prints the version of package.json.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launcher, repoRoot } from '../helpers/server.js';

describe('clusterdns --version', () => {
  it("prints package.json's version and exits 0", () => {
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = spawnSync(process.execPath, [launcher, flag], { encoding: 'utf8', timeout: 30000 });
      expect(r.status, flag).toBe(0);
      expect(r.stdout, flag).toBe(`${version}\n`);
    }
  });
});
