// `clusterdns diff --git`: revisions of a repository made here, read without checking them out
// (the work tree and index stay as they are), paths shown as the repository names them, the
// Corefile read from each revision too.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launcher } from '../helpers/server.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';
import { BILLING, COREFILE, SHOP, edit } from './diff-fixtures.js';

const missing = missingTools('git');

describe.skipIf(skipOrFailInCI(missing, 'clusterdns diff --git'))('clusterdns diff --git', { timeout: 120000 }, () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-git-'));
  const repo = path.join(root, 'repo');
  // The command's own temporary directories go here, so that the test can see them removed.
  const tmp = path.join(root, 'tmp');
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
  const diff = (cwd: string, ...args: string[]) => {
    const r = spawnSync(process.execPath, [launcher, 'diff', ...args], { cwd, encoding: 'utf8', timeout: 110000, env: { ...process.env, TMPDIR: tmp } });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  beforeAll(() => {
    mkdirSync(path.join(repo, 'manifests'), { recursive: true });
    mkdirSync(tmp);
    git('init', '-q');
    git('config', 'user.email', 'test@example.com');
    git('config', 'user.name', 'test');
    writeFileSync(path.join(repo, 'Corefile'), COREFILE);
    writeFileSync(path.join(repo, 'manifests', 'shop.yaml'), SHOP);
    writeFileSync(path.join(repo, 'manifests', 'billing.yaml'), BILLING);
    git('add', '-A');
    git('commit', '-qm', 'one');
    // The second commit changes a manifest and the Corefile (the k8s_gateway TTL).
    writeFileSync(path.join(repo, 'manifests', 'shop.yaml'), edit(SHOP, 'old.example.net', 'new.example.net'));
    writeFileSync(path.join(repo, 'Corefile'), edit(COREFILE, 'ttl 60', 'ttl 120'));
    git('commit', '-qam', 'two');
    // Not committed: a port renamed in the work tree.
    writeFileSync(path.join(repo, 'manifests', 'billing.yaml'), edit(BILLING, 'name: https', 'name: tls'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('REV..REV: two commits, the Corefile of each', () => {
    const status = git('status', '--porcelain');
    const r = diff(repo, '--git', 'HEAD~1..HEAD', 'manifests', '--conf', 'Corefile', '--exit-code');
    expect(r.err).toBe('');
    expect(r.out).toBe(`diff HEAD~1 HEAD: record sets: 0 added, 0 removed, 2 changed; findings: 0 appeared, 0 disappeared

namespace shop
  ~ www.example.com. A 203.0.113.10 -> 203.0.113.10 (TTL 60 -> 120)
      Ingress shop/www (manifests/shop.yaml:69)
  ~ legacy.shop.svc.cluster.local. CNAME old.example.net. -> new.example.net. (TTL 30)
      Service shop/legacy (manifests/shop.yaml:60)
`);
    expect(r.code).toBe(1);
    expect(git('status', '--porcelain')).toBe(status);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("REV alone: that commit against the work tree, from a subdirectory, paths still the repository's", () => {
    const r = diff(path.join(repo, 'manifests'), '--git', 'HEAD', '.', '--conf', '../Corefile');
    expect(r.out).toBe(`diff HEAD work tree: record sets: 1 added, 1 removed, 0 changed; findings: 0 appeared, 0 disappeared

namespace billing
  - _https._tcp.invoices.billing.svc.cluster.local. SRV 0 100 443 invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (manifests/billing.yaml:6)
  + _tls._tcp.invoices.billing.svc.cluster.local. SRV 0 100 443 invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (manifests/billing.yaml:6)
`);
    expect(r.code).toBe(0);
  });

  it('the same revision on both sides: no change, exit 0 under --exit-code', () => {
    const r = diff(repo, '--git', 'HEAD..HEAD', '--manifests', 'manifests', '--conf', 'Corefile', '--exit-code');
    expect(r.out).toBe('diff HEAD HEAD: record sets: 0 added, 0 removed, 0 changed; findings: 0 appeared, 0 disappeared\n');
    expect(r.code).toBe(0);
  });

  it('a revision that is not there, or no manifest paths: exit 2 with the reason', () => {
    const bad = diff(repo, '--git', 'nope', 'manifests');
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      `clusterdns diff: --git: nope is not a commit of the repository ${execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8' }).trim()}\n`,
    );
    const none = diff(repo, '--git', 'HEAD');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/--git needs the manifest paths/);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
