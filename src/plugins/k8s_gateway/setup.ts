// `k8s_gateway [ZONE...] { resources ...; ingressClasses ...; gatewayClasses ...;
// serviceLabelSelectors SELECTOR...; ttl TTL; apex APEX; secondary NS; fallthrough [ZONE...];
// manifests PATH...; kubeconfig ... }`, parsed as the
// k8s_gateway plugin's setup.go (github.com/k8s-gateway/k8s_gateway) does. Like the upstream
// plugin, which keeps its own connection to the API server, it reads the manifests itself (the
// block's `manifests`, else --manifests) when the server builds, and again when they change.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { ttlSeconds } from '../../chain/options.js';
import { zoneArgs } from '../../chain/zones.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { manifestPath } from '../../cluster/paths.js';
import { withLoadPermit } from '../../chain/load-permit.js';
import { DEFAULT_MAX_RECORDS, HostIndex } from './hosts.js';
import { gatewayView } from './view.js';
import { type FeedThread, sharedFeed, type ViewSubscription, type ViewUpdate } from '../../cluster/feed-thread.js';
import { parseLabelSelector } from './selector.js';
import { excerpt } from '../../chain/excerpt.js';
import { K8sGatewayPlugin } from './plugin.js';

const RESOURCES = ['HTTPRoute', 'TLSRoute', 'GRPCRoute', 'Ingress', 'Service', 'DNSEndpoint'] as const;
export type Resource = (typeof RESOURCES)[number];

export interface K8sGatewayConfig {
  zones: string[];
  /** Looked up in this order; the first resource with a match answers. */
  resources: Resource[];
  ingressClasses: string[];
  gatewayClasses: string[];
  /**
   * Label selectors (labels.Selector.String() form) of the Services exposed; a Service matching
   * any of them is (one informer per selector upstream, results merged). Absent: every Service.
   */
  serviceLabelSelectors?: string[];
  /** TTL of A, AAAA and TXT answers (default 60); SOA and NS always use 60. */
  ttl: number;
  /** Name (below each zone) of this server's own records; default `dns1.kube-system`. */
  apex: string;
  secondary: string;
  fallthrough?: string[];
  manifests?: string[];
  watchMs: number;
  /**
   * Addresses (or TXT strings) one answer carries at most; a name that claims more answers the
   * first ones (a UDP reply is then truncated as any large one). Default DEFAULT_MAX_RECORDS.
   */
  maxRecords?: number;
  /**
   * Distinct load balancer host names one answer resolves at most (each an A and an AAAA lookup
   * through the server); the rest are left out. Default DEFAULT_MAX_HOSTNAME_LOOKUPS.
   */
  maxHostnameLookups?: number;
}

/** Distinct load balancer host names resolved per answer when the Corefile sets no `maxHostnameLookups`. */
export const DEFAULT_MAX_HOSTNAME_LOOKUPS = 16;

const OPTIONS = [
  'resources', 'ingressClasses', 'gatewayClasses', 'serviceLabelSelectors', 'ttl', 'apex', 'secondary', 'fallthrough', 'manifests', 'watch', 'kubeconfig',
  'maxRecords', 'maxHostnameLookups',
];

function parseK8sGateway(d: Directive, blockZones: readonly string[]): K8sGatewayConfig {
  const fail = (line: number, reason: string): never => {
    throw new CorefileError(d.file, line, `k8s_gateway: ${reason}`);
  };
  const cfg: K8sGatewayConfig = {
    zones: d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones],
    resources: ['Ingress', 'Service'],
    ingressClasses: [],
    gatewayClasses: [],
    ttl: 60,
    apex: 'dns1.kube-system',
    secondary: '',
    watchMs: 2000,
  };
  for (const o of d.block ?? []) gatewayOption(cfg, o, fail);
  return cfg;
}

/** One line of the block, into `cfg`. */
function gatewayOption(cfg: K8sGatewayConfig, o: Directive, fail: (line: number, reason: string) => never): void {
  const need = (usage: string): void => {
    if (o.args.length === 0) fail(o.line, `${o.name} needs an argument; usage: ${usage}`);
  };
  switch (o.name) {
    case 'resources':
      need(`resources ${RESOURCES.join('|')}...`);
      for (const r of o.args) {
        if (!(RESOURCES as readonly string[]).includes(r)) fail(o.line, `unknown resource "${r}"; supported: ${RESOURCES.join(', ')}`);
      }
      cfg.resources = [...new Set(o.args)] as Resource[];
      break;
    case 'ingressClasses':
      need('ingressClasses CLASS...');
      cfg.ingressClasses = [...o.args];
      break;
    case 'gatewayClasses':
      need('gatewayClasses CLASS...');
      cfg.gatewayClasses = [...o.args];
      break;
    case 'serviceLabelSelectors':
      // setup.go: at least one argument, none empty, each through labels.Parse.
      if (o.args.length === 0) fail(o.line, 'serviceLabelSelectors needs at least one label selector; usage: serviceLabelSelectors "app=web,tier!=cache" ...');
      cfg.serviceLabelSelectors = [
        ...(cfg.serviceLabelSelectors ?? []),
        ...o.args.map((arg) => {
          if (arg.trim() === '') fail(o.line, 'serviceLabelSelectors: an empty selector would select every Service; remove it or write one such as app=web');
          try {
            return parseLabelSelector(arg).text;
          } catch (err) {
            const reason = `serviceLabelSelectors: "${excerpt(arg)}" is not a label selector: ${(err as Error).message}`;
            return fail(o.line, `${reason}; write e.g. app=web or "tier in (frontend,api)"`);
          }
        }),
      ];
      break;
    case 'ttl':
      need('ttl SECONDS (0 to 3600)');
      cfg.ttl = ttlSeconds(o.args[0]!, o.line, fail);
      break;
    case 'apex':
      need('apex NAME (e.g. exdns-k8s-gateway.kube-system)');
      cfg.apex = o.args[0]!.toLowerCase().replace(/\.$/, '');
      break;
    case 'secondary':
      need('secondary NAME');
      cfg.secondary = o.args[0]!.toLowerCase().replace(/\.$/, '');
      break;
    case 'fallthrough':
      cfg.fallthrough = zoneArgs(o.args, o);
      break;
    case 'manifests':
      need('manifests PATH...');
      cfg.manifests = [...(cfg.manifests ?? []), ...o.args.map((p) => manifestPath(p, o.file))];
      break;
    case 'watch': {
      need('watch DURATION (e.g. 2s; 0 disables)');
      const ms = parseGoDuration(o.args[0]!);
      if (ms === undefined || ms < 0) fail(o.line, `watch: "${o.args[0]}" is not a duration; write e.g. 500ms, 2s or 0`);
      cfg.watchMs = ms!;
      break;
    }
    case 'maxRecords':
      need(`maxRecords COUNT (1 to 65535; default ${DEFAULT_MAX_RECORDS})`);
      cfg.maxRecords = countArg(o, 1, 65535, fail);
      break;
    case 'maxHostnameLookups':
      need(`maxHostnameLookups COUNT (1 to 1000; default ${DEFAULT_MAX_HOSTNAME_LOOKUPS})`);
      cfg.maxHostnameLookups = countArg(o, 1, 1000, fail);
      break;
    case 'kubeconfig':
      // The API-server connection: accepted for Corefile compatibility; clusterdns reads manifests.
      need('kubeconfig FILE [CONTEXT]');
      break;
    default:
      fail(o.line, `unknown property '${o.name}'; valid options: ${OPTIONS.join(', ')}`);
  }
}

/** A whole number in [min, max], else a Corefile error naming the option and the range. */
function countArg(o: Directive, min: number, max: number, fail: (line: number, reason: string) => never): number {
  const text = o.args[0]!;
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) fail(o.line, `${o.name}: "${excerpt(text)}" is not a whole number from ${min} to ${max}`);
  return n;
}

export const k8sGatewayPlugin: PluginDefinition = {
  name: 'k8s_gateway',
  setup(d, ctx) {
    const cfg = parseK8sGateway(d, ctx.zones);
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'k8s_gateway has no manifests to read: pass --manifests PATH or add `manifests PATH` to its block');
    }
    // The host index is small (names and addresses); the model it comes from stays in the
    // loader thread.
    let index: HostIndex | undefined;
    const plugin = new K8sGatewayPlugin(cfg, {
      index: () => {
        if (!index) throw new Error('k8s_gateway answered before its manifests were loaded');
        return index;
      },
      lookup: ctx.lookup,
    });
    const loading = new GatewayLoading(cfg, paths, ctx, plugin.closing.signal, (next) => (index = next));
    // Throws ManifestError with every problem found: the server does not start on half the data.
    ctx.onLoad(async () => {
      const next = await loading.load();
      const hosts = Object.fromEntries(cfg.resources.map((r) => [r, next.hosts(r).length]));
      ctx.log.info({ plugin: 'k8s_gateway', zones: cfg.zones, resources: cfg.resources, hosts }, 'k8s_gateway hosts indexed');
    });
    ctx.onStart(() => loading.feed.watch(cfg.watchMs));
    ctx.onClose(() => loading.close());
    return plugin;
  },
};

/**
 * The plugin's data: the host index, a view of the manifest feed the App shares among every
 * reader of the same files (cluster/feed-thread.ts), built in the feed's loader thread after each
 * load and swapped in whole. The feed keeps what each load admitted, so a rejected new version of
 * an object keeps the version admitted before (cluster/history.ts); rejections are logged at
 * file:line. A change the watch sees is loaded once for every reader.
 */
class GatewayLoading {
  private readonly shared: { readonly value: FeedThread; release(): void };
  private readonly subscription: ViewSubscription<HostIndex>;
  private serving: HostIndex | undefined;
  private started = performance.now();

  constructor(
    cfg: K8sGatewayConfig,
    paths: readonly string[],
    private readonly ctx: BlockContext,
    private readonly closing: AbortSignal,
    private readonly swap: (index: HostIndex) => void,
  ) {
    this.shared = sharedFeed(ctx.shared, paths, ctx.runtime.cluster, {
      log: ctx.log,
      permit: withLoadPermit,
      onViewError: (err) => ctx.log.error({ err }, 'building a view of the manifests failed'),
    });
    this.subscription = this.feed.subscribe(gatewayView(cfg), {
      onView: (u) => this.apply(u),
      // A failed load is logged by the feed, once for every reader; the last good hosts serve on.
    });
  }

  get feed(): FeedThread {
    return this.shared.value;
  }

  close(): void {
    this.subscription.close();
    this.shared.release();
  }

  /** The index of the files as they are now (a load when they changed since the feed's last). */
  async load(): Promise<HostIndex> {
    this.started = performance.now();
    await this.feed.refresh();
    const now = await this.subscription.current();
    if (this.serving !== now.value) {
      // Built before this plugin joined (a Corefile reload, the files as they were).
      this.serving = now.value;
      this.swap(now.value);
    }
    return now.value;
  }

  /** A new build of the index: its findings logged, swapped in. */
  private apply(u: ViewUpdate<HostIndex>): void {
    if (this.closing.aborted) return;
    const first = this.serving === undefined;
    this.serving = u.value;
    this.warnCapped(u.value);
    this.swap(u.value);
    const ms = Math.round(performance.now() - this.started);
    if (first) {
      this.ctx.log.debug({ plugin: 'k8s_gateway', thread: this.feed.threaded ? 'worker' : 'main', ms }, 'k8s_gateway load done');
      return;
    }
    this.ctx.invalidate();
    const t = u.summary.timings;
    // ms: the load on the loader thread (reading what changed and the control plane).
    this.ctx.log.info(
      { plugin: 'k8s_gateway', load: u.summary.gen, reread: u.summary.reread, full: u.summary.full, ms: Math.round(t.check + t.read + t.merge + t.emulate) },
      'manifests changed: k8s_gateway hosts re-indexed',
    );
  }

  /** One warning per load for the names that claim more records than an answer carries. */
  private warnCapped(index: HostIndex): void {
    const capped = index.capped;
    if (capped.length === 0) return;
    const examples = capped.slice(0, 5).map((c) => `${c.resource} ${c.host} (${c.records})`);
    this.ctx.log.warn(
      { plugin: 'k8s_gateway', names: capped.length, maxRecords: index.maxRecords, examples },
      `${capped.length} name(s) claim more than ${index.maxRecords} addresses or TXT strings; their answers carry the first ${index.maxRecords} ` +
        '(raise maxRecords in the k8s_gateway block to carry more)',
    );
  }
}

