// Assembles a running clusterdns from a Corefile, manifests and command-line options:
// server blocks -> plugin chains -> routers per listen address -> UDP/TCP listeners.
import dnsPacket from 'dns-packet';
import type { Packet } from 'dns-packet';
import pino, { type Logger } from 'pino';
import {
  loadCorefileCollect,
  parseCorefileCollect,
  duplicateKeyErrors,
  corefileErrors,
  defaultCorefileLimits,
  enoughErrors,
  throwErrors,
  CorefileError,
  type CorefileLimits,
  type ServerBlock,
} from './chain/corefile.js';
import { Chain, Router } from './chain/chain.js';
import { closeAll, Registry, type BlockContext, type RuntimeOptions, type SharedResource } from './chain/registry.js';
import type { DnsRequest, Plugin } from './chain/plugin.js';
import { emptyResponse } from './chain/plugin.js';
import { isClusterDataProvider } from './chain/cluster-data.js';
import { Rcode } from './dns/records.js';
import { QueryHandler } from './server/handler.js';
import type { QueryObserver } from './chain/plugin.js';
import { queryLogger } from './server/querylog.js';
import { AppMetrics, serverLabel, type AnswerCacheReading } from './metrics/index.js';
import { Lameduck } from './chain/lameduck.js';
import { immediateGate, withLoadPermit, type LoadPermitGate } from './chain/load-permit.js';
import { listen, type Listener } from './server/listen.js';
import { startPlugin } from './server/plugin-start.js';
import { MANIFEST_FEED_KEY } from './cluster/feed-thread.js';
import { defaultClusterOptions, type ClusterModel, type ClusterOptions } from './cluster/model/model.js';
import { ManifestError } from './cluster/model/finding.js';
import { plugins } from './plugins/index.js';
import { loadManifests } from './cluster/load.js';
import { pushAll } from './pkg/arrays.js';
import { DEFAULT_MAX_LOOKUP_DEPTH } from './server/limits.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './pkg/http.js';
import { defaultCorefile, type AppOptions, type ListenerInfo, type ListenSpec } from './app-options.js';

export { DEFAULT_MAX_LOOKUP_DEPTH };
export { defaultCorefile, type AppOptions, type ListenerInfo, type ListenSpec } from './app-options.js';

// The App's metrics reach plugins through their setup context. The chain knows no metrics (it sits
// below them), so the field is added here, where the App that owns them is.
declare module './chain/registry.js' {
  interface BlockContext {
    /** The App's metrics registry and every metric on it: record here, never on another App's. */
    readonly metrics: AppMetrics;
  }
}

/** A warn logger that writes at most one line per interval and counts the ones it held back. */
function throttled(log: Logger, intervalMs: number): (fields: object, msg: string) => void {
  let last = 0;
  let held = 0;
  return (fields, msg) => {
    const now = Date.now();
    if (now - last < intervalMs) {
      held++;
      return;
    }
    last = now;
    log.warn({ ...fields, suppressed: held }, msg);
    held = 0;
  };
}

function defaultRegistry(): Registry {
  const registry = new Registry();
  for (const p of plugins) registry.register(p);
  return registry;
}

/** The hooks plugins registered through BlockContext.onLoad, onStart and onClose. */
interface Lifecycle {
  readonly load: (() => Promise<void>)[];
  readonly start: (() => void)[];
  readonly close: ((info?: { reload?: boolean }) => void)[];
}

const newLifecycle = (): Lifecycle => ({ load: [], start: [], close: [] });

/** Runs close hooks once each, ignoring their errors: what is being closed is going anyway. */
function runClose(life: Lifecycle, info?: { reload?: boolean }): void {
  for (const hook of life.close.splice(0)) {
    try {
      hook(info);
    } catch {
      // Best effort.
    }
  }
}

/** One built configuration: what the Corefile turned into, swapped in whole on a reload. */
interface Config {
  blocks: ServerBlock[];
  life: Lifecycle;
  specs: ListenSpec[];
  chains: Chain[];
  /** One per listen spec, in the same order. */
  handlers: QueryHandler[];
  /** Every zone of every block, for internal lookups through the server. */
  router: Router;
}

const EMPTY: Config = { blocks: [], life: newLifecycle(), specs: [], chains: [], handlers: [], router: new Router([]) };

export class App {
  private listeners: Listener[] = [];
  /** listen() was called: a reload that changes the listeners opens the new ones (else none). */
  private listening = false;
  private config: Config = EMPTY;
  /** The reload running now, and the one asked for while it runs (one, however often asked). */
  private reloading: Promise<boolean> | undefined;
  private queuedReload: Promise<boolean> | undefined;
  /** Answer-cache hits and evictions of handlers replaced by reloads, by `server` label. */
  private readonly retiredCacheCounts = new Map<string, { hits: number; evictions: number }>();
  /** Corefile reloads that failed and kept the running configuration. */
  reloadFailures = 0;
  /** What plugins share through BlockContext.shared, with its holders. */
  private readonly resources = new Map<string, { value: { close(): void }; refs: number }>();
  /** This App's metrics: another App in the same process counts apart. */
  readonly metrics: AppMetrics;
  /** Held while health waits out its lameduck; ready answers 503 meanwhile. */
  readonly lameduck = new Lameduck();
  readonly corefileLimits: Readonly<CorefileLimits>;
  readonly httpLimits: Readonly<HttpLimits>;
  private readonly loadPermitGate: LoadPermitGate;

  /** Use buildApp: an App is born empty and gets its first configuration from it. */
  constructor(
    /** How to build this App again (a reload). */
    readonly options: AppOptions,
    readonly log: Logger,
  ) {
    this.metrics = options.metrics ?? new AppMetrics();
    this.corefileLimits = Object.freeze({ ...defaultCorefileLimits, ...options.corefileLimits });
    this.httpLimits = Object.freeze({ ...DEFAULT_HTTP_LIMITS, ...options.httpLimits });
    this.loadPermitGate = options.loadPermitGate ?? immediateGate;
  }

  /** Runs `load` holding one of this App's load permits. */
  withLoadPermit<T>(what: string, load: () => Promise<T>): Promise<T> {
    return withLoadPermit(this.loadPermitGate, what, load);
  }

  /** The /metrics body: this App's registry, or what AppOptions.scrapeMetrics gives. */
  scrapeMetrics(): Promise<{ text: string; contentType: string }> {
    return this.options.scrapeMetrics ? this.options.scrapeMetrics() : this.metrics.scrape();
  }

  /** An App with its first configuration built (loads awaited), not yet listening. */
  static async build(opts: AppOptions): Promise<App> {
    const app = new App(opts, opts.logger ?? pino({ level: 'silent' }));
    app.config = await buildConfig(app);
    return app;
  }

  get blocks(): readonly ServerBlock[] {
    return this.config.blocks;
  }

  get chains(): readonly Chain[] {
    return this.config.chains;
  }

  /** The listen addresses and ports of the running configuration, in listener order. */
  get specs(): readonly ListenSpec[] {
    return this.config.specs;
  }

  get queryHandlers(): readonly QueryHandler[] {
    return this.config.handlers;
  }

  /**
   * An internal lookup (CoreDNS's upstream package): through the running configuration, from the
   * top of the chain of whichever block serves the name. Plugins of a configuration being built
   * are not serving yet, so they never see another configuration than their own.
   */
  route(qname: string): Chain | undefined {
    return this.config.router.chainFor(qname);
  }

  /** BlockContext.shared: the resource under `key`, made by `create` when nobody holds one. */
  share<T extends { close(): void }>(key: string, create: () => T): SharedResource<T> {
    let r = this.resources.get(key);
    if (!r) {
      r = { value: create(), refs: 0 };
      this.resources.set(key, r);
    }
    const held = r;
    held.refs++;
    let released = false;
    return {
      value: held.value as T,
      release: () => {
        if (released) return;
        released = true;
        if (--held.refs > 0 || this.resources.get(key) !== held) return;
        this.resources.delete(key);
        held.value.close();
      },
    };
  }

  /** Forgets every encoded answer: a plugin's data changed. */
  invalidate(): void {
    for (const h of this.config.handlers) h.clearCache();
  }

  /**
   * Each listener's answer cache, for /metrics: the running handlers' figures plus the hits and
   * evictions of the handlers earlier configurations retired, so those counters never go back.
   */
  answerCacheReadings(): AnswerCacheReading[] {
    return this.config.handlers.map((h, i) => {
      const server = this.cacheServerLabel(i);
      const stats = h.cacheStats();
      const retired = this.retiredCacheCounts.get(server);
      return {
        server,
        entries: stats.entries,
        bytes: stats.bytes,
        hits: stats.hits + (retired?.hits ?? 0),
        evictions: stats.evictions + (retired?.evictions ?? 0),
      };
    });
  }

  /** The dns metrics' `server` label of listener i (its bound port, so port 0 shows the real one). */
  private cacheServerLabel(i: number): string {
    const spec = this.config.specs[i]!;
    const bound = spec.address === '::' ? '' : spec.address;
    return serverLabel(bound, this.listeners[i]?.port ?? spec.port, spec.transport);
  }

  /** The Corefile's name for messages; undefined for the built-in default. */
  private get corefileName(): string | undefined {
    return this.options.conf ?? (this.options.corefileText !== undefined ? 'the Corefile' : undefined);
  }

  /** Binds every listener. Resolves with where each one listens. */
  async listen(): Promise<ListenerInfo[]> {
    this.listening = true;
    this.metrics.exportAnswerCaches(() => this.answerCacheReadings());
    const out: ListenerInfo[] = [];
    try {
      const { specs } = this.config;
      for (let i = 0; i < specs.length; i++) {
        const spec = specs[i]!;
        const l = await listen(spec, () => this.config.handlers[i]!, this.log, this.options.tcp);
        this.listeners.push(l);
        out.push({ address: l.address, port: l.port, transport: l.transport, zones: spec.entries.map((e) => e.zone) });
      }
      const logged = new Set<string>();
      for (const chain of this.chains) for (const p of chain.plugins) await startPlugin(p, this.corefileName, this.log, logged);
      for (const hook of this.config.life.start) hook();
    } catch (err) {
      await this.close();
      throw err;
    }
    return out;
  }

  /** Zones served by each listener, by listener index (for tools that query in process). */
  listenerZones(): Map<number, string[]> {
    return new Map(this.config.specs.map((s, i) => [i, s.entries.map((e) => e.zone)]));
  }

  /** Runs one query through the full handler path (wire in, wire out) without sockets. */
  async query(
    name: string,
    type: string,
    opts: { do?: boolean; udpSize?: number; protocol?: 'udp' | 'tcp'; listener?: number; client?: string } = {},
  ): Promise<Packet> {
    const msg = dnsPacket.encode({
      id: 4242,
      type: 'query',
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name, type: type as 'A', class: 'IN' }],
      additionals:
        opts.udpSize !== undefined || opts.do
          ? [{ type: 'OPT', name: '.', udpPayloadSize: opts.udpSize ?? 1232, flags: opts.do ? dnsPacket.DNSSEC_OK : 0 } as never]
          : [],
    });
    const handler = this.config.handlers[opts.listener ?? 0];
    if (!handler) throw new Error('no server block to query');
    // The client address matters to plugins that identify the asking pod (autopath).
    const client = { address: opts.client ?? '127.0.0.1', port: 5353 };
    const reply = await handler.handle(msg, opts.protocol ?? 'tcp', client, client);
    if (!reply) throw new Error(`no reply for ${name} ${type}`);
    return dnsPacket.decode(reply);
  }

  /** Runs a message exactly as given (malformed ones too) through the handler path; the reply's bytes, if any. */
  async queryWire(msg: Buffer, opts: { protocol?: 'udp' | 'tcp'; listener?: number; client?: string } = {}): Promise<Buffer | undefined> {
    const handler = this.config.handlers[opts.listener ?? 0];
    if (!handler) throw new Error('no server block to query');
    const client = { address: opts.client ?? '127.0.0.1', port: 5353 };
    return (await handler.handle(msg, opts.protocol ?? 'udp', client, client)) ?? undefined;
  }

  /**
   * Builds the server again from the same options (a changed Corefile, manifests, zone files)
   * and swaps it in. Listeners that stay the same keep their sockets, so no query is lost; a
   * configuration that fails to build is logged with its file and line and the running one
   * keeps serving. Resolves true when the new configuration is live.
   *
   * A reload asked for while one runs is not dropped: that one may have read the files before
   * the change that prompted the request. It runs once more when the running one ends, for every
   * request that arrived meanwhile (they coalesce: the next build reads the newest files), as
   * CoreDNS serialises its restarts; all those callers get that reload's result.
   */
  reload(reason: string): Promise<boolean> {
    if (this.queuedReload) return this.queuedReload;
    if (this.reloading) {
      const next = (): Promise<boolean> => {
        this.queuedReload = undefined;
        return this.reload(reason);
      };
      const after = this.reloading.then(next, next);
      this.queuedReload = after;
      return after;
    }
    const running = this.reloadNow(reason).finally(() => {
      this.reloading = undefined;
    });
    this.reloading = running;
    return running;
  }

  private async reloadNow(reason: string): Promise<boolean> {
    let next: Config;
    try {
      next = await buildConfig(this);
    } catch (err) {
      this.reloadFailures++;
      this.metrics.recordReloadFailure();
      this.logReloadFailure(err, reason);
      return false;
    }
    const old = this.config;
    for (const r of this.answerCacheReadings()) this.retiredCacheCounts.set(r.server, { hits: r.hits, evictions: r.evictions });
    const sameListeners =
      next.specs.length === old.specs.length &&
      next.specs.every(
        (s, i) => s.address === old.specs[i]!.address && s.port === old.specs[i]!.port && listenerId(s, false) === listenerId(old.specs[i]!, false),
      ) &&
      // New certificate files go to the open listener (its socket and connections stay); one
      // that cannot take them in place is opened again with the others.
      next.specs.every((s, i) => s.tls?.id === old.specs[i]!.tls?.id || this.listeners[i]?.updateTls?.(s.tls) === true);
    if (!sameListeners) {
      await Promise.all(this.listeners.map((l) => l.close()));
      this.listeners = [];
    }
    // One step: the sockets that stay call the new handlers from here on; queries in flight
    // finish on the old chains.
    this.config = next;
    for (const chain of old.chains) for (const p of chain.plugins) await p.close?.({ reload: true });
    runClose(old.life, { reload: true });
    if (sameListeners) {
      for (const chain of this.chains) for (const p of chain.plugins) await startPlugin(p, this.corefileName);
      for (const hook of this.config.life.start) hook();
    } else if (this.listening) await this.listen();
    // An App that never listened (`clusterdns sync` reloading to read the files again) opens nothing.
    this.log.info({ reason, listeners: next.specs.map((s) => `${s.address}:${s.port}`) }, 'configuration reloaded');
    return true;
  }

  private logReloadFailure(err: unknown, reason: string): void {
    const keep = 'reload failed, still serving the previous configuration';
    if (err instanceof CorefileError) {
      for (const e of corefileErrors(err)!) this.log.error({ file: e.file, line: e.line, reason }, `${keep}: ${e.reason}`);
    } else if (err instanceof ManifestError) {
      for (const f of err.findings.filter((x) => x.severity === 'error')) this.log.error({ file: f.file, line: f.line, reason }, `${keep}: ${f.message}`);
    } else this.log.error({ err, reason }, keep);
  }

  /** Stops accepting queries, lets those in flight finish (up to drainMs), closes everything. */
  async close(drainMs = 2000): Promise<void> {
    // What the plugins registered to close first: the loaders and watches (a loader thread given
    // the lameduck and the drain to end, not the process's exit) are not needed to answer from
    // the data already served.
    runClose(this.config.life);
    // Lameduck: plugins keep the server answering for a while before it stops accepting.
    await Promise.all(this.chains.flatMap((c) => c.plugins).map((p) => p.beforeShutdown?.()));
    const ls = this.listeners;
    this.listeners = [];
    await Promise.all(ls.map((l) => l.close(drainMs)));
    for (const chain of this.chains) for (const p of chain.plugins) await p.close?.();
  }
}

export async function buildApp(opts: AppOptions = {}): Promise<App> {
  return App.build(opts);
}

/** Internal lookups through `app`, bounded in depth, a repeated question ending with SERVFAIL. */
/** Runs the block's registered onBuilt hooks; one that throws closes the block's plugins and fails the block. */
function runBuiltHooks(hooks: readonly ((plugins: readonly Plugin[]) => void)[], plugins: readonly Plugin[]): void {
  try {
    for (const hook of hooks) hook(plugins);
  } catch (err) {
    closeAll(plugins);
    throw err;
  }
}

function lookupThrough(app: App): BlockContext['lookup'] {
  const maxDepth = app.options.maxLookupDepth ?? DEFAULT_MAX_LOOKUP_DEPTH;
  const loopLog = throttled(app.log, 1000);
  return async (name, qtype, from) => {
    const qname = name.toLowerCase().endsWith('.') ? name.toLowerCase() : name.toLowerCase() + '.';
    // The questions asked on the way here, the client's first (CoreDNS's file plugin bails out
    // after 8 re-entries through the server; the kubernetes plugin has no bound, and recursed
    // until the stack overflowed).
    const trail = from ? (from.lookupTrail ?? [`${from.qname}|${from.qtype}`]) : [];
    const key = `${qname}|${qtype}`;
    if (trail.includes(key) || trail.length > maxDepth) {
      const why = trail.includes(key) ? 'loop' : `depth over ${maxDepth}`;
      loopLog(
        { chain: [...trail, key].map((k) => k.replace('|', ' ')).join(' -> '), limit: maxDepth },
        `internal lookup ${why}: stopped with SERVFAIL for ${qname} ${qtype} (a CNAME/ExternalName chain through the server's own zones; fix the targets, or raise --max-lookup-depth)`,
      );
      return emptyResponse(Rcode.SERVFAIL);
    }
    const chain = app.route(qname);
    if (!chain) return emptyResponse(Rcode.REFUSED);
    const local = { address: '127.0.0.1', port: 0 };
    const req: DnsRequest = {
      id: 0,
      name: qname,
      qname,
      qtype,
      qclass: 'IN',
      opcode: 'QUERY',
      rd: true,
      protocol: 'udp',
      client: local,
      local,
      lookupTrail: from ? [...trail, key] : undefined,
    };
    return chain.serve(req);
  };
}

/**
 * Parses the Corefile of `app.options`, sets up every plugin and awaits their loads. The plugins
 * reach the server only through `app` (lookups, cache invalidation, reload requests), so they
 * keep working after this configuration is swapped in, and across later reloads.
 */
async function buildConfig(app: App): Promise<Config> {
  const opts = app.options;
  const log = app.log;
  const limits = app.corefileLimits;
  const parsed = opts.conf
    ? loadCorefileCollect(opts.conf, { limits })
    : parseCorefileCollect(opts.corefileText ?? defaultCorefile(opts.upstreamResolvConf), opts.corefileText ? 'Corefile' : '(built-in default Corefile)', {
        limits,
      });
  const blocks = parsed.blocks;
  const defaultPort = opts.port ?? 53;
  // Every error of the Corefile is reported in one run. An error from building a plugin on a line
  // the parser already reported (an unset variable, say) is a consequence of it, so it is dropped.
  const errors: CorefileError[] = [...parsed.errors];
  const parseLines = new Set(parsed.errors.map((e) => `${e.file}:${e.line}`));
  const addBuildErrors = (found: readonly CorefileError[]): void => {
    pushAll(
      errors,
      found.filter((e) => !parseLines.has(`${e.file}:${e.line}`)),
    );
  };
  addBuildErrors(duplicateKeyErrors(blocks, defaultPort));
  const runtime: RuntimeOptions = {
    manifests: opts.manifests ?? [],
    cluster: runtimeClusterOptions(opts.cluster),
    retainModel: opts.retainModel !== false,
  };
  const registry = defaultRegistry();
  const specs = new Map<string, ListenSpec>();
  const chains: Chain[] = [];
  const lookup = lookupThrough(app);
  const observers = new Map<Chain, QueryObserver[]>();
  const every = (): Plugin[] => chains.flatMap((c) => [...c.plugins]);
  const life = newLifecycle();
  const closeAllBuilt = async (): Promise<void> => {
    await closeChains(chains);
    runClose(life);
  };
  let listenersFull = false;
  for (const block of blocks) {
    if (enoughErrors(errors, limits.maxErrors) || listenersFull) break;
    const zones = [...new Set(block.keys.map((k) => k.zone))];
    let built: readonly Plugin[] = [];
    const builtHooks: ((plugins: readonly Plugin[]) => void)[] = [];
    const blockLife = newLifecycle();
    const blockObservers: QueryObserver[] = [];
    const ctx: BlockContext = {
      zones,
      keys: block.keys,
      runtime,
      log: log.child({ block: zones.join(' ') }),
      bindAddresses: [],
      listener: {},
      lookup,
      plugin: (name) => built.find((p) => p.name === name),
      observe: (o) => blockObservers.push(o),
      scrapeMetrics: () => app.scrapeMetrics(),
      metrics: app.metrics,
      lameduck: app.lameduck,
      withLoadPermit: (what, load) => app.withLoadPermit(what, load),
      corefileLimits: limits,
      httpLimits: app.httpLimits,
      invalidate: () => app.invalidate(),
      shared: (key, create) => (opts.manifestFeedsOf !== undefined && key.startsWith(MANIFEST_FEED_KEY) ? opts.manifestFeedsOf : app).share(key, create),
      corefile: opts.conf,
      oneShot: opts.oneShot,
      requestReload: (reason) => void app.reload(reason),
      allPlugins: every,
      onBuilt: (hook) => void builtHooks.push(hook),
      onLoad: (hook) => void blockLife.load.push(hook),
      onStart: (hook) => void blockLife.start.push(hook),
      onClose: (hook) => void blockLife.close.push(hook),
    };
    let plugins: Plugin[];
    try {
      plugins = registry.build(block.directives, ctx);
      built = plugins;
      runBuiltHooks(builtHooks, plugins);
    } catch (err) {
      // The registry closed the block's plugins; what their setups registered closes with them.
      runClose(blockLife);
      const found = corefileErrors(err);
      if (!found) {
        await closeAllBuilt();
        // The Corefile's own errors come first: they are what the user fixes first.
        throwErrors(errors, parsed.files, limits.maxErrors);
        throw err;
      }
      addBuildErrors(found);
      continue;
    }
    life.load.push(...blockLife.load);
    life.start.push(...blockLife.start);
    life.close.push(...blockLife.close);
    const chain = new Chain(zones, plugins);
    chains.push(chain);
    observers.set(chain, blockObservers);
    const plain = block.keys.filter((k) => k.transport !== undefined);
    if (!ctx.tls && plain.length > 0) {
      // CoreDNS serves such a block too, without encryption: say so, since the scheme suggests TLS.
      ctx.log.warn({ keys: plain.map((k) => k.raw) }, `${plain[0]!.transport}:// server block without a tls line: serving without encryption`);
    }
    const problem = addListenSpecs(specs, block, chain, ctx, defaultPort, limits.maxListeners);
    if (problem) {
      errors.push(problem.error);
      if (problem.full) listenersFull = true;
    }
  }
  if (errors.length > 0) {
    await closeAllBuilt();
    throwErrors(errors, parsed.files, limits.maxErrors);
  }
  // Plugins with large data (kubernetes) build it off the serving thread; on a reload the
  // running configuration answers until every load is done. A load that fails closes what this
  // build opened (the feeds it joined, its watchers) before the error goes up.
  try {
    await Promise.all([...every().map((p) => p.load?.()), ...life.load.map((hook) => hook())]);
  } catch (err) {
    await closeAllBuilt();
    throw err;
  }
  const specList = [...specs.values()];
  return {
    blocks,
    life,
    specs: specList,
    chains,
    handlers: specList.map((spec) => handlerFor(spec, log, opts, observers, app.metrics)),
    router: new Router(specList.flatMap((s) => s.entries)),
  };
}

/**
 * Adds the block's listen addresses and ports to `specs` (one spec per transport, address and
 * port, shared by the blocks that name it). A dns:// pair is a UDP and a TCP socket, so keys with
 * many ports times many bind addresses must not open thousands of them: past the limit, the error
 * to report (`full`). Blocks sharing a listener must agree on its TLS and settings: one socket
 * has one certificate (CoreDNS: "multiple conflicting TLS configuration returns an error").
 */
function addListenSpecs(
  specs: Map<string, ListenSpec>,
  block: ServerBlock,
  chain: Chain,
  ctx: Pick<BlockContext, 'bindAddresses' | 'tls' | 'listener'>,
  defaultPort: number,
  maxListeners: number,
): { error: CorefileError; full?: true } | undefined {
  const addresses = ctx.bindAddresses.length > 0 ? ctx.bindAddresses : ['::'];
  for (const key of block.keys) {
    const port = key.port ?? defaultPort;
    const transport = key.transport ?? 'dns';
    for (const address of addresses) {
      const id = `${transport}|${address}|${port}`;
      const spec = specs.get(id);
      if (!spec && specs.size >= maxListeners) {
        const error = new CorefileError(
          block.file,
          block.line,
          `more than ${maxListeners} listen addresses and ports (--max-corefile-listeners); use fewer ports or bind addresses`,
        );
        return { error, full: true };
      }
      if (spec) {
        const theirs = listenerId(spec);
        const mine = listenerId({ transport, settings: ctx.listener, ...(ctx.tls ? { tls: ctx.tls } : {}) });
        if (theirs !== mine) {
          const where = `${transport}://${address === '::' ? '' : address}:${port}`;
          const error = new CorefileError(
            block.file,
            block.line,
            `this block and another one both serve ${where} but set different tls, https, grpc_server or timeouts options; one listener has one setting: give both blocks the same lines, or use another port`,
          );
          return { error };
        }
        spec.entries.push({ zone: key.zone, chain });
        continue;
      }
      const fresh: ListenSpec = { address, port, transport, settings: ctx.listener, entries: [{ zone: key.zone, chain }] };
      if (ctx.tls && transport !== 'dns') fresh.tls = ctx.tls;
      specs.set(id, fresh);
    }
  }
  return undefined;
}

/**
 * What a reload compares to tell whether a listener must be opened again (its TLS side or settings
 * changed); without `certificate`, only whether it has TLS (a new certificate is applied in place).
 * A dns:// listener's settings are its `timeouts`.
 */
function listenerId(spec: Pick<ListenSpec, 'transport' | 'tls' | 'settings'>, certificate = true): string {
  if (spec.transport === 'dns') return `dns|${JSON.stringify(spec.settings.timeouts ?? {})}`;
  const tls = certificate ? (spec.tls?.id ?? 'plain') : spec.tls ? 'tls' : 'plain';
  return `${spec.transport}|${tls}|${JSON.stringify(spec.settings)}`;
}

/** The packet handler of one listen spec, with the query log and the observers of its blocks. */
function handlerFor(
  spec: ListenSpec,
  log: Logger,
  opts: AppOptions,
  observers: ReadonlyMap<Chain, readonly QueryObserver[]>,
  metrics: AppMetrics,
): QueryHandler {
  const handler = new QueryHandler(new Router(spec.entries), log, {
    answerCacheBytes: opts.answerCacheBytes,
    maxAnswerRecords: opts.maxAnswerRecords,
    panics: metrics.m.panics,
  });
  if (opts.logQueries) handler.observe(queryLogger(log));
  const seen = new Set<QueryObserver>();
  for (const { chain } of spec.entries) {
    for (const o of observers.get(chain) ?? []) {
      if (!seen.has(o)) handler.observe(o);
      seen.add(o);
    }
  }
  return handler;
}

/** Closes the plugins of a build that failed: some hold watchers or sockets from their setup. */
async function closeChains(chains: readonly Chain[]): Promise<void> {
  for (const chain of chains) {
    for (const p of chain.plugins) {
      try {
        await p.close?.();
      } catch {
        // Best effort: the build error is what gets reported.
      }
    }
  }
}

/**
 * The cluster options the App's plugins read manifests with (BlockContext.runtime.cluster): what a
 * tool opening the same manifest feed as they do (sharedFeed) must pass to get theirs.
 */
export function runtimeClusterOptions(cluster: Partial<ClusterOptions> | undefined): ClusterOptions {
  return { ...defaultClusterOptions, ...cluster };
}

/**
 * The cluster model for tools that look at pods (resolv-conf, resolve, the library): the one the
 * app's kubernetes plugin already loaded when it reads the same manifests, else loaded now.
 * `manifests` wins when given; otherwise the kubernetes blocks' own `manifests`.
 */
export function clusterModel(app: App | undefined, manifests: readonly string[] | undefined, options?: Partial<ClusterOptions>): ClusterModel | undefined {
  const kubernetes = (app?.chains ?? []).flatMap((c) => c.plugins).filter(isClusterDataProvider);
  const paths = manifests && manifests.length > 0 ? [...manifests] : [...new Set(kubernetes.flatMap((p) => p.blockManifests ?? []))];
  if (paths.length === 0) return undefined;
  const same = (a: readonly string[]): boolean => a.length === paths.length && a.every((x, i) => x === paths[i]);
  const loaded = kubernetes.find((p) => same(p.manifestPaths));
  return loaded?.clusterData().model ?? loadManifests(paths, options).model;
}
