// `clusterdns check` as CI pipelines use it: findings with file and line, exit codes.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { launcher, repoRoot } from '../helpers/server.js';

const check = (...args: string[]): { code: number | null; out: string } => {
  const r = spawnSync(process.execPath, [launcher, 'check', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 30000 });
  return { code: r.status, out: r.stdout + r.stderr };
};

describe('clusterdns check', () => {
  it('passes the example cluster and its Corefile', () => {
    const r = check('--conf', 'examples/Corefile', '--manifests', 'examples/manifests');
    expect(r.out).toContain('0 error(s), 0 warning(s)');
    expect(r.code).toBe(0);
  });

  it('reports manifest errors with file, line and severity, and fails', () => {
    const r = check('--manifests', 'test/fixtures/cli/broken.yaml');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/test\/fixtures\/cli\/broken\.yaml:12: error: .*Bad_Name/); // the metadata.name line
    expect(r.out).toMatch(/test\/fixtures\/cli\/broken\.yaml:14: error: .*spec\.clusterIP "10\.96\.5\.300"/);
    expect(r.out).toContain('2 error(s), 0 warning(s)');
  });

  it('fails on warnings unless --warn-only', () => {
    const strict = check('--manifests', 'test/fixtures/manifests/check');
    expect(strict.code).toBe(1);
    expect(strict.out).toMatch(/: warning: .*\[selector-no-pods\]/);
    expect(strict.out).toMatch(/0 error\(s\), [1-9]\d* warning\(s\)/);
    const lenient = check('--manifests', 'test/fixtures/manifests/check', '--warn-only');
    expect(lenient.code).toBe(0);
    expect(lenient.out).toMatch(/: warning: /);
  });

  it('reports Corefile errors with their line', () => {
    const r = check('--conf', 'test/fixtures/cli/unknown-plugin.Corefile', '--manifests', 'examples/manifests');
    expect(r.code).toBe(1);
    expect(r.out).toContain('test/fixtures/cli/unknown-plugin.Corefile:4: error: unknown plugin "frobnicate"');
  });
});
