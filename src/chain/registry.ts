// The plugin registry: which plugins exist, how each turns its Corefile directive into a
// plugin, and the one fixed order they run in (as CoreDNS's plugin.cfg, not Corefile order).
import type { Logger } from 'pino';
import type { ListenerSettings, ServerTls } from './transport.js';
import type { CorefileLimits, Directive, ServerKey } from './corefile.js';
import { CorefileError, corefileErrors, enoughErrors, excerpt, throwErrors } from './corefile.js';
import type { Lameduck } from './lameduck.js';
import type { HttpLimits } from '../pkg/http.js';
import type { DnsRequest, DnsResponse, Plugin, QueryObserver } from './plugin.js';
import { closest } from '../pkg/spelling.js';
import { pushAll } from '../pkg/arrays.js';

/**
 * Options that come from the command line rather than the Corefile. Plugins that need more add
 * it by declaration merging (the manifest plugins add `cluster`), so the chain knows no model.
 */
export interface RuntimeOptions {
  /** Default manifest paths of every `kubernetes` block that names none itself. */
  manifests: string[];
  /**
   * Keep the cluster model beside the plugins' indexes, for tools that look at pods (resolve,
   * resolv-conf, the library). A serving process leaves it out: it needs only the indexes.
   */
  retainModel?: boolean;
}

/** What a plugin's setup may read and set for its server block. */
export interface BlockContext {
  /** Zones of the server block (lowercased, fully qualified). */
  readonly zones: readonly string[];
  readonly keys: readonly ServerKey[];
  readonly runtime: RuntimeOptions;
  readonly log: Logger;
  /**
   * True for commands that build the server only to read it once (records, check, resolve): it
   * never listens, so plugins that act only while serving (reload) are checked but stay quiet.
   */
  readonly oneShot?: boolean;
  /** The Corefile path, when the server was started with one (the reload plugin watches it). */
  readonly corefile?: string;
  /** Asks the running server to build its configuration again and swap it in. */
  readonly requestReload: (reason: string) => void;
  /** Forgets the server's encoded answers: call after a plugin's data changed. */
  readonly invalidate: () => void;
  /** Sees every packet handled by the listeners of this block (metrics, logs). */
  readonly observe: (observer: QueryObserver) => void;
  /** The metrics exposition of the App (every worker's, aggregated, under --workers). */
  readonly scrapeMetrics: () => Promise<{ text: string; contentType: string }>;
  /** The App's shutdown state: health holds it for its lameduck wait, ready answers 503 meanwhile. */
  readonly lameduck: Lameduck;
  /** Runs a large data load holding one of the App's load permits (under --workers they take turns). */
  readonly withLoadPermit: <T>(what: string, load: () => Promise<T>) => Promise<T>;
  /** The App's Corefile limits (the --max-corefile-* flags). */
  readonly corefileLimits: Readonly<CorefileLimits>;
  /** The App's limits of the HTTP listeners health, ready and prometheus open (the --http-* flags). */
  readonly httpLimits: Readonly<HttpLimits>;
  /** Every plugin of every server block, once the whole server is built (ready, health). */
  readonly allPlugins: () => readonly Plugin[];
  /**
   * Registers `hook` to run with the block's plugins once all of them are set up, in registration
   * order (ready and prometheus learn the block's plugins; k8s_external finds kubernetes). A hook
   * that throws a CorefileError fails the block like a setup error. Registered, never assigned:
   * a plugin cannot drop another's hook.
   */
  readonly onBuilt: (hook: (plugins: readonly Plugin[]) => void) => void;
  /**
   * Registers work the configuration awaits once every block is built (a data load): the server
   * does not serve this configuration before it settles, and a rejection fails the build (at
   * start the server does not start; on a reload the running configuration keeps serving).
   */
  readonly onLoad: (hook: () => Promise<void>) => void;
  /** Registers work to run when this configuration starts serving (listeners bound, or swapped in by a reload). */
  readonly onStart: (hook: () => void) => void;
  /**
   * Registers work to run when this configuration closes: replaced by a reload (`reload` true),
   * the server stopping, or its build failing. Runs once; errors are ignored.
   */
  readonly onClose: (hook: (info?: { reload?: boolean }) => void) => void;
  /**
   * A resource the App owns (a manifest feed and its loader thread): every plugin, of any block
   * and of the configurations Corefile reloads build, that asks with the same key gets the same
   * one, created at the first ask and closed when the last holder releases it. A plugin releases
   * on close; a reload's new plugins take theirs before the old ones close, so it outlives the
   * reload. Two Apps share none.
   */
  readonly shared: <T extends { close(): void }>(key: string, create: () => T) => SharedResource<T>;
  /** Listen addresses set by `bind`; empty means every address. */
  bindAddresses: string[];
  /** Set by `tls`: the certificate, key and client verification of the block's tls://, https:// and grpc:// listeners. */
  tls?: ServerTls;
  /** What the block's plugins set for its stream listeners (`https`, `grpc_server`, `timeouts`). */
  listener: ListenerSettings;
  /**
   * Resolves a name through the server again, from the top of the chain of whichever block
   * serves it (CoreDNS's upstream lookups, e.g. for ExternalName targets). Pass the request being
   * answered as `from`: lookups made while answering it are then bounded in depth and a question
   * already asked on the way answers SERVFAIL, so a loop across server blocks stops.
   */
  readonly lookup: (name: string, qtype: string, from?: DnsRequest) => Promise<DnsResponse>;
  /**
   * Another plugin of the same server block, by name, once the block is built (plugins that
   * cooperate through a published contract, like autopath asking kubernetes for a search path).
   */
  readonly plugin: (name: string) => Plugin | undefined;
}

export interface SharedResource<T> {
  readonly value: T;
  /** Gives this holder's share back (idempotent). */
  release(): void;
}

export interface PluginDefinition {
  readonly name: string;
  /** Returns the plugin for the chain, or undefined for directives that only configure the server. */
  setup(directive: Directive, ctx: BlockContext): Plugin | undefined;
  /**
   * For plugins a block may name several times (rewrite rules, one file per zone): builds one
   * plugin from all of its directives, in Corefile order.
   */
  setupAll?(directives: readonly Directive[], ctx: BlockContext): Plugin | undefined;
}

/**
 * CoreDNS's plugin.cfg order (v1.14), plus the external k8s_gateway just before kubernetes (where
 * its README tells builders to put it). Plugins clusterdns does not implement are listed so the
 * error for them can say so, instead of calling them unknown.
 */
export const coreDnsOrder = [
  'root',
  'metadata',
  'geoip',
  'cancel',
  'tls',
  'quic',
  'grpc_server',
  'https',
  'https3',
  'timeouts',
  'multisocket',
  'reload',
  'nsid',
  'bufsize',
  'bind',
  'debug',
  'trace',
  'ready',
  'health',
  'pprof',
  'prometheus',
  'errors',
  'log',
  'dnstap',
  'local',
  'dns64',
  'acl',
  'any',
  'chaos',
  'loadbalance',
  'tsig',
  'cache',
  'rewrite',
  'header',
  'dnssec',
  'autopath',
  'minimal',
  'template',
  'transfer',
  'hosts',
  'route53',
  'azure',
  'clouddns',
  'k8s_external',
  'k8s_gateway',
  'kubernetes',
  'file',
  'auto',
  'secondary',
  'etcd',
  'loop',
  'forward',
  'grpc',
  'erratic',
  'whoami',
  'on',
  'sign',
  'view',
  'nomad',
] as const;

export class Registry {
  private readonly defs = new Map<string, PluginDefinition>();

  register(def: PluginDefinition): this {
    if (!(coreDnsOrder as readonly string[]).includes(def.name)) throw new Error(`plugin ${def.name} has no place in the execution order`);
    this.defs.set(def.name, def);
    return this;
  }

  /**
   * Builds the plugins of one server block, in execution order. An error in one directive does
   * not stop the others from being checked: every error of the block is thrown at the end (one
   * CorefileError, or a CorefileErrors), after closing the plugins that were built.
   */
  build(directives: readonly Directive[], ctx: BlockContext): Plugin[] {
    const errors: CorefileError[] = [];
    const seen = new Map<string, Directive>();
    const notCorefile = new Set<string>();
    const maxErrors = ctx.corefileLimits.maxErrors;
    for (const d of directives) {
      if (enoughErrors(errors, maxErrors)) break;
      const def = this.defs.get(d.name);
      if (!def) {
        // A file that is not a Corefile gets one error, not one per line.
        const reason = this.unknown(d.name, d.imported === true);
        if (reason.startsWith(NOT_A_PLUGIN) && notCorefile.has(d.file)) continue;
        if (reason.startsWith(NOT_A_PLUGIN)) notCorefile.add(d.file);
        errors.push(new CorefileError(d.file, d.line, reason));
        continue;
      }
      const first = seen.get(d.name);
      if (first && !def.setupAll) {
        errors.push(new CorefileError(d.file, d.line, `plugin "${d.name}" appears twice in this server block (first at line ${first.line}); merge the two`));
        continue;
      }
      if (!first) seen.set(d.name, d);
    }
    const ordered = [...seen.values()].sort(
      (a, b) => coreDnsOrder.indexOf(a.name as (typeof coreDnsOrder)[number]) - coreDnsOrder.indexOf(b.name as (typeof coreDnsOrder)[number]),
    );
    const plugins: Plugin[] = [];
    for (const d of ordered) {
      if (enoughErrors(errors, maxErrors)) break;
      const def = this.defs.get(d.name)!;
      const all = directives.filter((x) => x.name === d.name);
      try {
        const setupCtx = ctx.oneShot && SERVING_ONLY.has(d.name) ? quietContext(ctx) : ctx;
        const plugin = def.setupAll && all.length > 1 ? def.setupAll(all, setupCtx) : def.setup(d, setupCtx);
        if (plugin) plugins.push(plugin);
      } catch (err) {
        const found = corefileErrors(err);
        if (!found) {
          closeAll(plugins);
          throw err;
        }
        pushAll(errors, found);
      }
    }
    if (errors.length > 0) {
      closeAll(plugins);
      throwErrors(errors, [], maxErrors);
    }
    return plugins;
  }

  private unknown(name: string, imported: boolean): string {
    const supported = `(supported: ${[...this.defs.keys()].join(', ')})`;
    const known = (coreDnsOrder as readonly string[]).includes(name);
    // Only echo what looks like a plugin name, and from an imported file only CoreDNS's plugin
    // names: a line of a file that is not a Corefile (`import /etc/shadow`) must not end up in a log.
    if (!/^[a-z][a-z0-9_-]{0,39}$/i.test(name)) return `${NOT_A_PLUGIN} name; is this file a Corefile? ${supported}`;
    if (imported && !known) {
      return `${NOT_A_PLUGIN} CoreDNS knows (an imported file's text is not quoted back); check its spelling, or whether this file is a Corefile ${supported}`;
    }
    if (known) return `plugin "${name}" is a CoreDNS plugin that clusterdns does not support yet; remove it ${supported}`;
    // A misspelt plugin is far more common than an unknown one: name the nearest supported plugin.
    const near = closest(name, this.defs.keys());
    return `unknown plugin "${excerpt(name)}"${near !== undefined ? `; did you mean ${near}?` : ''} ${supported}`;
  }

  names(): string[] {
    return [...this.defs.keys()];
  }
}

const NOT_A_PLUGIN = 'this line does not start with a plugin';

/**
 * Plugins that only act while the server runs. A one-shot command still checks their arguments,
 * but their warnings about run time ("reload has no Corefile to watch") mean nothing there.
 */
const SERVING_ONLY = new Set(['reload']);

/** The same context with warnings silenced (errors still logged); the rest reads through to ctx. */
function quietContext(ctx: BlockContext): BlockContext {
  return Object.create(ctx, { log: { value: ctx.log.child({}, { level: 'error' }) } }) as BlockContext;
}

/** Closes plugins built for a block that failed (they may hold watchers or sockets). */
export function closeAll(plugins: readonly Plugin[]): void {
  for (const p of plugins) {
    try {
      void Promise.resolve(p.close?.()).catch(() => undefined);
    } catch {
      // Closing is best effort: the error being reported is the one that matters.
    }
  }
}
