// `clusterdns ui --diff OLD NEW` over HTTP: /api/diff is the document `clusterdns diff --output
// json` prints for the same trees, and it follows an edit of NEW; /api/diff-sources links NEW's
// files and not OLD's, which are not served.
import { realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diff } from '../../src/cli/diff.js';
import type { UiServer } from '../../src/ui/server.js';
import type { DiffResponse, DiffSourcesResponse, InfoResponse, ManifestResponse, RecordsResponse } from '../../src/ui/types.js';
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

  it("maps NEW's shown paths to served files, and serves none of OLD's", async () => {
    const sources = (await (await fetch(`${ui.url}api/diff-sources`)).json()) as DiffSourcesResponse;
    expect(Object.keys(sources.new).sort()).toEqual(['billing.yaml', 'shop.yaml', 'txt.yaml']);
    expect(sources.old).toEqual({});
    // The link's file is one the manifest view serves: NEW's shop.yaml.
    const shop = await fetch(`${ui.url}api/manifest?file=${encodeURIComponent(sources.new['shop.yaml']!)}`);
    expect(shop.status).toBe(200);
    const served = (await shop.json()) as ManifestResponse;
    expect(served.lines.join('\n')).toContain('name: cart');
    // OLD's copy of the same file, by its path, its real path, or the path the diff shows: 404.
    const old = path.join(trees.old, 'billing.yaml');
    for (const file of [old, realpathSync(old), 'billing.yaml', `${trees.old}/../old/billing.yaml`]) {
      for (const route of ['manifest', 'api/manifest']) {
        const res = await fetch(`${ui.url}${route}?file=${encodeURIComponent(file)}&line=6`);
        expect(res.status, `${route} ${file}`).toBe(404);
        expect(await res.text()).not.toContain('invoices');
      }
    }
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
    expect((await fetch(`${ui.url}api/diff-sources`)).status).toBe(404);
    expect(await (await fetch(`${ui.url}api/info`)).json()).toEqual({});
  } finally {
    await ui.close();
    trees.remove();
  }
});

it("links OLD's files too when the page serves them: OLD a file of NEW's tree", async () => {
  const trees = diffTrees();
  const old = path.join(trees.new, 'billing.yaml');
  const ui = await startTestUi({ conf: trees.conf }, { diff: { old, new: trees.new } });
  try {
    const sources = (await (await fetch(`${ui.url}api/diff-sources`)).json()) as DiffSourcesResponse;
    expect(Object.keys(sources.old)).toEqual(['billing.yaml']);
    expect(sources.old['billing.yaml']).toBe(sources.new['billing.yaml']);
    expect((await fetch(`${ui.url}api/manifest?file=${encodeURIComponent(sources.old['billing.yaml']!)}`)).status).toBe(200);
  } finally {
    await ui.close();
    trees.remove();
  }
});
