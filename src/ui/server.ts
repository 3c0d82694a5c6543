// `clusterdns ui`: one read-only page over the cluster's DNS. The App is built as `records` builds
// it, the manifests are watched as `sync --watch` watches them, and a change (or `reload()`, which
// `serve --ui` calls on SIGHUP) reloads the App and tells the open pages (server-sent events) to
// fetch again. Every response carries a strict Content-Security-Policy and is gzipped when the
// client accepts it; only GET and HEAD are answered; no file but the manifests the loader reads is
// ever served.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import { buildApp, type App } from '../app.js';
import type { ClusterOptions } from '../cluster/model/model.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from '../cli/options.js';
import { defaultManifestLimits } from '../cluster/model/limits.js';
import { ManifestWatcher } from '../cluster/read/watch.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits, type OpenRoute, openRoute, parseHttpAddress, type RouteHandler } from '../pkg/http.js';
import { INDEX_HTML, STYLE_CSS, builtPageScript } from './assets.js';
import { manifestFiles, manifestPaths, modelOf, recordsView } from './data.js';
import { BadRequest, resolveView } from './resolve.js';
import { encode, type Encoded, sendEncoded } from './encode.js';
import { generationCache } from './generation-cache.js';
import { LIBCS } from '../resolver/types.js';
import type { ChangeEvent, DiffSourcesResponse, ErrorResponse, InfoResponse, ManifestResponse, PodsResponse } from './types.js';
import { type DiffSource, openDiff, servedSources, type UiDiff } from './diff.js';

export const DEFAULT_UI_LISTEN = '127.0.0.1:8053';
export const DEFAULT_SSE_CLIENTS = 16;
export const DEFAULT_HEARTBEAT_MS = 15_000;

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface UiOptions {
  flags: ClusterFlags;
  /** HOST:PORT; default 127.0.0.1:8053. */
  listen?: string;
  log: Logger;
  /** Pages subscribed to /api/events at once; one more gets 503. */
  maxSseClients?: number;
  heartbeatMs?: number;
  /** How often the manifests are looked at, beneath the file system events (ms). */
  watchIntervalMs?: number;
  httpLimits?: Partial<HttpLimits>;
  /** The page script; default the one the build wrote (dist/ui/page.mjs). */
  pageScript?: string;
  /** Start with a Diff: Records and Resolve then show its NEW side (flags.manifests is not read). */
  diff?: DiffSource;
  /**
   * The server the page is served beside (`serve --ui`): the page's App reads the server's
   * manifest feeds (one load for both; AppOptions.manifestFeedsOf), loaded with the server's
   * cluster options, which must then be these.
   */
  beside?: { readonly app: App; readonly cluster: Partial<ClusterOptions> };
}

export interface UiServer {
  readonly port: number;
  /** http://HOST:PORT/ */
  readonly url: string;
  /** Bumped by every applied reload. */
  readonly generation: number;
  /**
   * Loads the Corefile and manifests again, as a change the watch sees does (`serve --ui` calls it
   * on SIGHUP and SIGUSR1), and tells the open pages. False when they did not load (the page keeps
   * the last good data) or the page is closed.
   */
  reload(reason: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Names of this machine's loopback interface: the default, and what needs no warning. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** Sends a body made for this request, gzipped when the client accepts it. */
async function send(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  type: string,
  body: string | Encoded,
  extra: Record<string, string> = {},
): Promise<void> {
  const encoded = typeof body === 'string' ? await encode(body) : body;
  sendEncoded(req, res, status, { ...SECURITY_HEADERS, 'content-type': type, ...extra }, encoded);
}

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const sendJson = (req: http.IncomingMessage, res: http.ServerResponse, status: number, value: unknown): Promise<void> =>
  send(req, res, status, JSON_TYPE, JSON.stringify(value));
const sendError = (req: http.IncomingMessage, res: http.ServerResponse, status: number, error: string): Promise<void> =>
  sendJson(req, res, status, { error } satisfies ErrorResponse);

/** A body made once, encoded when first sent. */
function once(make: () => string): () => Promise<Encoded> {
  let made: Promise<Encoded> | undefined;
  return () => (made ??= encode(make()));
}

/** Wraps a handler: GET and HEAD only (Node sends no body for HEAD), anything else 405. */
function readOnly(handler: (req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams) => void | Promise<void>): RouteHandler {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(req, res, 405, 'text/plain; charset=utf-8', 'method not allowed: this page is read-only\n', { allow: 'GET, HEAD' });
    const query = new URL(req.url ?? '/', 'http://ui.invalid').searchParams;
    try {
      await handler(req, res, query);
    } catch (e) {
      if (res.headersSent) res.end();
      else await sendError(req, res, e instanceof BadRequest ? 400 : 500, (e as Error).message);
    }
  };
}

export async function startUi(opts: UiOptions): Promise<UiServer> {
  const { log } = opts;
  const listen = opts.listen ?? DEFAULT_UI_LISTEN;
  const addr = parseHttpAddress(listen);
  if (typeof addr === 'string') throw new Error(`--listen ${addr}`);
  // Each path is a route of one shared listener, found again by its port: port 0 would open one per path.
  if (addr.port === 0) throw new Error(`--listen ${listen}: give a port (0 is not supported)`);
  if (!isLoopbackHost(addr.host)) {
    log.warn({ listen }, 'the page is served beyond this machine (--listen is not a loopback address): anyone who reaches it reads every manifest it shows');
  }
  const pageScript = opts.pageScript ?? builtPageScript();
  const indexHtml = once(() => INDEX_HTML);
  const styleCss = once(() => STYLE_CSS);
  const pageJs = once(() => pageScript ?? '');
  const maxSse = opts.maxSseClients ?? DEFAULT_SSE_CLIENTS;
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...opts.httpLimits };
  const diff: UiDiff | undefined = opts.diff ? await openDiff(opts.diff, opts.flags) : undefined;
  // With a diff the page is about NEW: the App, the watcher and the manifest links are its tree.
  const flags: ClusterFlags = diff
    ? { ...opts.flags, manifests: [...diff.new.manifests], ...(diff.new.conf !== undefined ? { conf: diff.new.conf } : {}) }
    : opts.flags;
  let app: App;
  try {
    app = await buildApp({
      conf: flags.conf,
      manifests: flags.manifests,
      port: 53,
      logger: log,
      cluster: opts.beside?.cluster ?? clusterOptions(flags),
      corefileLimits: corefileLimits(flags),
      oneShot: true,
      answerCacheBytes: 0,
      ...(opts.beside ? { manifestFeedsOf: opts.beside.app } : {}),
    });
  } catch (e) {
    diff?.close();
    throw e;
  }
  let generation = 1;
  let paths = manifestPaths(app, flags);
  let files = manifestFiles(paths);
  // The records, made once per generation for every client (at 10k Services a 14 MB JSON text,
  // 0.9 MB gzipped), and made as soon as the page is served (below): the first page need not
  // wait for all of it.
  const recordsNow = generationCache(
    () => generation,
    async (made) => {
      const started = performance.now();
      const body = await encode(JSON.stringify(await recordsView(app, flags, made)));
      log.debug({ generation: made, ms: Math.round(performance.now() - started), bytes: body.identity.length, gzipBytes: body.gzip?.length }, 'records made');
      return body;
    },
  );

  // The diff, made when first asked for (it loads both trees).
  const diffNow = diff
    ? generationCache(
        () => generation,
        () => diff.json().then(encode),
      )
    : undefined;

  // Which of the diff's file:line the page may link, per generation (the served files change with NEW).
  let sources: DiffSourcesResponse | undefined;
  const sourcesNow = (d: UiDiff): DiffSourcesResponse => {
    if (sources?.generation !== generation)
      sources = { generation, new: servedSources(d.new, paths, files), old: servedSources(d.old, d.old.manifests, files) };
    return sources;
  };

  // Server-sent events: the open pages, each told of every reload.
  const clients = new Set<http.ServerResponse>();
  const broadcast = (event: string, data: unknown): void => {
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const c of clients) c.write(text);
  };
  const heartbeat = setInterval(() => {
    for (const c of clients) c.write(': heartbeat\n\n');
  }, opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  heartbeat.unref();

  const watched = (): string[] => [...paths, ...(flags.conf ? [flags.conf] : [])];
  let watcher: ManifestWatcher;
  let closed = false;
  const reload = async (reason: string): Promise<boolean> => {
    if (closed) return false;
    const ok = await app.reload(reason);
    if (closed) return false;
    if (ok) {
      generation++;
      paths = manifestPaths(app, flags);
      files = manifestFiles(paths);
      // The pages fetch the records on the change event: have them under way already.
      void recordsNow().catch(() => {});
      const now = watched();
      // A Corefile that names other manifest paths: watch those from now on.
      if (now.join('\0') !== watchedPaths.join('\0')) {
        watcher.stop();
        watchedPaths = now;
        watcher = new ManifestWatcher(watchedPaths, opts.watchIntervalMs ?? 1000, onChange);
        watcher.start();
      }
    }
    broadcast('change', { generation, ok } satisfies ChangeEvent);
    return ok;
  };
  const onChange = (): void => void reload('manifests changed');
  let watchedPaths = watched();
  watcher = new ManifestWatcher(watchedPaths, opts.watchIntervalMs ?? 1000, onChange);
  watcher.start();

  /** The loaded manifest file a `file` parameter names, by real path, or undefined (404). */
  const allowedFile = (file: string | null): { real: string; shown: string } | undefined => {
    if (file === null || file === '' || file.length > 4096 || file.includes('\0')) return undefined;
    let real: string;
    try {
      real = realpathSync(path.resolve(file));
    } catch {
      return undefined;
    }
    const shown = files.get(real);
    return shown === undefined ? undefined : { real, shown };
  };

  const routes: [string, RouteHandler][] = [
    ['/', readOnly(async (req, res) => send(req, res, 200, HTML_TYPE, await indexHtml()))],
    [
      '/manifest',
      readOnly(async (req, res, q) => {
        if (!allowedFile(q.get('file'))) return sendError(req, res, 404, 'not a manifest file of this cluster');
        return send(req, res, 200, HTML_TYPE, await indexHtml());
      }),
    ],
    // Browsers ask for it unprompted: no icon, and no 404 in the console.
    ['/favicon.ico', readOnly((_req, res) => void res.writeHead(204, SECURITY_HEADERS).end())],
    ['/style.css', readOnly(async (req, res) => send(req, res, 200, 'text/css; charset=utf-8', await styleCss()))],
    [
      '/page.js',
      readOnly(async (req, res) => {
        if (pageScript === undefined) return send(req, res, 500, 'text/plain; charset=utf-8', 'the page script was not built (npm run build needs esbuild)\n');
        return send(req, res, 200, 'text/javascript; charset=utf-8', await pageJs());
      }),
    ],
    ['/api/info', readOnly((req, res) => sendJson(req, res, 200, (diff ? { diff: { old: diff.old.label, new: diff.new.label } } : {}) satisfies InfoResponse))],
    [
      '/api/diff',
      readOnly(async (req, res) => {
        if (!diffNow) return sendError(req, res, 404, 'No diff: this page was started with one manifest tree.');
        return send(req, res, 200, JSON_TYPE, await diffNow());
      }),
    ],
    [
      '/api/diff-sources',
      readOnly((req, res) => {
        if (!diff) return sendError(req, res, 404, 'No diff: this page was started with one manifest tree.');
        return sendJson(req, res, 200, sourcesNow(diff));
      }),
    ],
    ['/api/records', readOnly(async (req, res) => send(req, res, 200, JSON_TYPE, await recordsNow()))],
    [
      '/api/pods',
      readOnly((req, res) => {
        const model = modelOf(app, flags);
        const pods = (model?.pods ?? []).map((p) => ({ namespace: p.namespace, name: p.name, derived: p.derived === true }));
        const namespaces = [...(model?.namespaces.keys() ?? [])].sort();
        return sendJson(req, res, 200, { generation, pods, namespaces, libcs: LIBCS } satisfies PodsResponse);
      }),
    ],
    [
      '/api/resolve',
      readOnly(async (req, res, q) => {
        const pod = q.get('pod');
        const namespace = q.get('namespace');
        const type = q.get('type');
        const options = q.get('options');
        const view = await resolveView(
          app,
          modelOf(app, flags),
          {
            name: q.get('name') ?? '',
            libc: q.get('libc') ?? 'glibc',
            ...(pod ? { pod } : {}),
            ...(namespace ? { namespace } : {}),
            ...(type ? { type } : {}),
            ...(options !== null ? { options } : {}),
          },
          generation,
        );
        return sendJson(req, res, 200, view);
      }),
    ],
    [
      '/api/manifest',
      readOnly((req, res, q) => {
        const f = allowedFile(q.get('file'));
        if (!f) return sendError(req, res, 404, 'not a manifest file of this cluster');
        const max = flags.maxManifestFileBytes ?? defaultManifestLimits.maxFileBytes;
        if (statSync(f.real).size > max) return sendError(req, res, 404, `larger than --max-manifest-file-bytes (${max})`);
        const lines = readFileSync(f.real, 'utf8').split(/\r?\n/);
        if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
        return sendJson(req, res, 200, { file: f.shown, lines } satisfies ManifestResponse);
      }),
    ],
    [
      '/api/events',
      readOnly(async (req, res) => {
        if (clients.size >= maxSse) return sendError(req, res, 503, `${maxSse} pages are subscribed already (--sse-clients)`);
        res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8' });
        if (req.method === 'HEAD') return void res.end();
        res.write(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ generation, ok: true } satisfies ChangeEvent)}\n\n`);
        clients.add(res);
        res.once('close', () => clients.delete(res));
        return undefined;
      }),
    ],
  ];
  const opened: OpenRoute[] = [];
  try {
    for (const [p, handler] of routes) opened.push(await openRoute(addr, p, handler, limits));
  } catch (e) {
    await Promise.all(opened.map((r) => r.release()));
    watcher.stop();
    clearInterval(heartbeat);
    await app.close();
    diff?.close();
    throw e;
  }
  // After the routes are open and the caller has said where (the next turn of the event loop):
  // the listing's long synchronous stretches would hold both.
  setImmediate(() => void recordsNow().catch(() => {}));
  const port = opened[0]!.port;
  const host =
    addr.host === '' || addr.host === '0.0.0.0' ? '127.0.0.1' : addr.host === '::' ? '[::1]' : addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  return {
    port,
    url: `http://${host}:${port}/`,
    get generation() {
      return generation;
    },
    reload,
    close: async () => {
      closed = true;
      watcher.stop();
      clearInterval(heartbeat);
      for (const c of clients) c.end();
      clients.clear();
      await Promise.all(opened.map((r) => r.release()));
      await app.close();
      diff?.close();
    },
  };
}
