// `clusterdns ui --diff OLD NEW` over HTTP: /api/diff is the document `clusterdns diff --output
// json` prints for the same trees, and it follows an edit of NEW.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diff } from '../../src/cli/diff.js';
import type { UiServer } from '../../src/ui/server.js';
import type { DiffResponse, InfoResponse, RecordsResponse } from '../../src/ui/types.js';
import { CART } from '../cli/diff-fixtures.js';
import { NEW_TREE, diffTrees } from './ui-diff-fixtures.js';
import { startTestUi } from './ui-helpers.js';

const SLOW = 120000;

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

async function diffJson(conf: string, old: string, now: string): Promise<string> {
  const out = new Collect();
  const err = new Collect();
  const code = await diff([old, now], { conf, output: 'json' }, out, err);
  expect(err.text).toBe('');
  expect(code).toBe(0);
  return out.text;
}

describe('clusterdns ui --diff OLD NEW over HTTP', () => {
  const trees = diffTrees();
  let ui: UiServer;
  beforeAll(async () => {
    ui = await startTestUi({ conf: trees.conf }, { diff: { old: trees.old, new: trees.new } });
  }, SLOW);
  afterAll(async () => {
    await ui?.close();
    trees.remove();
  });

  it(
    'serves /api/diff as the text `clusterdns diff --output json` prints',
    async () => {
      const res = await fetch(`${ui.url}api/diff`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = await res.text();
      expect(body).toBe(await diffJson(trees.conf, trees.old, trees.new));
      const d = JSON.parse(body) as DiffResponse;
      const changes = d.namespaces.flatMap((ns) => ns.changes.map((c) => `${c.change} ${c.name} ${c.type}`));
      expect(changes).toContain('added cart.shop.svc.cluster.local. A');
      expect(changes).toContain('changed legacy.shop.svc.cluster.local. CNAME');
      expect(changes).toContain('changed txt.example.com. TXT');
    },
    SLOW,
  );

  it('says which tree Records shows: NEW', async () => {
    const info = (await (await fetch(`${ui.url}api/info`)).json()) as InfoResponse;
    expect(info).toEqual({ diff: { old: trees.old, new: trees.new } });
    const records = (await (await fetch(`${ui.url}api/records`)).json()) as RecordsResponse;
    const names = records.namespaces.flatMap((ns) => ns.objects.map((o) => `${o.kind} ${ns.name}/${o.name}`));
    expect(names).toContain('Service shop/cart');
  });

  it(
    'recomputes the diff when NEW changes',
    async () => {
      const before = ui.generation;
      // cart removed again from NEW: the diff no longer adds it.
      writeFileSync(path.join(trees.new, 'shop.yaml'), NEW_TREE['shop.yaml']!.replace(CART, ''));
      await expect.poll(() => ui.generation, { timeout: 30000 }).toBeGreaterThan(before);
      const body = await (await fetch(`${ui.url}api/diff`)).text();
      expect(body).toBe(await diffJson(trees.conf, trees.old, trees.new));
      expect(body).not.toContain('cart.shop');
      expect(body).toContain('legacy.shop');
    },
    SLOW,
  );
});

it('answers /api/diff with 404 when started with one tree', async () => {
  const trees = diffTrees();
  const ui = await startTestUi({ conf: trees.conf, manifests: [trees.new] });
  try {
    const res = await fetch(`${ui.url}api/diff`);
    expect(res.status).toBe(404);
    expect(await (await fetch(`${ui.url}api/info`)).json()).toEqual({});
  } finally {
    await ui.close();
    trees.remove();
  }
});
