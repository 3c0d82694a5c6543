// `clusterdns ui` over plain HTTP (no browser): read-only, its headers, the files it serves and
// refuses, and the data it sends being what `records` and `resolve` print.
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { records } from '../../src/cli/records.js';
import { resolveCommand } from '../../src/cli/resolver-commands.js';
import { CONTENT_SECURITY_POLICY, DEFAULT_UI_LISTEN, isLoopbackHost, startUi, type UiServer } from '../../src/ui/server.js';
import type { RecordsResponse, ResolveResponse } from '../../src/ui/types.js';
import { copyExamples, exampleCorefile, pageScript, startTestUi } from './ui-helpers.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(url: string, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('clusterdns ui over HTTP', () => {
  const tree = copyExamples();
  // A file in the manifest tree the loader does not read (not .yaml/.json): never served.
  writeFileSync(path.join(tree.manifests, 'notes.txt'), 'secret\n');
  const flags = { conf: exampleCorefile, manifests: [tree.manifests] };
  let ui: UiServer;
  beforeAll(async () => {
    ui = await startTestUi(flags, { maxSseClients: 1 });
  });
  afterAll(async () => {
    await ui?.close();
    tree.remove();
  });

  it('answers GET with a strict Content-Security-Policy, nosniff, and no inline script or style', async () => {
    const r = await request(ui.url);
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.body).toContain('<script type="module" src="/page.js"></script>');
    // Every script has a src, no element carries a style or an on* handler, no <style> block.
    expect(r.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(r.body).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const p of ['/page.js', '/style.css', '/api/records']) {
      const x = await request(new URL(p, ui.url).href);
      expect(x.status, p).toBe(200);
      expect(x.headers['content-security-policy'], p).toBe(CONTENT_SECURITY_POLICY);
    }
  });

  it('is read-only: POST, PUT and DELETE get 405, HEAD gets the headers without a body', async () => {
    for (const [p, method] of [
      ['/', 'POST'],
      ['/api/records', 'PUT'],
      ['/api/resolve?name=web', 'DELETE'],
      ['/api/events', 'POST'],
    ] as const) {
      const r = await request(new URL(p, ui.url).href, method);
      expect(r.status, `${method} ${p}`).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
    const head = await request(ui.url, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  });

  it('serves a loaded manifest file, and nothing else: /etc/passwd, ../ out of the tree, a non-manifest file in it', async () => {
    const loaded = path.join(tree.manifests, 'apps.yaml');
    const ok = await request(new URL(`/api/manifest?file=${encodeURIComponent(loaded)}`, ui.url).href);
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.body) as { lines: string[] }).lines[0]).toBe('apiVersion: v1');
    const page = await request(new URL(`/manifest?file=${encodeURIComponent(loaded)}&line=1`, ui.url).href);
    expect(page.status).toBe(200);
    const refused = [
      '/etc/passwd',
      `${tree.manifests}/../../../../etc/passwd`,
      `${tree.manifests}/../manifests/../../../etc/hostname`,
      '../package.json',
      path.join(tree.manifests, 'notes.txt'),
      tree.manifests,
      '',
    ];
    for (const file of refused) {
      for (const route of ['/manifest', '/api/manifest']) {
        const r = await request(new URL(`${route}?file=${encodeURIComponent(file)}`, ui.url).href);
        expect(r.status, `${route} ${file}`).toBe(404);
        expect(r.body).not.toContain('root:');
        expect(r.body).not.toContain('secret');
      }
    }
    // A raw ../ in the path itself is no route either.
    const noRoute = await request(new URL('/api/../../etc/passwd', ui.url).href);
    expect(noRoute.status).toBe(404);
    expect(noRoute.headers['x-content-type-options']).toBe('nosniff');
    expect(noRoute.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect((await request(`${ui.url}manifest/../../etc/passwd`)).status).toBe(404);
  });

  it('lists the records `clusterdns records --output json` prints, each once, under the object that makes it', async () => {
    const out = new Collect();
    await records({ ...flags, output: 'json', logLevel: 'silent' }, out);
    const cli = (JSON.parse(out.text) as { name: string; type: string; data: string }[]).map((r) => `${r.name.toLowerCase()} ${r.type} ${r.data}`).sort();
    const view = JSON.parse((await request(new URL('/api/records', ui.url).href)).body) as RecordsResponse;
    const shown = view.namespaces.flatMap((ns) => ns.objects.flatMap((o) => o.records.map((r) => `${r.name} ${r.type} ${r.data}`))).sort();
    expect(shown).toEqual(cli);
    expect(view.recordCount).toBe(cli.length);
    const apps = view.namespaces.find((n) => n.name === 'apps')!;
    const nginx = apps.objects.find((o) => o.kind === 'Service' && o.name === 'nginx')!;
    // As `check` names files: relative to the current directory, absolute outside it.
    expect(nginx.source).toEqual({ file: path.join(tree.manifests, 'apps.yaml'), line: 10 });
    expect(nginx.records.map((r) => `${r.name} ${r.type}`)).toContain('nginx.apps.svc.cluster.local. A');
    // An endpoint's hostname record goes to the pod behind the endpoint.
    const web0 = apps.objects.find((o) => o.kind === 'Pod' && o.name === 'web-0')!;
    expect(web0.records.map((r) => r.name)).toContain('web-0.nginx.apps.svc.cluster.local.');
  });

  it("runs the walk `clusterdns resolve` prints, for a musl and a glibc pod's lookup", async () => {
    for (const libc of ['musl', 'glibc']) {
      const out = new Collect();
      const trace = await resolveCommand(
        'kubernetes.default',
        { manifests: flags.manifests, conf: flags.conf, pod: 'apps/web-0', libc, json: true },
        out,
        new Collect(),
      );
      const r = await request(new URL(`/api/resolve?pod=apps%2Fweb-0&name=kubernetes.default&libc=${libc}`, ui.url).href);
      expect(r.status).toBe(200);
      const view = JSON.parse(r.body) as ResolveResponse;
      expect(view.queries.map((q) => `${q.name} ${q.type} ${q.rcode} ${q.answers.join(',')}`)).toEqual(
        trace.queries.map((q) => `${q.name} ${q.type} ${q.rcode} ${q.answers.join(',')}`),
      );
      expect(view.result).toMatchObject({ status: trace.result.status, answers: trace.result.answers });
      // The first search domain is the pod's namespace; the second one answers.
      expect(view.queries[0]).toMatchObject({
        name: 'kubernetes.default.apps.svc.cluster.local.',
        searchDomain: 'apps.svc.cluster.local',
        outcome: 'NXDOMAIN',
      });
      expect(view.queries.find((q) => q.outcome === 'answer')).toMatchObject({ searchDomain: 'svc.cluster.local' });
      expect(view.fixes.join('\n')).toContain('trailing dot');
    }
  });

  it('refuses a walk it cannot run with 400 and the reason', async () => {
    const bad = await request(new URL('/api/resolve?name=web&libc=bionic', ui.url).href);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatch(/libc/);
    const noPod = await request(new URL('/api/resolve?name=web&pod=apps%2Fnope', ui.url).href);
    expect(noPod.status).toBe(400);
    expect(JSON.parse(noPod.body).error).toMatch(/no pod apps\/nope/);
  });

  it('bounds the pages subscribed to live updates: one past --sse-clients gets 503', async () => {
    const first = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(new URL('/api/events', ui.url), resolve).on('error', reject));
    try {
      expect(first.statusCode).toBe(200);
      expect(first.headers['content-type']).toMatch(/^text\/event-stream/);
      const second = await request(new URL('/api/events', ui.url).href);
      expect(second.status).toBe(503);
    } finally {
      first.destroy();
    }
  });
});

describe('clusterdns ui live updates', () => {
  it('sends a heartbeat, and a change event with the next generation when a manifest changes', async () => {
    const tree = copyExamples();
    const ui = await startTestUi({ conf: exampleCorefile, manifests: [tree.manifests] }, { heartbeatMs: 50 });
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(new URL('/api/events', ui.url), resolve).on('error', reject));
    try {
      let text = '';
      res.setEncoding('utf8');
      const seen = (what: string): Promise<void> =>
        new Promise((resolve) => {
          const look = (): void => {
            if (!text.includes(what)) return;
            res.off('data', onData);
            resolve();
          };
          const onData = (c: string): void => {
            text += c;
            look();
          };
          res.on('data', onData);
          look();
        });
      await seen('event: hello\ndata: {"generation":1,"ok":true}\n\n');
      await seen(': heartbeat\n\n');
      writeFileSync(
        path.join(tree.manifests, 'fresh.yaml'),
        'apiVersion: v1\nkind: Service\nmetadata: {name: fresh, namespace: apps}\nspec:\n  ports: [{port: 80}]\n',
      );
      await seen('event: change\ndata: {"generation":2,"ok":true}\n\n');
      const view = JSON.parse((await request(new URL('/api/records', ui.url).href)).body) as RecordsResponse;
      expect(view.generation).toBe(2);
      expect(view.namespaces.find((n) => n.name === 'apps')!.objects.some((o) => o.kind === 'Service' && o.name === 'fresh')).toBe(true);
    } finally {
      res.destroy();
      await ui.close();
      tree.remove();
    }
  });
});

describe('clusterdns ui listen address', () => {
  it('is loopback unless told otherwise', async () => {
    expect(DEFAULT_UI_LISTEN).toBe('127.0.0.1:8053');
    expect(isLoopbackHost('127.0.0.1') && isLoopbackHost('::1') && isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('') || isLoopbackHost('0.0.0.0') || isLoopbackHost('192.0.2.1')).toBe(false);
    const warnings: string[] = [];
    const sink = new Writable({
      write: (c, _e, done) => {
        warnings.push(String(c));
        done();
      },
    });
    const log = pino({ level: 'warn' }, sink);
    const ui = await startUi({ flags: { conf: exampleCorefile, manifests: ['examples/manifests'] }, log, pageScript: await pageScript() });
    try {
      expect(ui.url).toBe('http://127.0.0.1:8053/');
      expect((await request(ui.url)).status).toBe(200);
      expect(warnings).toEqual([]);
    } finally {
      await ui.close();
    }
  });
});
