// `clusterdns ui`'s responses at scale: gzip when the client accepts it (Vary, HEAD with the
// headers GET gets), and the records made once per generation, as soon as the page is served
// and again as soon as a reload is applied, for every client (the server's debug log says when).
import http from 'node:http';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsGzip, MIN_GZIP_BYTES } from '../../src/ui/encode.js';
import { CONTENT_SECURITY_POLICY, type UiServer } from '../../src/ui/server.js';
import type { RecordsResponse } from '../../src/ui/types.js';
import { copyExamples, exampleCorefile, startTestUi } from './ui-helpers.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request with exactly these headers (fetch would add Accept-Encoding and decode). */
function request(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The `records made` lines the server logged, as { generation }. */
function recordsMade(lines: string[]): number[] {
  return lines.map((l) => JSON.parse(l) as { msg: string; generation: number }).flatMap((l) => (l.msg === 'records made' ? [l.generation] : []));
}

describe('clusterdns ui responses', () => {
  const tree = copyExamples();
  const lines: string[] = [];
  const sink = new Writable({
    write: (c, _e, done) => {
      lines.push(...String(c).split('\n').filter(Boolean));
      done();
    },
  });
  let ui: UiServer;
  beforeAll(async () => {
    ui = await startTestUi({ conf: exampleCorefile, manifests: [tree.manifests] }, { log: pino({ level: 'debug' }, sink) });
  });
  afterAll(async () => {
    await ui?.close();
    tree.remove();
  });

  it('makes the records as soon as it serves, before any request, and once for every client of a generation', async () => {
    await expect.poll(() => recordsMade(lines), { timeout: 30_000 }).toEqual([1]);
    const urls = Array.from({ length: 6 }, () => `${ui.url}api/records`);
    const replies = await Promise.all(urls.map((u, i) => request(u, i % 2 === 0 ? { 'accept-encoding': 'gzip' } : {})));
    const texts = replies.map((r) => (r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.body).toString());
    expect(new Set(texts).size).toBe(1);
    expect((JSON.parse(texts[0]!) as RecordsResponse).generation).toBe(1);
    expect(recordsMade(lines)).toEqual([1]);

    // A reload: generation 2 is made without a request, once.
    const tmp = path.join(tree.dir, 'fresh.yaml.tmp');
    writeFileSync(tmp, 'apiVersion: v1\nkind: Service\nmetadata: {name: fresh, namespace: apps}\nspec:\n  ports: [{port: 80}]\n');
    renameSync(tmp, path.join(tree.manifests, 'fresh.yaml'));
    await expect.poll(() => recordsMade(lines), { timeout: 30_000 }).toEqual([1, 2]);
    const after = await Promise.all([request(`${ui.url}api/records`), request(`${ui.url}api/records`, { 'accept-encoding': 'gzip' })]);
    const view = JSON.parse(after[0].body.toString()) as RecordsResponse;
    expect(view.generation).toBe(2);
    expect(view.namespaces.find((n) => n.name === 'apps')?.objects.some((o) => o.name === 'fresh')).toBe(true);
    expect(gunzipSync(after[1].body).toString()).toBe(after[0].body.toString());
    expect(recordsMade(lines)).toEqual([1, 2]);
  });

  it('gzips what is worth it when the client accepts gzip, says it varies by Accept-Encoding, and keeps the CSP', async () => {
    for (const p of ['api/records', 'page.js', 'style.css']) {
      const plain = await request(`${ui.url}${p}`);
      const zipped = await request(`${ui.url}${p}`, { 'accept-encoding': 'gzip, deflate, br' });
      expect(plain.status, p).toBe(200);
      expect(plain.headers['content-encoding'], p).toBeUndefined();
      expect(plain.headers.vary, p).toBe('Accept-Encoding');
      expect(Number(plain.headers['content-length']), p).toBe(plain.body.length);
      expect(zipped.headers['content-encoding'], p).toBe('gzip');
      expect(zipped.headers.vary, p).toBe('Accept-Encoding');
      expect(zipped.headers['content-security-policy'], p).toBe(CONTENT_SECURITY_POLICY);
      expect(zipped.headers['content-type'], p).toBe(plain.headers['content-type']);
      expect(Number(zipped.headers['content-length']), p).toBe(zipped.body.length);
      expect(zipped.body.length, p).toBeLessThan(plain.body.length);
      expect(gunzipSync(zipped.body).equals(plain.body), p).toBe(true);
    }
    // Too small to be worth it: sent as it is, whatever the client accepts.
    for (const p of ['api/info', '']) {
      const small = await request(`${ui.url}${p}`, { 'accept-encoding': 'gzip' });
      expect(small.status, p).toBe(200);
      expect(small.body.length, p).toBeLessThan(MIN_GZIP_BYTES);
      expect(small.headers['content-encoding'], p).toBeUndefined();
      expect(small.headers.vary, p).toBe('Accept-Encoding');
    }
  });

  it('sends gzip only when accepted: q=0 refuses it, * accepts it', async () => {
    const url = `${ui.url}api/records`;
    for (const [accept, gz] of [
      ['gzip;q=0, identity', false],
      ['br', false],
      ['identity', false],
      ['*', true],
      ['*;q=0', false],
      ['br;q=1, GZIP;q=0.5', true],
      ['gzip;q=0, *', false],
    ] as const) {
      const r = await request(url, { 'accept-encoding': accept });
      expect(r.headers['content-encoding'], accept).toBe(gz ? 'gzip' : undefined);
      expect(acceptsGzip(accept), accept).toBe(gz);
    }
  });

  it('answers HEAD with the headers GET gets, gzipped length included, and no body', async () => {
    for (const headers of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
      const get = await request(`${ui.url}api/records`, headers);
      const head = await request(`${ui.url}api/records`, headers, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      for (const h of ['content-length', 'content-encoding', 'content-type', 'vary', 'content-security-policy'])
        expect(head.headers[h], `${JSON.stringify(headers)} ${h}`).toBe(get.headers[h]);
    }
  });
});
