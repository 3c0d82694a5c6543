// The README's command-line samples are what the commands print: each `$ npx
// clusterdns ...` block is run and its output compared line for line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { launcher, repoRoot } from '../helpers/server.js';

const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

/** Every fenced block whose first line is `$ npx clusterdns ...` (after optional `$ printf` lines). */
function samples(): { setup: string[]; args: string[]; output: string }[] {
  const out: { setup: string[]; args: string[]; output: string }[] = [];
  for (const m of readme.matchAll(/```\n((?:\$ [^\n]*\n)+)([\s\S]*?)```/g)) {
    const commands = m[1]!
      .trimEnd()
      .split('\n')
      .map((l) => l.slice(2));
    const last = commands[commands.length - 1]!;
    if (!last.startsWith('npx clusterdns ')) continue;
    out.push({ setup: commands.slice(0, -1), args: last.slice('npx clusterdns '.length).split(/\s+/), output: m[2]! });
  }
  return out;
}

describe('README command samples', () => {
  const all = samples();
  it('has the resolve and audit samples', () => {
    expect(all.map((s) => s.args[0])).toEqual(expect.arrayContaining(['resolve']));
    expect(all.length).toBeGreaterThanOrEqual(2);
  });
  for (const s of all) {
    it(`clusterdns ${s.args.join(' ')} prints what the README shows`, () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-readme-'));
      try {
        // `$ printf '...' > FILE` lines: write FILE in a scratch directory, the name kept.
        const args = [...s.args];
        for (const line of s.setup) {
          const m = /^printf '([^']*)' > (\S+)$/.exec(line);
          expect(m, `unsupported setup line: ${line}`).not.toBeNull();
          const file = path.join(dir, m![2]!);
          writeFileSync(file, m![1]!.replace(/\\n/g, '\n'));
          const i = args.indexOf(m![2]!);
          if (i >= 0) args[i] = file;
        }
        const r = spawnSync(process.execPath, [launcher, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 30000 });
        expect(r.stdout.replace(new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '/', 'g'), '')).toBe(s.output);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
