// The page in a real browser: Debian's chromium, headless, driven by playwright-core (no browser
// download). Loads the example cluster, searches, follows a manifest link, runs resolver walks,
// sees a manifest change arrive without a reload, and shows hostile manifest values as text.
// UPDATE_SCREENSHOTS=1 writes docs/ui-records.png and docs/ui-resolve.png.
import { renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveCommand } from '../../src/cli/resolver-commands.js';
import { CONTENT_SECURITY_POLICY, type UiServer } from '../../src/ui/server.js';
import { repoRoot, which } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { copyExamples, exampleCorefile, startTestUi, watch } from './ui-helpers.js';

const discard = (): Writable =>
  new Writable({
    write(_c, _e, done) {
      done();
    },
  });

/** The walk's rows as the page shows them: query name, type, search domain, answer. */
async function walkRows(page: Page): Promise<string[][]> {
  return page.locator('#walk tbody tr.query').evaluateAll((rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent ?? '').slice(1)));
}

const screenshots = process.env.UPDATE_SCREENSHOTS === '1';

describeNeeding(['chromium'], 'clusterdns ui in a browser', () => {
  // The examples as they are (the paths the screenshots show), and a copy to change.
  const flags = { conf: exampleCorefile, manifests: ['examples/manifests'] };
  const tree = copyExamples();
  let ui: UiServer;
  let changing: UiServer;
  let browser: Browser;
  let page: Page;
  let bad: string[];
  beforeAll(async () => {
    ui = await startTestUi(flags);
    changing = await startTestUi({ conf: exampleCorefile, manifests: [tree.manifests] });
    browser = await chromium.launch({ executablePath: which('chromium')! });
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    bad = watch(page);
  });
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await changing?.close();
    tree.remove();
  });

  it('loads the example cluster with the CSP set, and filters the table by a search', async () => {
    const res = await page.goto(ui.url);
    expect(res?.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    await page.locator('#records-table tr.rec').first().waitFor();
    expect(await page.locator('#records-table tr.rec').count()).toBeGreaterThan(40);
    await page.getByLabel('Search records').fill('db.apps');
    const shown = page.locator('#records-table tr.rec:visible');
    await expect.poll(() => shown.count()).toBeGreaterThan(0);
    for (const text of await shown.allTextContents()) expect(text).toMatch(/db\.apps/);
    // Another Service's records are filtered out.
    expect(await page.locator('#records-table tr.rec:visible', { hasText: 'nginx.apps' }).count()).toBe(0);
    if (screenshots) {
      await page.getByLabel('Search records').fill('apps');
      await page.screenshot({ path: path.join(repoRoot, 'docs/ui-records.png') });
      expect(statSync(path.join(repoRoot, 'docs/ui-records.png')).size).toBeLessThan(150 * 1024);
    }
    expect(bad).toEqual([]);
  });

  it('reaches a manifest by keyboard: Tab into the table, arrows, Enter opens the file at its line', async () => {
    await page.goto(ui.url);
    const search = page.getByLabel('Search records');
    await search.fill('legacy');
    await search.press('Tab');
    // The first visible row is the namespace; the next one the Service.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent ?? '')).toContain('namespace apps');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '')).toBe('Service apps/legacy');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/manifest\?file=/);
    const hl = page.locator('#manifest-lines li.hl');
    await hl.waitFor();
    expect(await hl.getAttribute('id')).toBe('L5');
    expect(await page.locator('#manifest-lines li').count()).toBe(45);
    // The highlighted line is the object's first line in the file.
    expect(await hl.textContent()).toBe('- apiVersion: v1');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('L5');
    expect(bad).toEqual([]);
  });

  it('follows a row link to the manifest view with the line highlighted', async () => {
    await page.goto(ui.url);
    const link = page.locator('#records-table tr.obj[aria-label="Service apps/nginx"] a.src');
    expect(await link.textContent()).toBe('examples/manifests/apps.yaml:10');
    await link.click();
    await page.waitForURL(/\/manifest\?file=.*&line=10$/);
    const hl = page.locator('#manifest-lines li.hl');
    await hl.waitFor();
    expect(await hl.getAttribute('id')).toBe('L10');
    expect(await hl.textContent()).toBe('apiVersion: v1');
    expect(await page.locator('#manifest-lines li#L13').textContent()).toBe('  name: nginx');
    expect(bad).toEqual([]);
  });

  for (const libc of ['musl', 'glibc']) {
    it(`draws the ${libc} walk of a pod, one row per query, as resolve sends them`, async () => {
      // A fresh document: from the last walk's URL, only the hash would change.
      await page.goto('about:blank');
      await page.goto(`${ui.url}#resolve`);
      await page.getByLabel('Pod', { exact: true }).selectOption('apps/web-0');
      await page.getByLabel('libc').selectOption(libc);
      await page.getByLabel('Name', { exact: true }).fill('kubernetes.default');
      await page.getByRole('button', { name: 'Resolve' }).click();
      await page.locator('#walk-call', { hasText: `${libc} getaddrinfo(AF_UNSPEC) kubernetes.default, from pod apps/web-0` }).waitFor();
      const trace = await resolveCommand('kubernetes.default', { ...flags, pod: 'apps/web-0', libc, json: true }, discard(), discard());
      const rows = await walkRows(page);
      expect(rows.map((r) => `${r[0]} ${r[1]}`)).toEqual(trace.queries.map((q) => `${q.name} ${q.type}`));
      // Search domains in the pod's order: its namespace, then svc, then the answer.
      expect(rows[0]).toEqual(['kubernetes.default.apps.svc.cluster.local.', 'A', 'apps.svc.cluster.local', 'NXDOMAIN']);
      const answered = rows.find((r) => r[0] === 'kubernetes.default.svc.cluster.local.' && r[1] === 'A')!;
      expect(answered).toEqual(['kubernetes.default.svc.cluster.local.', 'A', 'svc.cluster.local', 'A 10.96.0.1']);
      expect(await page.locator('#walk-result').textContent()).toBe('Result: ok 10.96.0.1');
      expect(await page.locator('#walk-fixes').textContent()).toContain('kubernetes.default.svc.cluster.local. (trailing dot)');
      if (screenshots && libc === 'glibc') {
        await page.screenshot({ path: path.join(repoRoot, 'docs/ui-resolve.png') });
        expect(statSync(path.join(repoRoot, 'docs/ui-resolve.png')).size).toBeLessThan(150 * 1024);
      }
      expect(bad).toEqual([]);
    });
  }

  it('shows a manifest change without a reload of the page', async () => {
    const ui = changing;
    await page.goto(ui.url);
    await page.locator('#records-table tr.rec').first().waitFor();
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
    });
    expect(await page.locator('#records-table tr.obj[aria-label="Service apps/fresh"]').count()).toBe(0);
    const before = ui.generation;
    // Written aside and renamed in, as a change should be published.
    const tmp = path.join(tree.dir, 'fresh.yaml.tmp');
    writeFileSync(
      tmp,
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: fresh\n  namespace: apps\nspec:\n  clusterIP: 10.96.77.77\n  ports: [{name: http, port: 80}]\n',
    );
    renameSync(tmp, path.join(tree.manifests, 'fresh.yaml'));
    await page.locator('#records-table tr.rec', { hasText: 'fresh.apps.svc.cluster.local.' }).first().waitFor({ timeout: 30_000 });
    expect(ui.generation).toBeGreaterThan(before);
    expect(await page.locator('#records-table tr.rec', { hasText: '10.96.77.77' }).count()).toBeGreaterThan(0);
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42);
    expect(await page.locator('#status').textContent()).toMatch(/^updated at /);
    expect(bad).toEqual([]);
  });
});

describeNeeding(['chromium'], 'clusterdns ui with hostile manifest values', () => {
  const tree = copyExamples();
  const corefile = path.join(tree.dir, 'Corefile');
  // k8s_gateway publishes the DNSEndpoint's TXT targets as they are written.
  writeFileSync(
    corefile,
    'cluster.local in-addr.arpa ip6.arpa {\n  kubernetes cluster.local in-addr.arpa ip6.arpa {\n    pods insecure\n    fallthrough in-addr.arpa ip6.arpa\n  }\n}\nexample.com {\n  k8s_gateway {\n    resources DNSEndpoint Ingress Service\n  }\n}\n',
  );
  const hostile = path.join(tree.manifests, 'hostile.yaml');
  writeFileSync(
    hostile,
    [
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: hostile',
      '  namespace: xss',
      '  annotations:',
      `    note: "<script>alert('annotation')</script>"`,
      `    img: "\\"><img src=x onerror=alert('annotation-img')>"`,
      '    ctrl: "bell\\u0007escape\\u001b[31mred\\u2028sep"',
      'spec:',
      '  selector: {app: hostile}',
      '  ports: [{name: http, port: 80}]',
      '---',
      'apiVersion: externaldns.k8s.io/v1alpha1',
      'kind: DNSEndpoint',
      'metadata:',
      '  name: txt',
      '  namespace: xss',
      'spec:',
      '  endpoints:',
      '  - dnsName: txt.example.com',
      '    recordType: TXT',
      `    targets: ["<script>alert('txt')</script>", "\\"><img src=x onerror=alert('txt-img')>", "ctl\\u0001\\u001b[31m"]`,
      '---',
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: badlabel',
      '  namespace: xss',
      '  labels:',
      `    app: "<script>alert('label')</script>"`,
      'spec:',
      '  ports: [{port: 80}]',
      '---',
      'apiVersion: networking.k8s.io/v1',
      'kind: Ingress',
      'metadata: {name: badhost, namespace: xss}',
      'spec:',
      '  rules:',
      `  - host: "\\"><img src=x onerror=alert('host')>.example.com"`,
      '---',
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: badpod',
      '  namespace: xss',
      'spec:',
      `  hostname: "<script>alert('hostname')</script>"`,
      '  containers: [{name: c, image: x}]',
      '',
    ].join('\n'),
  );
  let ui: UiServer;
  let browser: Browser;
  let page: Page;
  let bad: string[];
  beforeAll(async () => {
    ui = await startTestUi({ conf: corefile, manifests: [tree.manifests] });
    browser = await chromium.launch({ executablePath: which('chromium')! });
    page = await browser.newPage();
    bad = watch(page);
  });
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    tree.remove();
  });

  /** No element the data could have made: the page builds none of these itself inside main. */
  const injected = (): Promise<number> => page.locator('main img, main script, main iframe, main [onerror], main [onload]').count();

  it('shows TXT data, labels, host names and hostnames in findings as text: no dialog, no console error, nothing injected', async () => {
    await page.goto(ui.url);
    await page.locator('#records-table tr.rec').first().waitFor();
    const txt = await page.locator('#records-table tr.rec', { hasText: 'txt.example.com.' }).locator('td.data').allTextContents();
    expect(txt.sort()).toEqual([`"\\"><img src=x onerror=alert('txt-img')>"`, `"<script>alert('txt')</script>"`, '"ctl\\001\\027[31m"'].sort());
    const findings = await page
      .locator('#records-table tbody', { has: page.locator('tr.ns', { hasText: 'namespace xss' }) })
      .locator('ul.findings li')
      .allTextContents();
    const all = findings.join('\n');
    expect(all).toContain(`metadata.labels.app value "<script>alert('label')</script>"`);
    expect(all).toContain(`spec.rules[0].host "\\"><img src=x onerror=alert('host')>.example.com"`);
    expect(all).toContain(`spec.hostname "<script>alert('hostname')</script>"`);
    expect(await injected()).toBe(0);
    await page.getByLabel('Search records').fill('<script>');
    expect(await page.locator('#records-table tr.rec:visible').count()).toBe(1);
    expect(await injected()).toBe(0);
    expect(bad).toEqual([]);
  });

  it('shows annotations and control characters of the manifest file literally', async () => {
    await page.goto(`${ui.url}manifest?file=${encodeURIComponent(hostile)}&line=1`);
    await page.locator('#manifest-lines li').first().waitFor();
    const lines = await page.locator('#manifest-lines li').allTextContents();
    expect(lines[6]).toBe(`    note: "<script>alert('annotation')</script>"`);
    expect(lines[7]).toBe(`    img: "\\"><img src=x onerror=alert('annotation-img')>"`);
    // YAML escapes as written in the file (the page shows the file, not the decoded value).
    expect(lines[8]).toBe('    ctrl: "bell\\u0007escape\\u001b[31mred\\u2028sep"');
    expect(await injected()).toBe(0);
    expect(bad).toEqual([]);
  });

  it('shows raw control characters of a file as escapes', async () => {
    writeFileSync(
      path.join(tree.manifests, 'raw.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: raw\n  namespace: xss\n  annotations: {a: "x\x07y\x1bz"}\nspec:\n  ports: [{port: 80}]\n',
    );
    await expect
      .poll(async () => (await fetch(`${ui.url}api/manifest?file=${encodeURIComponent(path.join(tree.manifests, 'raw.yaml'))}`)).status, { timeout: 30_000 })
      .toBe(200);
    await page.goto(`${ui.url}manifest?file=${encodeURIComponent(path.join(tree.manifests, 'raw.yaml'))}&line=1`);
    await page.locator('#manifest-lines li').first().waitFor();
    expect(await page.locator('#L6').textContent()).toBe('  annotations: {a: "x\\u0007y\\u001bz"}');
    expect(bad).toEqual([]);
  });
});
