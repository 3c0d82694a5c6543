// `clusterdns check` as CI pipelines use it: findings with file and line, eslint's exit codes,
// and the text, JSON and SARIF outputs.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launcher, repoRoot } from '../helpers/server.js';
import { validateSarif } from './sarif-shape.js';

const run = (cwd: string, ...args: string[]): { code: number | null; out: string; stdout: string; stderr: string } => {
  const r = spawnSync(process.execPath, [launcher, 'check', ...args], { cwd, encoding: 'utf8', timeout: 30000 });
  return { code: r.status, out: r.stdout + r.stderr, stdout: r.stdout, stderr: r.stderr };
};
const check = (...args: string[]): ReturnType<typeof run> => run(repoRoot, ...args);

/** A scratch directory with `files` written in it, removed after `body`. */
function withFiles(files: Record<string, string>, body: (dir: string) => void): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-check-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface JsonReport {
  version: number;
  findings: {
    file: string;
    line: number;
    column?: number;
    severity: string;
    code: string;
    message: string;
    object?: { kind: string; namespace: string; name: string };
  }[];
  summary: { errors: number; warnings: number; infos: number };
}

describe('clusterdns check', () => {
  it('passes the example cluster and its Corefile', () => {
    const r = check('--conf', 'examples/Corefile', '--manifests', 'examples/manifests');
    expect(r.out).toContain('0 error(s), 0 warning(s)');
    expect(r.code).toBe(0);
  });

  // The README runs these: each must check clean (exit 0) so a copy of them starts clean in CI.
  it.each([
    [['--conf', 'examples/Corefile', '--manifests', 'examples/manifests']],
    [['--conf', 'examples/Corefile.loopback', '--manifests', 'examples/manifests']],
    [['--conf', 'examples/Corefile.edge']],
    [['--manifests', 'examples/manifests', '--manifests', 'examples/edge']],
  ])('passes the README example %j under --strict', (args) => {
    const r = check(...args, '--strict');
    expect(r.stdout).toMatch(/^0 error\(s\), 0 warning\(s\)/m);
    expect(r.code).toBe(0);
  });

  it('reports manifest errors with file, line and severity, and fails', () => {
    const r = check('--manifests', 'test/fixtures/cli/broken.yaml');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^test\/fixtures\/cli\/broken\.yaml:12: error: .*Bad_Name.* \[[a-z-]+\]$/m); // the metadata.name line
    expect(r.out).toMatch(/^test\/fixtures\/cli\/broken\.yaml:14: error: .*spec\.clusterIP "10\.96\.5\.300"/m);
    expect(r.out).toContain('2 error(s), 0 warning(s)');
  });

  it('exits 0 with warnings only, 1 with them under --strict or past --max-warnings', () => {
    const dflt = check('--manifests', 'test/fixtures/manifests/check');
    expect(dflt.out).toMatch(/^test\/fixtures\/manifests\/check\/app\.yaml:20: warning: .*\[selector-no-pods\]$/m); // spec.selector's line
    expect(dflt.out).toMatch(/^0 error\(s\), 2 warning\(s\)$/m);
    expect(dflt.code).toBe(0);
    expect(check('--manifests', 'test/fixtures/manifests/check', '--strict').code).toBe(1);
    expect(check('--manifests', 'test/fixtures/manifests/check', '--max-warnings', '2').code).toBe(0);
    const over = check('--manifests', 'test/fixtures/manifests/check', '--max-warnings', '1');
    expect(over.code).toBe(1);
    expect(over.stdout).toMatch(/^0 error\(s\), 2 warning\(s\); more than --max-warnings 1$/m);
    // Deprecated, and what it asked for is now the default.
    expect(check('--manifests', 'test/fixtures/manifests/check', '--warn-only').code).toBe(0);
  });

  it('exits 2 for a command line it cannot run', () => {
    for (const args of [
      ['--manifests', 'examples/manifests', '--output', 'xml'],
      ['--manifests', 'examples/manifests', '--max-warnings', 'some'],
      ['--manifests', 'examples/manifests', '--no-such-flag'],
      ['--manifests', 'test/fixtures/no-such-dir'],
      ['--conf', 'test/fixtures/no-such.Corefile', '--manifests', 'examples/manifests'],
    ]) {
      const r = check(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
    }
    const unreadable = check('--conf', 'test/fixtures/no-such.Corefile').stderr;
    expect(unreadable).toMatch(/^clusterdns check: --conf test\/fixtures\/no-such\.Corefile: cannot read Corefile: ENOENT/);
    expect(check('--help').code).toBe(0);
  });

  it('reports Corefile errors with their line, and a misspelt plugin with the one meant', () => {
    const r = check('--conf', 'test/fixtures/cli/unknown-plugin.Corefile', '--manifests', 'examples/manifests');
    expect(r.code).toBe(1);
    expect(r.out).toContain('test/fixtures/cli/unknown-plugin.Corefile:4: error: unknown plugin "frobnicate"');
    withFiles({ Corefile: 'cluster.local {\n    kubernets\n}\n' }, (dir) => {
      const t = run(dir, '--conf', 'Corefile');
      expect(t.stdout).toMatch(/^Corefile:2: error: unknown plugin "kubernets"; did you mean kubernetes\? \(supported: .*\) \[corefile-unknown-plugin\]$/m);
      expect(t.stdout).toMatch(/^1 error\(s\), 0 warning\(s\)$/m); // no "no manifests given" beside the error
    });
  });

  it("reports a missing '}' at the block it leaves open, alone", () => {
    const corefile = 'cluster.local {\n    kubernetes {\n        manifests m\n    forward . 127.0.0.1\n}\n';
    withFiles({ Corefile: corefile }, (dir) => {
      const r = run(dir, '--conf', 'Corefile');
      expect(r.stdout).toBe(
        "Corefile:2: error: unbalanced braces: the '{' on this line is never closed; add a matching '}' " +
          "(the '}' on line 5 lines up with the block of line 1: " +
          'that is the one it was written to close) [corefile-unbalanced-braces]\n1 error(s), 0 warning(s)\n',
      );
      expect(r.code).toBe(1);
    });
  });

  it('prints a YAML syntax error at file:line:column, where the quote opens', () => {
    withFiles({ 'm/svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: "web\n  namespace: x\n' }, (dir) => {
      const r = run(dir, '--manifests', 'm');
      expect(r.stdout).toMatch(/^m\/svc\.yaml:4:9: error: YAML syntax error at line 4, column 9: Missing closing "quote .*\[yaml-syntax\]$/m);
      const json = JSON.parse(run(dir, '--manifests', 'm', '--output', 'json').stdout) as JsonReport;
      expect(json.findings[0]).toMatchObject({ file: 'm/svc.yaml', line: 4, column: 9, severity: 'error', code: 'yaml-syntax' });
    });
  });

  it("reads a Corefile's relative `manifests` paths from the Corefile's directory, and prints paths relative to the current one (absolute outside it)", () => {
    const svc =
      'apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: default }\n' + 'spec: { clusterIP: 10.96.0.50, ports: [{ name: http, port: 80 }] }\n';
    const corefile = 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests manifests\n    }\n}\n';
    withFiles({ 'manifests/svc.yaml': svc, Corefile: corefile }, (dir) => {
      const r = check('--conf', path.join(dir, 'Corefile'));
      expect(r.out).toContain('0 error(s), 0 warning(s)');
      expect(r.code).toBe(0);
    });
    withFiles({ 'repo/manifests/svc.yaml': svc.replace('name: web', 'name: Web'), 'repo/sub/.keep': '' }, (dir) => {
      expect(run(path.join(dir, 'repo'), '--manifests', 'manifests').stdout).toMatch(/^manifests\/svc\.yaml:3: error: /m);
      expect(run(path.join(dir, 'repo'), '--manifests', path.join(dir, 'repo', 'manifests')).stdout).toMatch(/^manifests\/svc\.yaml:3: error: /m);
      const outside = path.join(dir, 'repo', 'manifests', 'svc.yaml');
      expect(run(path.join(dir, 'repo', 'sub'), '--manifests', '../manifests').stdout.startsWith(`${outside}:3: error: `)).toBe(true);
    });
  });

  it('--output json: every finding with its code and place, sorted, and the counts', () => {
    const r = check('--manifests', 'test/fixtures/manifests/check', '--output', 'json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as JsonReport;
    expect(Object.keys(doc)).toEqual(['version', 'findings', 'summary']);
    expect(doc.version).toBe(1);
    expect(doc.summary).toEqual({ errors: 0, warnings: 2, infos: 0 });
    expect(doc.findings).toEqual([
      {
        file: 'test/fixtures/manifests/check/app.yaml',
        line: 20,
        severity: 'warning',
        code: 'selector-no-pods',
        message: expect.stringMatching(/^Service "default\/app": selector app=ap matches no pods/),
        object: { kind: 'Service', namespace: 'default', name: 'app' },
      },
      {
        file: 'test/fixtures/manifests/check/app.yaml',
        line: 26,
        severity: 'warning',
        code: expect.stringMatching(/^[a-z]+(-[a-z]+)+$/),
        message: expect.stringMatching(/^EndpointSlice "default\/stray": has no kubernetes\.io\/service-name label/),
      },
    ]);
    // The same input, the same bytes.
    expect(check('--manifests', 'test/fixtures/manifests/check', '--output', 'json').stdout).toBe(r.stdout);
    const broken = JSON.parse(check('--manifests', 'test/fixtures/cli/broken.yaml', '--output', 'json').stdout) as JsonReport;
    expect(broken.summary).toEqual({ errors: 2, warnings: 0, infos: 0 });
    expect(broken.findings.map((f) => [f.file, f.line, f.severity])).toEqual([
      ['test/fixtures/cli/broken.yaml', 12, 'error'],
      ['test/fixtures/cli/broken.yaml', 14, 'error'],
    ]);
    for (const f of broken.findings) expect(f.code).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it('prints info findings (statuses filled in) without counting them as failures', () => {
    const r = check('--conf', 'examples/Corefile.edge');
    expect(r.stdout).toMatch(/^examples\/edge\/shop\.yaml:\d+: info: Gateway "shop\/public": status\.addresses .* \[status-filled\]$/m);
    expect(r.stdout).not.toMatch(/,.*: info: .*kind-skipped/);
    const doc = JSON.parse(check('--conf', 'examples/Corefile.edge', '--output', 'json', '--strict').stdout) as JsonReport;
    expect(doc.summary.infos).toBeGreaterThan(0);
    const gateway = doc.findings.find((f) => f.code === 'status-filled' && f.object?.kind === 'Gateway');
    expect(gateway).toMatchObject({ object: { kind: 'Gateway', namespace: 'shop', name: 'public' } });
    expect(check('--conf', 'examples/Corefile.edge', '--strict').code).toBe(0);
  });

  it('--output sarif: a SARIF 2.1.0 log code scanning accepts', () => {
    // An error (the Corefile), warnings (a selector) and notes (statuses filled) in one run.
    const manifests = (p: string): string => path.join(repoRoot, p);
    const both = `${manifests('test/fixtures/manifests/check')} ${manifests('examples/edge')}`;
    const corefile = `cluster.local {\n    kubernetes {\n        manifests ${both}\n    }\n    frobnicate\n}\n`;
    withFiles({ Corefile: corefile }, (dir) => {
      const r = check('--conf', path.join(dir, 'Corefile'), '--output', 'sarif');
      expect(r.code).toBe(1);
      const log = JSON.parse(r.stdout) as unknown;
      expect(validateSarif(log)).toEqual([]);
      const run0 = (log as { runs: { tool: { driver: { name: string; rules: { id: string }[] } }; results: Record<string, unknown>[] }[] }).runs[0]!;
      expect(run0.tool.driver.name).toBe('clusterdns');
      expect(run0.tool.driver.rules.map((x) => x.id)).toEqual(expect.arrayContaining(['corefile-unknown-plugin', 'selector-no-pods', 'status-filled']));
      expect(new Set(run0.results.map((x) => x['level']))).toEqual(new Set(['error', 'warning', 'note']));
      expect(run0.results.find((x) => x['ruleId'] === 'selector-no-pods')).toMatchObject({
        level: 'warning',
        locations: [{ physicalLocation: { artifactLocation: { uri: 'test/fixtures/manifests/check/app.yaml' }, region: { startLine: 20 } } }],
      });
      // Outside the current directory: an absolute file: URI.
      const corefileUri = pathToFileURL(path.join(dir, 'Corefile')).href;
      expect(run0.results.find((x) => x['ruleId'] === 'corefile-unknown-plugin')).toMatchObject({
        level: 'error',
        locations: [{ physicalLocation: { artifactLocation: { uri: corefileUri }, region: { startLine: 5 } } }],
      });
    });
  });
});
