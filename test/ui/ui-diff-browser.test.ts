// The Diff view in a real browser (Debian's chromium, headless, through playwright-core): the
// page started with `--diff OLD NEW` shows the added Service's row, the removed one's and the
// changed ExternalName row with old -> new data, a hostile changed TXT value as text, and says
// Records shows NEW; a NEW file:line is a link to the manifest view, an OLD one text that says
// why. UPDATE_SCREENSHOTS=1 writes docs/ui-diff.png.
import { statSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { relativePath } from '../../src/cli/findings-output.js';
import type { UiServer } from '../../src/ui/server.js';
import type { DiffResponse } from '../../src/ui/types.js';
import { repoRoot, which } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { diffTrees } from './ui-diff-fixtures.js';
import { startTestUi, watch } from './ui-helpers.js';

const SLOW = 120000;
const screenshots = process.env.UPDATE_SCREENSHOTS === '1';

/** The cells of the Diff table's row for `name` and `type`: sign, name, type, old, new, TTL, object, source. */
async function row(page: Page, name: string, type: string): Promise<string[]> {
  const rows = await page.locator('#diff-table tr.change').evaluateAll((trs) => trs.map((r) => Array.from(r.children, (c) => c.textContent ?? '')));
  const found = rows.filter((r) => r[1] === name && r[2] === type);
  expect(found).toHaveLength(1);
  return found[0]!;
}

describeNeeding(['chromium'], 'clusterdns ui --diff in a browser', () => {
  const trees = diffTrees();
  let ui: UiServer;
  let browser: Browser;
  let page: Page;
  let bad: string[] = [];
  beforeAll(async () => {
    ui = await startTestUi({ conf: trees.conf }, { diff: { old: trees.old, new: trees.new } });
    browser = await chromium.launch({ executablePath: which('chromium')! });
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    bad = watch(page);
  }, SLOW);
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    trees.remove();
  });

  it(
    'shows the added and removed Services, the changed ExternalName and a hostile changed TXT value as text',
    async () => {
      await page.goto(`${ui.url}#diff`);
      await page.locator('#diff-table tr.change').first().waitFor({ timeout: 60000 });
      expect(await page.locator('#diff-summary').textContent()).toMatch(/^[1-9]\d* added, [1-9]\d* removed, [1-9]\d* changed;/);

      const cart = await row(page, 'cart.shop.svc.cluster.local.', 'A');
      expect(cart).toEqual(['+', 'cart.shop.svc.cluster.local.', 'A', '', '10.96.0.40', '30', 'Service shop/cart', 'shop.yaml:88']);
      const invoices = await row(page, 'invoices.billing.svc.cluster.local.', 'A');
      expect(invoices).toEqual(['-', 'invoices.billing.svc.cluster.local.', 'A', '10.96.0.30', '', '30', 'Service billing/invoices', 'billing.yaml:6']);
      const legacy = await row(page, 'legacy.shop.svc.cluster.local.', 'CNAME');
      expect(legacy.slice(0, 7)).toEqual(['~', 'legacy.shop.svc.cluster.local.', 'CNAME', 'old.example.net.', 'new.example.net.', '30', 'Service shop/legacy']);
      // Grouped by namespace: both rows sit under shop's heading.
      const shop = page.locator('#diff-table tbody[data-namespace="shop"]');
      expect(await shop.locator('tr.ns').textContent()).toBe('shop');
      expect(await shop.locator('tr.change').count()).toBeGreaterThanOrEqual(2);

      // The TXT value as the JSON has it (presentation form, control character escaped) and the
      // page shows it: as text, with nothing injected.
      const d = (await (await fetch(`${ui.url}api/diff`)).json()) as DiffResponse;
      const txtChange = d.namespaces.flatMap((ns) => ns.changes).find((c) => c.name === 'txt.example.com.' && c.type === 'TXT');
      const txt = await row(page, 'txt.example.com.', 'TXT');
      expect(txt[3]).toBe('"harmless"');
      expect(txt[4]).toBe(txtChange!.new!.data.join('\n'));
      expect(txt[4]).toContain("<script>alert('txt')</script>");
      expect(txt[4]).toContain('onerror=alert');
      expect(await page.locator('main img, main script, main iframe, main [onerror], main [onload]').count()).toBe(0);

      expect(await page.locator('#tree').textContent()).toContain(`Records and Resolve show NEW (${trees.new})`);
      if (screenshots) {
        const png = path.join(repoRoot, 'docs/ui-diff.png');
        await page.screenshot({ path: png });
        expect(statSync(png).size).toBeLessThan(150 * 1024);
      }
      expect(bad).toEqual([]);
    },
    SLOW,
  );

  it("links NEW's file:line to the manifest view at its line, and says why OLD's is not a link", async () => {
    await page.goto(`${ui.url}#diff`);
    const removed = page.locator('#diff-table tr.change-removed', { hasText: 'invoices.billing.svc.cluster.local.' }).first().locator('td.src');
    await removed.waitFor({ timeout: 60000 });
    expect(await removed.locator('a').count()).toBe(0);
    expect(await removed.locator('span').getAttribute('title')).toContain(`In OLD (${trees.old}): this page serves only the manifests it loads`);
    const link = page.locator('#diff-table tr.change-added', { hasText: 'cart.shop.svc.cluster.local.' }).first().locator('td.src a');
    expect(await link.textContent()).toBe('shop.yaml:88');
    await link.click();
    await page.waitForURL(/\/manifest\?file=.*&line=88$/);
    const hl = page.locator('#manifest-lines li.hl');
    await hl.waitFor();
    expect(await hl.getAttribute('id')).toBe('L88');
    expect(await hl.textContent()).toBe('apiVersion: v1');
    expect(await page.locator('#manifest-lines li#L91').textContent()).toBe('  name: cart');
    expect(await page.locator('main h2').textContent()).toBe(`${relativePath(path.join(trees.new, 'shop.yaml'))}:88`);
    expect(bad).toEqual([]);
  });

  it('shows the NEW tree under Records', async () => {
    await page.goto(`${ui.url}#records`);
    await page.locator('#records-table tr.rec').first().waitFor();
    expect(await page.locator('#records-table tr.rec', { hasText: 'cart.shop.svc.cluster.local.' }).count()).toBeGreaterThan(0);
    expect(bad).toEqual([]);
  });
});
