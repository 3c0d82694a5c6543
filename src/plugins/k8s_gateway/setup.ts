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
import { loadManifests } from '../../cluster/load.js';
import type { AdmissionHistory } from '../../cluster/history.js';
import { logFindings } from '../../cluster/report.js';
import { ManifestError, type ClusterOptions } from '../../cluster/model.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { manifestPath } from '../../cluster/paths.js';
import { ManifestWatcher } from '../../cluster/watch.js';
import { HostIndex } from './hosts.js';
import { parseLabelSelector } from './selector.js';
import { excerpt } from '../../chain/excerpt.js';
import { K8sGatewayPlugin } from './plugin.js';

// The runtime option this plugin reads, declared here as well as in the kubernetes plugin's
// setup (identical declarations merge), so neither relies on the other being compiled in.
declare module '../../chain/registry.js' {
  interface RuntimeOptions {
    /** Service CIDRs, nodes and limits from the command line, for the plugins that read manifests. */
    cluster: ClusterOptions;
  }
}

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
}

const OPTIONS = [
  'resources', 'ingressClasses', 'gatewayClasses', 'serviceLabelSelectors', 'ttl', 'apex', 'secondary', 'fallthrough', 'manifests', 'watch', 'kubeconfig',
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
    case 'kubeconfig':
      // The API-server connection: accepted for Corefile compatibility; clusterdns reads manifests.
      need('kubeconfig FILE [CONTEXT]');
      break;
    default:
      fail(o.line, `unknown property '${o.name}'; valid options: ${OPTIONS.join(', ')}`);
  }
}

export const k8sGatewayPlugin: PluginDefinition = {
  name: 'k8s_gateway',
  setup(d, ctx) {
    const cfg = parseK8sGateway(d, ctx.zones);
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'k8s_gateway has no manifests to read: pass --manifests PATH or add `manifests PATH` to its block');
    }
    // The host index is small (names and addresses); the model it comes from is not kept.
    let index: HostIndex | undefined;
    // Each load hands the next one what it read, so a rejected new version of an object keeps
    // the version admitted before (cluster/history.ts); rejections are logged at file:line.
    let history: AdmissionHistory | undefined;
    const build = (): HostIndex => {
      const budget = ctx.runtime.cluster?.admissionHistoryBytes;
      const loaded = loadManifests(paths, ctx.runtime.cluster, undefined, {
        ...(history ? { previous: history } : {}),
        ...(budget !== undefined ? { budgetBytes: budget } : {}),
      });
      history = loaded.history;
      logFindings(ctx.log, loaded.findings, { plugin: 'k8s_gateway' }, loaded.model.rejected?.length ?? 0);
      return new HostIndex(loaded.model, cfg);
    };
    const plugin = new K8sGatewayPlugin(cfg, {
      index: () => {
        if (!index) throw new Error('k8s_gateway answered before its manifests were loaded');
        return index;
      },
      lookup: ctx.lookup,
    });
    // Throws ManifestError with every problem found: the server does not start on half the data.
    plugin.loader = async () => {
      index = build();
      const hosts = Object.fromEntries(cfg.resources.map((r) => [r, index!.hosts(r).length]));
      ctx.log.info({ plugin: 'k8s_gateway', zones: cfg.zones, resources: cfg.resources, hosts }, 'k8s_gateway hosts indexed');
    };
    plugin.watcher = new ManifestWatcher(paths, cfg.watchMs, () => {
      try {
        index = build();
        ctx.invalidate();
        ctx.log.info({ plugin: 'k8s_gateway' }, 'manifests changed: k8s_gateway hosts re-indexed');
      } catch (err) {
        logReloadFailure(ctx, err);
      }
    });
    return plugin;
  },
};

/** A reload that failed: each manifest error with its file:line; the last good hosts serve on. */
function logReloadFailure(ctx: BlockContext, err: unknown): void {
  const errors = err instanceof ManifestError ? err.findings.filter((f) => f.severity === 'error') : [];
  for (const f of errors) {
    ctx.log.error({ plugin: 'k8s_gateway', file: f.file, line: f.line }, `manifest reload failed, still serving the previous data: ${f.message}`);
  }
  if (errors.length === 0) ctx.log.error({ plugin: 'k8s_gateway', err }, 'manifest reload failed, still serving the previous data');
}
