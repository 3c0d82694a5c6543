// Starts `clusterdns ui`'s server in this process on a free loopback port, with the page script
// bundled from src/ui/page as scripts/bundle.js bundles it (so a test needs no `npm run build`).
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import pino from 'pino';
import type { Page } from 'playwright-core';
import type { ClusterFlags } from '../../src/cli/options.js';
import { startUi, type UiOptions, type UiServer } from '../../src/ui/server.js';
import { freePort, repoRoot } from '../helpers/server.js';

let script: Promise<string> | undefined;

/** src/ui/page/main.ts bundled for the browser, once per test file. */
export function pageScript(): Promise<string> {
  script ??= build({
    entryPoints: [path.join(repoRoot, 'src/ui/page/main.ts')],
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  }).then((r) => r.outputFiles[0]!.text);
  return script;
}

export async function startTestUi(flags: ClusterFlags, opts: Partial<UiOptions> = {}): Promise<UiServer> {
  return startUi({
    flags,
    log: pino({ level: 'silent' }),
    listen: `127.0.0.1:${await freePort()}`,
    pageScript: await pageScript(),
    watchIntervalMs: 200,
    ...opts,
  });
}

/** A copy of examples/manifests in a temporary directory, to change in a test. */
export function copyExamples(): { dir: string; manifests: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-ui-'));
  const manifests = path.join(dir, 'manifests');
  cpSync(path.join(repoRoot, 'examples/manifests'), manifests, { recursive: true });
  return { dir, manifests, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export const exampleCorefile = path.join(repoRoot, 'examples/Corefile');

/** What the page did that it must not: dialogs (alert), errors in the console (a CSP violation is one), uncaught exceptions. */
export function watch(page: Page): string[] {
  const bad: string[] = [];
  page.on('dialog', (d) => {
    bad.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (m.type() === 'error') bad.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => bad.push(`pageerror: ${e.message}`));
  return bad;
}
