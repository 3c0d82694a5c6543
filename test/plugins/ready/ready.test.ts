// ready: /ready from the real server, and the readiness logic with a plugin that is not ready.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import pino from 'pino';
import { App, buildApp } from '../../../src/app.js';
import type { BlockContext } from '../../../src/chain/registry.js';
import type { Directive } from '../../../src/chain/corefile.js';
import { emptyResponse, type Plugin } from '../../../src/chain/plugin.js';
import { readyPlugin } from '../../../src/plugins/ready/setup.js';
import { freePort } from '../../helpers/server.js';
import { startOps, type OpsServer } from '../../fixtures/ops/client.js';

describe('ready through the real server', () => {
  let srv: OpsServer;
  beforeAll(async () => {
    srv = await startOps();
  }, 30000);
  afterAll(async () => srv?.stop());

  it('answers 200 OK once kubernetes has loaded (two blocks, one listener)', async () => {
    const res = await fetch(srv.url(srv.readyPort, '/ready'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });
});

/** A plugin whose readiness the test controls. */
function fakePlugin(name: string, state: { ready: true | string }): Plugin {
  return { name, serve: () => emptyResponse(0), ready: () => state.ready };
}

/** The App whose blocks the hand-made ones below are: its shared resources and lameduck. */
const owner = new App({}, pino({ level: 'silent' }));

/** Sets `ready` up in a hand-made block of `owner` with the given other plugins, as the registry would. */
function readyBlock(port: number, others: Plugin[], monitor?: string): Plugin {
  const d: Directive = {
    name: 'ready',
    args: [`127.0.0.1:${port}`],
    file: 'Corefile',
    line: 2,
    block: monitor ? [{ name: 'monitor', args: [monitor], file: 'Corefile', line: 3 }] : undefined,
  };
  const hooks: ((plugins: readonly Plugin[]) => void)[] = [];
  const ctx = {
    zones: ['example.test.'],
    keys: [],
    log: pino({ level: 'silent' }),
    bindAddresses: [],
    observe: () => undefined,
    onBuilt: (h: (plugins: readonly Plugin[]) => void) => void hooks.push(h),
    shared: owner.share.bind(owner),
    lameduck: owner.lameduck,
  } as unknown as BlockContext;
  const plugin = readyPlugin.setup(d, ctx)!;
  for (const h of hooks) h([plugin, ...others]);
  return plugin;
}

describe('ready logic', () => {
  it('answers 503 with the sorted names of the plugins not ready, then 200 once they are', async () => {
    const port = await freePort();
    const a = { ready: 'loading manifests' as true | string };
    const b = { ready: 'no zones yet' as true | string };
    const plugin = readyBlock(port, [
      fakePlugin('zebra', a),
      fakePlugin('file', b),
      fakePlugin('kubernetes', { ready: true }),
      { name: 'plain', serve: () => emptyResponse(0) },
    ]);
    await plugin.start!();
    try {
      let res = await fetch(`http://127.0.0.1:${port}/ready`);
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('file,zebra');
      a.ready = true;
      res = await fetch(`http://127.0.0.1:${port}/ready`);
      expect([res.status, await res.text()]).toEqual([503, 'file']);
      b.ready = true;
      res = await fetch(`http://127.0.0.1:${port}/ready`);
      expect([res.status, await res.text()]).toEqual([200, 'OK']);
      // until-ready (default): once ready, a plugin is not asked again.
      a.ready = 'flapping';
      res = await fetch(`http://127.0.0.1:${port}/ready`);
      expect(res.status).toBe(200);
    } finally {
      await plugin.close!();
    }
  });

  it('monitor continuously keeps asking', async () => {
    const port = await freePort();
    const a = { ready: true as true | string };
    const plugin = readyBlock(port, [fakePlugin('kubernetes', a)], 'continuously');
    await plugin.start!();
    try {
      expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(200);
      a.ready = 'reloading';
      const res = await fetch(`http://127.0.0.1:${port}/ready`);
      expect([res.status, await res.text()]).toEqual([503, 'kubernetes']);
    } finally {
      await plugin.close!();
    }
  });

  it('reports every block that enables ready, whichever address serves it', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const one = readyBlock(p1, [fakePlugin('kubernetes', { ready: true })]);
    const two = readyBlock(p2, [fakePlugin('file', { ready: 'loading' })]);
    await one.start!();
    await two.start!();
    try {
      const res = await fetch(`http://127.0.0.1:${p1}/ready`);
      expect([res.status, await res.text()]).toEqual([503, 'file']);
    } finally {
      await one.close!();
      await two.close!();
    }
  });
});

describe('ready setup', () => {
  it('checks its address and options', async () => {
    await expect(buildApp({ corefileText: 'example.test {\n  ready :8181 :8182\n}\n' })).rejects.toThrow(
      /Corefile:2: ready: wrong number of arguments: 2 given, at most 1 expected; usage `ready \[ADDRESS\]`/,
    );
    await expect(buildApp({ corefileText: 'example.test {\n  ready :8181 {\n    monitor sometimes\n  }\n}\n' })).rejects.toThrow(
      /Corefile:3: ready monitor: mode "sometimes" is not one of until-ready or continuously/,
    );
    await expect(buildApp({ corefileText: 'example.test {\n  ready\n  ready\n}\n' })).rejects.toThrow(/appears twice/);
  });
});
