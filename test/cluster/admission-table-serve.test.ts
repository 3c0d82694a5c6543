// The whole admission table served from one directory by the real server: every object a rule
// rejects is left out, so its names do not answer, while every valid object beside them answers;
// and `clusterdns check` names each rejected object at its file and line.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../helpers/clients.js';
import { launcher, repoRoot, startServer, which, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { ADMISSION_DIR, rejectCases, validNames } from './admission-table.js';

describeNeeding(['dig'], 'the admission table served from one directory (dig)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(repoRoot, 'examples/Corefile'), '--manifests', path.join(repoRoot, ADMISSION_DIR)]);
  }, 30000);
  afterAll(async () => {
    await server?.stop();
  });

  const answers = async (name: string): Promise<string[]> => {
    const obs = await digQuery(which('dig')!, server.port, name, 'A', false);
    return obs.rcode === 'NOERROR' ? obs.answer : [];
  };

  it('answers every name of the valid objects', async () => {
    for (const name of validNames) expect(await answers(name), name).not.toEqual([]);
  });

  it('answers no name of a rejected object', async () => {
    for (const c of rejectCases) for (const name of c.absent) expect(await answers(name), `${name} (${c.file}, ${c.rule})`).toEqual([]);
  });

  it('logs each rejected object at its file and line', () => {
    const logged = server.logs.filter((l) => l.includes('"level":50') && l.includes('not served:'));
    for (const c of rejectCases) {
      const file = path.join(repoRoot, c.file);
      expect(
        logged.some((l) => l.includes(`"file":"${file}","line":${c.line},`)),
        `${c.file}:${c.line}`,
      ).toBe(true);
    }
  });
});

it('clusterdns check names each rejected object at its file and line, and exits 1', () => {
  let out = '';
  let code = 0;
  try {
    out = execFileSync(process.execPath, [launcher, 'check', '--manifests', ADMISSION_DIR, '--output', 'json'], { cwd: repoRoot, encoding: 'utf8' });
  } catch (e) {
    out = (e as { stdout: string }).stdout;
    code = (e as { status: number }).status;
  }
  expect(code).toBe(1);
  const report = JSON.parse(out) as { findings: { file: string; line: number; severity: string; code: string }[] };
  const errors = report.findings.filter((f) => f.severity === 'error').map((f) => `${f.file}:${f.line} ${f.code}`);
  expect(errors.sort()).toEqual(rejectCases.map((c) => `${c.file}:${c.line} ${c.rule}`).sort());
});
