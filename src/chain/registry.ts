// The plugin registry: which plugins exist, how each turns its Corefile directive into a
// plugin, and the one fixed order they run in (as CoreDNS's plugin.cfg, not Corefile order).
import type { Logger } from 'pino';
import type { Directive, ServerKey } from './corefile.js';
import { CorefileError } from './corefile.js';
import type { DnsResponse, Plugin } from './plugin.js';
import type { QueryObserver } from '../server/handler.js';
import type { ClusterOptions } from '../cluster/model.js';

/** Options that come from the command line rather than the Corefile. */
export interface RuntimeOptions {
  /** Default manifest paths of every `kubernetes` block that names none itself. */
  manifests: string[];
  cluster: ClusterOptions;
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
  /** The Corefile path, when the server was started with one (the reload plugin watches it). */
  readonly corefile?: string;
  /** Asks the running server to build its configuration again and swap it in. */
  readonly requestReload: (reason: string) => void;
  /** Forgets the server's encoded answers: call after a plugin's data changed. */
  readonly invalidate: () => void;
  /** Sees every packet handled by the listeners of this block (metrics, logs). */
  readonly observe: (observer: QueryObserver) => void;
  /** Every plugin of every server block, once the whole server is built (ready, health). */
  readonly allPlugins: () => readonly Plugin[];
  /** Called with the block's plugins once they are all set up. */
  onBuilt?: (plugins: readonly Plugin[]) => void;
  /** Listen addresses set by `bind`; empty means every address. */
  bindAddresses: string[];
  /**
   * Resolves a name through the server again, from the top of the chain of whichever block
   * serves it (CoreDNS's upstream lookups, e.g. for ExternalName targets).
   */
  readonly lookup: (name: string, qtype: string) => Promise<DnsResponse>;
  /**
   * Another plugin of the same server block, by name, once the block is built (plugins that
   * cooperate through a published contract, like autopath asking kubernetes for a search path).
   */
  readonly plugin: (name: string) => Plugin | undefined;
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
  'root', 'metadata', 'geoip', 'cancel', 'tls', 'quic', 'grpc_server', 'https', 'https3', 'timeouts',
  'multisocket', 'reload', 'nsid', 'bufsize', 'bind', 'debug', 'trace', 'ready', 'health', 'pprof',
  'prometheus', 'errors', 'log', 'dnstap', 'local', 'dns64', 'acl', 'any', 'chaos', 'loadbalance',
  'tsig', 'cache', 'rewrite', 'header', 'dnssec', 'autopath', 'minimal', 'template', 'transfer',
  'hosts', 'route53', 'azure', 'clouddns', 'k8s_external', 'k8s_gateway', 'kubernetes', 'file', 'auto', 'secondary',
  'etcd', 'loop', 'forward', 'grpc', 'erratic', 'whoami', 'on', 'sign', 'view', 'nomad',
] as const;

export class Registry {
  private readonly defs = new Map<string, PluginDefinition>();

  register(def: PluginDefinition): this {
    if (!(coreDnsOrder as readonly string[]).includes(def.name)) throw new Error(`plugin ${def.name} has no place in the execution order`);
    this.defs.set(def.name, def);
    return this;
  }

  /** Builds the plugins of one server block, in execution order. */
  build(directives: readonly Directive[], ctx: BlockContext): Plugin[] {
    const seen = new Map<string, Directive>();
    for (const d of directives) {
      const def = this.defs.get(d.name);
      if (!def) {
        const known = (coreDnsOrder as readonly string[]).includes(d.name);
        throw new CorefileError(
          d.file,
          d.line,
          known
            ? `plugin "${d.name}" is a CoreDNS plugin that clusterdns does not support yet; remove it (supported: ${[...this.defs.keys()].join(', ')})`
            : `unknown plugin "${d.name}" (supported: ${[...this.defs.keys()].join(', ')})`,
        );
      }
      const first = seen.get(d.name);
      if (first && !def.setupAll) throw new CorefileError(d.file, d.line, `plugin "${d.name}" appears twice in this server block (first at line ${first.line}); merge the two`);
      if (!first) seen.set(d.name, d);
    }
    const ordered = [...seen.values()].sort(
      (a, b) => coreDnsOrder.indexOf(a.name as (typeof coreDnsOrder)[number]) - coreDnsOrder.indexOf(b.name as (typeof coreDnsOrder)[number]),
    );
    const plugins: Plugin[] = [];
    for (const d of ordered) {
      const def = this.defs.get(d.name)!;
      const all = directives.filter((x) => x.name === d.name);
      const plugin = def.setupAll && all.length > 1 ? def.setupAll(all, ctx) : def.setup(d, ctx);
      if (plugin) plugins.push(plugin);
    }
    ctx.onBuilt?.(plugins);
    return plugins;
  }

  names(): string[] {
    return [...this.defs.keys()];
  }
}

/** Helper for setups: a directive's option block as (name, args, line) with a clear error for unknown options. */
export function optionError(d: Directive, plugin: string, known: readonly string[]): CorefileError {
  return new CorefileError(d.file, d.line, `unknown ${plugin} option "${d.name}"; valid options: ${known.join(', ')}`);
}
