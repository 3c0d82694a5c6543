// `clusterdns serve --ui ADDR`: the server answers DNS and serves the page of `clusterdns ui`
// beside it, with its Content-Security-Policy and the records the server serves; the page follows
// the server's reloads (SIGHUP) and the manifests' changes, and tells the open pages.
import http from 'node:http';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/ui/server.js';
import type { RecordsResponse } from '../../src/ui/types.js';
import { dnsQuery } from '../cli/udp-query.js';
import { freePort, type RunningServer, startServer } from '../helpers/server.js';
import { copyExamples } from './ui-helpers.js';

/** /api/events as it arrives: `until(text)` resolves once the stream has carried `text`. */
async function events(url: string): Promise<{ text(): string; until(what: string, timeoutMs?: number): Promise<void>; close(): void }> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, resolve).on('error', reject));
  let text = '';
  const waiting = new Set<() => void>();
  res.setEncoding('utf8');
  res.on('data', (c: string) => {
    text += c;
    for (const w of [...waiting]) w();
  });
  return {
    text: () => text,
    until: (what, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(look);
          reject(new Error(`no ${JSON.stringify(what)} on /api/events within ${timeoutMs} ms; got:\n${text}`));
        }, timeoutMs);
        const look = (): void => {
          if (!text.includes(what)) return;
          clearTimeout(timer);
          waiting.delete(look);
          resolve();
        };
        waiting.add(look);
        look();
      }),
    close: () => res.destroy(),
  };
}

const recordsOf = async (port: number): Promise<RecordsResponse> => (await (await fetch(`http://127.0.0.1:${port}/api/records`)).json()) as RecordsResponse;

describe('clusterdns serve --ui', () => {
  let server: RunningServer;
  let uiPort: number;
  beforeAll(async () => {
    uiPort = await freePort();
    // A bare port: the page is on loopback.
    server = await startServer(['--conf', 'examples/Corefile', '--manifests', 'examples/manifests', '--ui', String(uiPort)], { timeoutMs: 60000 });
  }, 90000);
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the page with the CSP on loopback and logs its address', async () => {
    expect(server.logs.join('\n')).toContain(`clusterdns ui: open http://127.0.0.1:${uiPort}/`);
    const res = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await res.text()).toContain('<script type="module" src="/page.js"></script>');
    expect((await fetch(`http://127.0.0.1:${uiPort}/page.js`)).status).toBe(200);
  });

  it("the page reads the server's manifest feed: one load, logged by both with the same figures", () => {
    const loaded = server.logs
      .filter((l) => l.includes('"msg":"kubernetes data loaded"'))
      .map((l) => JSON.parse(l) as { component?: string; load: number; loadMs: Record<string, number>; objects: number });
    const page = loaded.filter((l) => l.component === 'ui');
    const dns = loaded.filter((l) => l.component === undefined);
    expect(page).toHaveLength(1);
    expect(dns).toHaveLength(1);
    // A load of its own would have its own timings (and, with the page started after the server's
    // load, would come later); the same load is the same summary.
    expect(page[0]!.loadMs).toEqual(dns[0]!.loadMs);
    expect(page[0]!.load).toBe(dns[0]!.load);
    expect(page[0]!.objects).toBe(dns[0]!.objects);
  });

  it('lists the served records under /api/records, and DNS still answers them', async () => {
    const records = (await (await fetch(`http://127.0.0.1:${uiPort}/api/records`)).json()) as RecordsResponse;
    const apps = records.namespaces.find((ns) => ns.name === 'apps');
    const dual = apps?.objects.find((o) => o.kind === 'Service' && o.name === 'dual');
    const a = dual?.records.filter((r) => r.type === 'A').map((r) => `${r.name} ${r.data}`);
    expect(a).toContain('dual.apps.svc.cluster.local. 10.96.100.100');
    const reply = await dnsQuery(server.port, 'dual.apps.svc.cluster.local', 'A');
    expect(reply.answers.filter((x) => x.type === 'A').map((x) => String(x.data))).toEqual(['10.96.100.100']);
  });
});

describe('clusterdns serve --ui follows reloads', () => {
  const tree = copyExamples();
  let server: RunningServer;
  let uiPort: number;
  beforeAll(async () => {
    uiPort = await freePort();
    server = await startServer(['--conf', 'examples/Corefile', '--manifests', tree.manifests, '--ui', String(uiPort)], { timeoutMs: 60000 });
  }, 90000);
  afterAll(async () => {
    await server?.stop();
    tree.remove();
  });

  it('reloads the page on SIGHUP: a change event for the open pages, with the next generation', async () => {
    const sse = await events(`http://127.0.0.1:${uiPort}/api/events`);
    try {
      await sse.until('event: hello\ndata: {"generation":1,"ok":true}\n\n');
      expect((await recordsOf(uiPort)).generation).toBe(1);
      // Nothing changed on disk: only the signal can reload the page.
      server.proc.kill('SIGHUP');
      await sse.until('event: change\ndata: {"generation":2,"ok":true}\n\n');
      expect((await recordsOf(uiPort)).generation).toBe(2);
      await expect.poll(() => server.logs.some((l) => l.includes('"msg":"page reloaded"') && l.includes('"signal":"SIGHUP"'))).toBe(true);
    } finally {
      sse.close();
    }
  }, 60000);

  it('shows a changed manifest after SIGHUP, as DNS answers it', async () => {
    const sse = await events(`http://127.0.0.1:${uiPort}/api/events`);
    try {
      await sse.until('event: hello\n');
      const before = (await recordsOf(uiPort)).generation;
      const fresh = (r: RecordsResponse): string[] =>
        r.namespaces
          .find((n) => n.name === 'apps')
          ?.objects.find((o) => o.kind === 'Service' && o.name === 'fresh')
          ?.records.filter((x) => x.type === 'A')
          .map((x) => x.data) ?? [];
      expect(fresh(await recordsOf(uiPort))).toEqual([]);
      const tmp = path.join(tree.dir, 'fresh.yaml.tmp');
      writeFileSync(tmp, 'apiVersion: v1\nkind: Service\nmetadata: {name: fresh, namespace: apps}\nspec:\n  clusterIP: 10.96.77.77\n  ports: [{port: 80}]\n');
      renameSync(tmp, path.join(tree.manifests, 'fresh.yaml'));
      server.proc.kill('SIGHUP');
      await sse.until(`event: change\ndata: {"generation":${before + 1},"ok":true}\n\n`);
      await expect.poll(async () => fresh(await recordsOf(uiPort)), { timeout: 30_000 }).toEqual(['10.96.77.77']);
      expect((await recordsOf(uiPort)).generation).toBeGreaterThan(before);
      await expect
        .poll(async () => (await dnsQuery(server.port, 'fresh.apps.svc.cluster.local', 'A')).answers.map((a) => String(a.data)), { timeout: 30_000 })
        .toEqual(['10.96.77.77']);
    } finally {
      sse.close();
    }
  }, 60000);
});
