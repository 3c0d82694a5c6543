// `clusterdns check` as CI pipelines use it: findings with file and line, exit codes.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

  it("reads a Corefile's relative `manifests` paths from the Corefile's directory, as serve does", () => {
    // Run from the repository root; the Corefile and its manifests live elsewhere.
    const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-check-'));
    try {
      mkdirSync(path.join(dir, 'manifests'));
      writeFileSync(path.join(dir, 'manifests', 'svc.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: default }\nspec: { clusterIP: 10.96.0.50, ports: [{ name: http, port: 80 }] }\n');
      writeFileSync(path.join(dir, 'Corefile'), 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests manifests\n    }\n}\n');
      const r = check('--conf', path.join(dir, 'Corefile'));
      expect(r.out).toContain('0 error(s), 0 warning(s)');
      expect(r.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
