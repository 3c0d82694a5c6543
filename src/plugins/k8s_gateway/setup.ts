// `k8s_gateway [ZONE...] { resources ...; ingressClasses ...; gatewayClasses ...;
// serviceLabelSelectors SELECTOR...; ttl TTL; apex APEX; secondary NS; fallthrough [ZONE...];
// manifests PATH...; kubeconfig ... }`, parsed as the
// k8s_gateway plugin's setup.go (github.com/k8s-gateway/k8s_gateway) does. Like the upstream
// plugin, which keeps its own connection to the API server, it reads the manifests itself (the
// block's `manifests`, else --manifests) when the server builds, and again when they change.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { OptionReader } from '../../chain/option-reader.js';
import { manifestPath } from '../../cluster/read/paths.js';
import { DEFAULT_MAX_RECORDS, type HostIndex } from './hosts.js';
import { gatewayView } from './view.js';
import { type FeedThread, sharedFeed, type ViewSubscription, type ViewUpdate } from '../../cluster/feed-thread.js';
import { parseLabelSelector } from './selector.js';
import { excerpt } from '../../chain/excerpt.js';
import { K8sGatewayPlugin } from './plugin.js';
import { DEFAULT_MAX_HOSTNAME_LOOKUPS, RESOURCES, type K8sGatewayConfig, type Resource } from './config.js';

/** A name below each zone, as `apex` and `secondary` take it. */
const label = (o: OptionReader, usage: string, example: string): string => o.arity(1, Infinity, usage, example).arg(0)!.toLowerCase().replace(/\.$/, '');

function parseK8sGateway(d: Directive, blockZones: readonly string[]): K8sGatewayConfig {
  const r = OptionReader.of(d);
  const cfg: K8sGatewayConfig = {
    zones: r.zones(0, blockZones),
    resources: ['Ingress', 'Service'],
    ingressClasses: [],
    gatewayClasses: [],
    ttl: 60,
    apex: 'dns1.kube-system',
    secondary: '',
    watchMs: 2000,
  };
  // Upstream reads the first argument of ttl, apex, secondary and kubeconfig and ignores the rest.
  r.block({
    resources: (o) => {
      o.arity(1, Infinity, `resources ${RESOURCES.join('|')}...`, 'resources Ingress Service');
      for (const a of o.args) {
        if (!(RESOURCES as readonly string[]).includes(a)) o.fail(`unknown resource "${excerpt(a)}"; supported: ${RESOURCES.join(', ')}`);
      }
      cfg.resources = [...new Set(o.args)] as Resource[];
    },
    ingressClasses: (o) => {
      cfg.ingressClasses = [...o.arity(1, Infinity, 'ingressClasses CLASS...', 'ingressClasses nginx').args];
    },
    gatewayClasses: (o) => {
      cfg.gatewayClasses = [...o.arity(1, Infinity, 'gatewayClasses CLASS...', 'gatewayClasses envoy').args];
    },
    serviceLabelSelectors: (o) => {
      // setup.go: at least one argument, none empty, each through labels.Parse.
      o.arity(1, Infinity, 'serviceLabelSelectors SELECTOR...', 'serviceLabelSelectors "app=web,tier!=cache"');
      cfg.serviceLabelSelectors = [
        ...(cfg.serviceLabelSelectors ?? []),
        ...o.args.map((arg) => {
          if (arg.trim() === '') o.fail('an empty selector would select every Service; remove it or write one such as app=web');
          try {
            return parseLabelSelector(arg).text;
          } catch (err) {
            return o.fail(`"${excerpt(arg)}" is not a label selector: ${(err as Error).message}; write e.g. app=web or "tier in (frontend,api)"`);
          }
        }),
      ];
    },
    ttl: (o) => {
      cfg.ttl = o.arity(1, Infinity, 'ttl SECONDS', 'ttl 60').ttl(0);
    },
    apex: (o) => {
      cfg.apex = label(o, 'apex NAME', 'apex exdns-k8s-gateway.kube-system');
    },
    secondary: (o) => {
      cfg.secondary = label(o, 'secondary NAME', 'secondary exdns-2');
    },
    fallthrough: (o) => {
      cfg.fallthrough = o.fallthrough();
    },
    manifests: (o) => {
      o.arity(1, Infinity, 'manifests PATH...', 'manifests ./manifests');
      cfg.manifests = [...(cfg.manifests ?? []), ...o.args.map((p) => manifestPath(p, o.line.file))];
    },
    watch: (o) => {
      cfg.watchMs = o.arity(1, 1, 'watch DURATION', 'watch 2s').duration(0, '', { examples: '500ms, 2s or 0 to disable' });
    },
    // The API-server connection: accepted for Corefile compatibility; clusterdns reads manifests.
    kubeconfig: (o) => {
      o.arity(1, Infinity, 'kubeconfig FILE [CONTEXT]');
    },
    maxRecords: (o) => {
      cfg.maxRecords = o.arity(1, 1, 'maxRecords COUNT', `maxRecords ${DEFAULT_MAX_RECORDS}`).int(0, 'COUNT', { min: 1, max: 65535 });
    },
    maxHostnameLookups: (o) => {
      cfg.maxHostnameLookups = o
        .arity(1, 1, 'maxHostnameLookups COUNT', `maxHostnameLookups ${DEFAULT_MAX_HOSTNAME_LOOKUPS}`)
        .int(0, 'COUNT', { min: 1, max: 1000 });
    },
  });
  return cfg;
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
 * an object keeps the version admitted before (cluster/admit/history.ts); rejections are logged at
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
      permit: ctx.withLoadPermit,
      onViewError: (err) => ctx.log.error({ err }, 'building a view of the manifests failed'),
      oneShot: ctx.oneShot === true,
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
