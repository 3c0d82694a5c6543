// Builds a real server (without listening) from one server block, to test how a plugin's setup
// reads its Corefile lines: the tables of CoreDNS's plugin/*/setup_test.go, ported.
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { corefileErrors } from '../../src/chain/corefile.js';
import type { Plugin } from '../../src/chain/plugin.js';

export interface SetupResult {
  /** The reasons of every Corefile error, `line: reason`, or [] when the block was accepted. */
  errors: string[];
  /** The plugins of the block when it was accepted. */
  plugins: readonly Plugin[];
}

/** `body` goes inside `KEY {` ... `}` (KEY defaults to `.`); the app is closed before returning. */
export async function setupBlock(body: string, opts: { key?: string; manifests?: string[]; inspect?: (app: App) => void } = {}): Promise<SetupResult> {
  const text = `${opts.key ?? '.'} {\n${body}\n}\n`;
  let app: App;
  try {
    app = await buildApp({ corefileText: text, manifests: opts.manifests, logger: pino({ level: 'silent' }), oneShot: true });
  } catch (err) {
    const found = corefileErrors(err);
    if (!found) throw err;
    return { errors: found.map((e) => `${e.line}: ${e.reason}`), plugins: [] };
  }
  try {
    opts.inspect?.(app);
    return { errors: [], plugins: app.chains[0]?.plugins ?? [] };
  } finally {
    await app.close();
  }
}

/** The one plugin named `name` of an accepted block (throws with the errors otherwise). */
export async function setupPlugin<T = Plugin>(body: string, name: string, opts: { key?: string; manifests?: string[] } = {}): Promise<T> {
  const r = await setupBlock(body, opts);
  if (r.errors.length > 0) throw new Error(`expected ${name} to be accepted, got:\n${r.errors.join('\n')}`);
  const p = r.plugins.find((x) => x.name === name);
  if (!p) throw new Error(`no ${name} plugin in the chain`);
  return p as T;
}
