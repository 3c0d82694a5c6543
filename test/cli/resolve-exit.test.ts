// `clusterdns resolve` exit status and --type checking: a failed lookup exits 2 as
// `getent hosts` does, an unknown --type is refused before any query with a clear error.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { launcher, repoRoot } from '../helpers/server.js';

const run = (...args: string[]): { code: number | null; out: string; err: string } => {
  const r = spawnSync(process.execPath, [launcher, 'resolve', ...args, '--conf', 'examples/Corefile', '--manifests', 'examples/manifests'], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 30000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('clusterdns resolve: exit status and --type', () => {
  it('exits 0 when the lookup finds the name', () => {
    const r = run('kubernetes.default');
    expect(r.out).toContain('result: ok 10.96.0.1');
    expect(r.code).toBe(0);
  });

  it('exits 2 when the name does not exist (getent hosts does the same)', () => {
    const r = run('nope.default.svc.cluster.local.');
    expect(r.out).toMatch(/result: NXDOMAIN/);
    expect(r.code).toBe(2);
  });

  it('exits 2 on NODATA too (res_search SRV of a name without SRV)', () => {
    const r = run('kubernetes.default.svc.cluster.local.', '-t', 'MX');
    expect(r.out).toMatch(/result: NODATA/);
    expect(r.code).toBe(2);
  });

  it('refuses an unknown --type with the fix, before sending anything', () => {
    const r = run('kubernetes.default', '-t', 'BOGUS');
    expect(r.code).toBe(1);
    expect(r.err).toContain('--type "BOGUS" is not a DNS query type');
    expect(r.out).toBe('');
  });

  it('accepts a type in lower case', () => {
    const r = run('kubernetes.default', '-t', 'srv');
    expect(r.out).toContain('res_search(SRV)');
    expect(r.code).toBe(0);
  });
});
