// `clusterdns diff`'s ways of computing the sides (src/cli/diff-sides.ts) agree: through the
// CLI, NEW loaded as a reload of OLD (the default for sides laid out alike, diff-reload.ts) and
// each side on a thread of its own (CLUSTERDNS_DIFF=threads; by default only past 1 MiB of
// manifests, here forced on a smaller tree so the test stays light), must print what the plain
// computation gives in one thread; and the findings each side reports from the model its server
// loaded must be `clusterdns check`'s.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSide, pathSide } from '../../src/cli/diff-compute.js';
import { diffSides } from '../../src/cli/diff-sides.js';
import { formatDiffJson } from '../../src/cli/diff-render.js';
import { launcher } from '../helpers/server.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-threads-'));
const oldDir = path.join(root, 'old');
const newDir = path.join(root, 'new');
const corefile = path.join(root, 'Corefile');
const SLOW = 240000;
const NAMESPACES = 8;
const SERVICES = 400;

/** A namespace's Services, each with a Deployment (or, every tenth, a StatefulSet and a headless Service). */
function namespaceText(n: number): string {
  const ns = `team-${n}`;
  const docs = [`apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`];
  for (let s = n; s < SERVICES; s += NAMESPACES) {
    const app = `app-${s}`;
    const stateful = s % 10 === 0;
    docs.push(
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${app}\n  namespace: ${ns}\nspec:\n${stateful ? '  clusterIP: None\n' : ''}  selector:\n    app: ${app}\n  ports:\n  - name: http\n    port: 80\n    targetPort: web\n`,
      `apiVersion: apps/v1\nkind: ${stateful ? 'StatefulSet' : 'Deployment'}\nmetadata:\n  name: ${app}\n  namespace: ${ns}\nspec:\n${stateful ? `  serviceName: ${app}\n` : ''}  replicas: 2\n  selector:\n    matchLabels:\n      app: ${app}\n  template:\n    metadata:\n      labels:\n        app: ${app}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.27\n        ports:\n        - name: web\n          containerPort: 8080\n`,
    );
  }
  return docs.join('---\n');
}

const ORPHAN =
  'apiVersion: v1\nkind: Service\nmetadata:\n  name: orphan\n  namespace: team-3\nspec:\n  selector:\n    app: nothing-here\n  ports:\n  - port: 80\n';

function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [launcher, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: SLOW - 20000,
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  mkdirSync(oldDir, { recursive: true });
  for (let n = 0; n < NAMESPACES; n++) writeFileSync(path.join(oldDir, `team-${n}.yaml`), namespaceText(n));
  // NEW: a pull request's worth of edits: ports renamed in one namespace, a workload scaled in
  // another, a namespace deleted, and a Service that selects no pod (a finding that appears).
  cpSync(oldDir, newDir, { recursive: true });
  const renamed = path.join(newDir, 'team-0.yaml');
  writeFileSync(renamed, readFileSync(renamed, 'utf8').replaceAll('  - name: http\n', '  - name: web-http\n'));
  const scaled = path.join(newDir, 'team-1.yaml');
  writeFileSync(scaled, readFileSync(scaled, 'utf8').replace('replicas: 2\n', 'replicas: 3\n'));
  rmSync(path.join(newDir, 'team-2.yaml'));
  writeFileSync(path.join(newDir, 'team-3.yaml'), `${readFileSync(path.join(newDir, 'team-3.yaml'), 'utf8')}---\n${ORPHAN}`);
  // An update the API server rejects: a fresh load of NEW leaves the Service out (a serving
  // reload would keep its old version, which a diff must not).
  const rejected = path.join(newDir, 'team-4.yaml');
  writeFileSync(rejected, readFileSync(rejected, 'utf8').replace('    port: 80\n', '    port: 99999\n'));
  writeFileSync(corefile, '.:53 {\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n}\n');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('diff: every way of computing the sides gives the same diff', () => {
  let reference: unknown;
  const referenceDiff = async (): Promise<unknown> => {
    const before = pathSide(oldDir, corefile);
    const after = pathSide(newDir, corefile);
    reference ??= JSON.parse(formatDiffJson(await diffSides(before, after, {}, { old: 'old', new: 'new' }, true, { CLUSTERDNS_DIFF: 'here' }), []));
    return reference;
  };

  for (const strategy of ['reload', 'threads'] as const) {
    it(
      `the CLI (CLUSTERDNS_DIFF=${strategy}) prints what one thread computes`,
      async () => {
        const r = cli(root, ['diff', '--conf', corefile, 'old', 'new', '--output', 'json', '--exit-code'], { CLUSTERDNS_DIFF: strategy });
        expect(r.err).toBe('');
        expect(r.code).toBe(1);
        const got = JSON.parse(r.out) as {
          summary: Record<string, number>;
          namespaces: { namespace: string; changes: { change: string; name: string; type: string }[] }[];
          findings: { appeared: { code: string }[] };
        };
        expect(got).toEqual(await referenceDiff());
        // 50 Services' SRV records renamed, team-1 scaled, team-2 gone; the orphan's cluster IP added.
        expect(got.summary.added).toBeGreaterThan(50);
        expect(got.summary.removed).toBeGreaterThan(50);
        // The rejected update: the Service's records are gone, and the rejection is a finding.
        const team4 = got.namespaces.find((n) => n.namespace === 'team-4')!.changes;
        expect(team4).toContainEqual(expect.objectContaining({ change: 'removed', name: 'app-4.team-4.svc.cluster.local.', type: 'A' }));
        expect(got.summary.findingsAppeared).toBe(2);
        expect(got.findings.appeared.map((f) => f.code).sort()).toEqual(['invalid-port', 'selector-no-pods']);
        expect(got.summary.findingsDisappeared).toBe(0);
      },
      SLOW,
    );
  }

  it(
    "each side's findings, taken from the model its server loaded, are `clusterdns check`'s",
    async () => {
      const { findings } = (await loadSide(pathSide(newDir, corefile), {})).listing;
      const r = cli(newDir, ['check', '--conf', corefile, '--manifests', '.', '--output', 'json']);
      expect(r.err).toBe('');
      const checked = JSON.parse(r.out) as { findings: { file: string; line: number; severity: string; code: string; message: string }[] };
      const key = (f: { file: string; line: number; severity: string; code: string; message: string }) =>
        `${f.file}:${f.line} ${f.severity} ${f.code} ${f.message}`;
      expect(findings.map(key)).toEqual(checked.findings.map(key));
      expect(findings.some((f) => f.code !== undefined && f.message.includes('"team-3/orphan"'))).toBe(true);
    },
    SLOW,
  );
});

describe('diff with a Corefile whose blocks read no manifests', () => {
  it('still compares the findings: the side loads the manifests into a feed of its own', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-nofeed-'));
    try {
      const svc = (name: string, app: string) =>
        `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ns}\nspec:\n  selector: {app: ${app}}\n  ports: [{port: 80}]\n`;
      mkdirSync(path.join(dir, 'a'));
      mkdirSync(path.join(dir, 'b'));
      writeFileSync(path.join(dir, 'a', 'x.yaml'), svc('s', 'x'));
      writeFileSync(path.join(dir, 'b', 'x.yaml'), `${svc('s', 'x')}---\n${svc('t', 'y')}`);
      writeFileSync(path.join(dir, 'Corefile'), '.:53 {\n    log\n}\n');
      const r = cli(dir, ['diff', '--conf', 'Corefile', 'a', 'b', '--output', 'json']);
      expect(r.err).toBe('');
      const out = JSON.parse(r.out) as { summary: Record<string, number>; findings: { appeared: { file: string; line: number; code: string }[] } };
      expect(out.summary).toEqual({ added: 0, removed: 0, changed: 0, findingsAppeared: 1, findingsDisappeared: 0 });
      expect(out.findings.appeared.map((f) => [f.file, f.line, f.code])).toEqual([['x.yaml', 12, 'selector-no-pods']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
