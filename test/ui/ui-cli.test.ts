// `clusterdns ui` as a command: the built launcher serves the page on the --listen address and
// exits 0 on SIGTERM; with --git, the diff of a revision and the work tree (whose files the Diff
// links, not the revision's); a bad --diff exits 2.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { DiffResponse, DiffSourcesResponse, ManifestResponse } from '../../src/ui/types.js';
import { BASE, CART, COREFILE, SHOP, edit } from '../cli/diff-fixtures.js';
import { freePort, launcher, onLines, repoRoot, stopProcess } from '../helpers/server.js';

it('clusterdns ui serves the page on --listen and stops on SIGTERM', async () => {
  const port = await freePort();
  const proc = spawn(process.execPath, [launcher, 'ui', '--conf', 'examples/Corefile', '--manifests', 'examples/manifests', '--listen', `127.0.0.1:${port}`], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      onLines(proc.stderr!, (line) => {
        lines.push(line);
        if (line.includes(`clusterdns ui: open http://127.0.0.1:${port}/`)) resolve();
      });
      proc.once('exit', (code) => reject(new Error(`exited ${code} before serving:\n${lines.join('\n')}`)));
    });
    const res = await fetch(`http://127.0.0.1:${port}/api/pods`);
    expect(res.status).toBe(200);
    const pods = (await res.json()) as { pods: { namespace: string; name: string }[] };
    expect(pods.pods.map((p) => `${p.namespace}/${p.name}`)).toContain('apps/web-0');
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    await stopProcess(proc);
  }
});

/** Runs `clusterdns ui ...args` in `cwd` until it logs its address; the running process. */
async function startUiCli(cwd: string, args: string[]): Promise<{ proc: ReturnType<typeof spawn>; url: string }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [launcher, 'ui', ...args, '--listen', `127.0.0.1:${port}`], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    onLines(proc.stderr!, (line) => {
      lines.push(line);
      if (line.includes(`clusterdns ui: open http://127.0.0.1:${port}/`)) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`exited ${code} before serving:\n${lines.join('\n')}`)));
  });
  return { proc, url: `http://127.0.0.1:${port}/` };
}

it('clusterdns ui --git HEAD PATH serves the diff `diff --git HEAD PATH --output json` prints, and follows the work tree', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-ui-git-'));
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, stdio: 'ignore' });
  };
  let proc: ReturnType<typeof spawn> | undefined;
  try {
    writeFileSync(path.join(dir, 'Corefile'), COREFILE);
    mkdirSync(path.join(dir, 'm'));
    for (const [name, text] of Object.entries(BASE)) writeFileSync(path.join(dir, 'm', name), text);
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'base');
    writeFileSync(path.join(dir, 'm', 'shop.yaml'), SHOP + CART);
    const expected = (): string =>
      execFileSync(process.execPath, [launcher, 'diff', '--conf', 'Corefile', '--git', 'HEAD', 'm', '--output', 'json'], { cwd: dir, encoding: 'utf8' });
    const ui = await startUiCli(dir, ['--conf', 'Corefile', '--git', 'HEAD', 'm']);
    proc = ui.proc;
    const body = await (await fetch(`${ui.url}api/diff`)).text();
    expect(body).toBe(expected());
    expect(body).toContain('cart.shop.svc.cluster.local.');
    // NEW (the work tree) is what the page serves: its files are links; HEAD's (OLD) are not served.
    const sources = (await (await fetch(`${ui.url}api/diff-sources`)).json()) as DiffSourcesResponse;
    const cart = (JSON.parse(body) as DiffResponse).namespaces.flatMap((ns) => ns.changes).find((c) => c.name === 'cart.shop.svc.cluster.local.');
    expect(cart?.source?.file).toBe('m/shop.yaml');
    expect(sources.new['m/shop.yaml']).toBe('m/shop.yaml');
    expect(sources.old).toEqual({});
    const served = (await (await fetch(`${ui.url}api/manifest?file=${encodeURIComponent(sources.new['m/shop.yaml']!)}`)).json()) as ManifestResponse;
    expect(served.lines.join('\n')).toContain('name: cart');
    // The work tree is NEW: an edit there changes the diff.
    writeFileSync(path.join(dir, 'm', 'shop.yaml'), edit(SHOP, 'old.example.net', 'new.example.net'));
    await expect.poll(async () => (await (await fetch(`${ui.url}api/diff`)).text()).includes('new.example.net.'), { timeout: 30000 }).toBe(true);
    const now = await (await fetch(`${ui.url}api/diff`)).text();
    expect(now).toBe(expected());
    expect(now).not.toContain('cart.shop');
  } finally {
    if (proc) await stopProcess(proc);
    rmSync(dir, { recursive: true, force: true });
  }
}, 120000);

it('clusterdns ui --diff with one path exits 2 and says why', () => {
  const r = spawnSync(process.execPath, [launcher, 'ui', '--diff', 'examples/manifests', '--listen', '127.0.0.1:1'], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 30000,
  });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('--diff takes two manifest paths, OLD and NEW; got 1');
});

it('clusterdns ui reloads on SIGHUP: the next generation, with nothing changed on disk', async () => {
  const { proc, url } = await startUiCli(repoRoot, ['--conf', 'examples/Corefile', '--manifests', 'examples/manifests']);
  try {
    const generation = async (): Promise<number> => ((await (await fetch(`${url}api/records`)).json()) as { generation: number }).generation;
    expect(await generation()).toBe(1);
    proc.kill('SIGHUP');
    await expect.poll(generation, { timeout: 30_000 }).toBe(2);
    // Still serving: SIGHUP reloads, it does not end the process.
    expect(proc.exitCode).toBeNull();
  } finally {
    await stopProcess(proc);
  }
}, 60000);
