// Registers the kubernetes plugin: `kubernetes [ZONES...] { ... }` -> a validated KubernetesConfig
// (CoreDNS's setup.go rules) and the plugin; its data is loaded off the serving thread when the
// server builds, and again when the manifests change (loading.ts).
import type { Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import type { ClusterModel } from '../../cluster/model.js';
import { manifestPath } from '../../cluster/paths.js';
import { isReverse, isSubdomain } from '../../pkg/names.js';
import { zoneArgs } from '../../chain/zones.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { parseSelector, type LabelSelector } from './selector.js';
import { wireLoading } from './loading.js';
import { serverAddresses } from './ns.js';
import { KubernetesPlugin } from './plugin.js';
import { KubernetesStore } from './store.js';

declare module '../../chain/cluster-data.js' {
  interface ClusterData {
    /** The model the data was built from, when the app keeps it (RuntimeOptions.retainModel). */
    readonly model: ClusterModel | undefined;
  }
}

export const kubernetesPlugin: PluginDefinition = {
  name: 'kubernetes',
  setup(d, ctx) {
    const cfg = parseKubernetes(d, ctx.zones);
    warnZonesOutsideBlock(cfg, d, ctx);
    const paths = cfg.manifests ?? ctx.runtime.manifests;
    if (paths.length === 0) {
      throw new CorefileError(d.file, d.line, 'kubernetes has no manifests to serve: pass --manifests PATH or add `manifests PATH` to this block');
    }
    // ns.dns.<zone>'s addresses when no kube-dns Service names the server (ns.ts); `bindOnly`
    // leaves this machine's interfaces out (records).
    const localAddresses = (bindOnly?: boolean): string[] => serverAddresses(ctx.bindAddresses, bindOnly ? {} : undefined);
    const plugin = new KubernetesPlugin(cfg, KubernetesStore.empty(cfg), { lookup: ctx.lookup, localAddresses }, paths);
    wireLoading(plugin, { directive: d, ctx, paths, localAddresses: () => localAddresses() });
    return plugin;
  },
};

/** CoreDNS loads such a zone all the same (OriginsFromArgsOrServerBlock); no query reaches it. */
function warnZonesOutsideBlock(cfg: KubernetesConfig, d: Directive, ctx: BlockContext): void {
  for (const z of cfg.zones.filter((z) => !ctx.zones.some((b) => isSubdomain(z, b)))) {
    const why = `kubernetes zone ${z} is not inside the server block's zones (${ctx.zones.join(' ')}); queries for it never reach the plugin`;
    ctx.log.warn({ file: d.file, line: d.line }, why);
  }
}

type PodMode = 'disabled' | 'insecure' | 'verified';

export interface KubernetesConfig {
  /** Zones answered, lowercased and fully qualified. */
  zones: string[];
  /** First zone that is not a reverse zone: the zone of every PTR target. */
  primaryZone: string;
  pods: PodMode;
  ttl: number;
  namespaces: Set<string>;
  namespaceLabels?: LabelSelector;
  labels?: LabelSelector;
  endpointPodNames: boolean;
  noEndpoints: boolean;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
  ignoreEmptyService: boolean;
  multicluster: string[];
  zonal: boolean;
  /** Manifest paths of this block; undefined means the CLI's --manifests. */
  manifests?: string[];
  /** How often the manifests are checked for changes; 0 disables (option `watch`). */
  watchMs: number;
}

const OPTIONS = [
  'pods', 'ttl', 'namespaces', 'namespace_labels', 'labels', 'endpoint_pod_names', 'noendpoints',
  'fallthrough', 'ignore', 'multicluster', 'zonal', 'manifests', 'watch',
  // API-server connection options: accepted for Corefile compatibility, no DNS effect here.
  'endpoint', 'tls', 'kubeconfig', 'apiserver_qps', 'apiserver_burst', 'apiserver_max_inflight', 'startup_timeout',
];


export function parseKubernetes(d: Directive, blockZones: readonly string[]): KubernetesConfig {
  const fail = (line: number, reason: string): never => {
    throw new CorefileError(d.file, line, reason);
  };
  const zones = d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones];
  const primaryZone = zones.find((z) => !isReverse(z));
  if (!primaryZone) fail(d.line, 'kubernetes needs at least one zone that is not in-addr.arpa or ip6.arpa (e.g. cluster.local)');
  const cfg: KubernetesConfig = {
    zones,
    primaryZone: primaryZone!,
    pods: 'disabled',
    ttl: 5,
    namespaces: new Set(),
    endpointPodNames: false,
    noEndpoints: false,
    ignoreEmptyService: false,
    multicluster: [],
    zonal: false,
    watchMs: 2000,
  };
  forEachOption(d.block, (o) => {
    if (!apiServerOption(o, fail)) kubernetesOption(cfg, o, fail);
  });
  if (cfg.namespaces.size > 0 && cfg.namespaceLabels) fail(d.line, 'kubernetes: namespaces and namespace_labels cannot be used together; keep one');
  if (cfg.noEndpoints && cfg.zonal) fail(d.line, 'kubernetes: zonal needs endpoints; remove noendpoints or zonal');
  return cfg;
}

type Fail = (line: number, reason: string) => never;

function need(o: Directive, n: number, usage: string, fail: Fail): void {
  if (o.args.length < n) fail(o.line, `kubernetes ${o.name}: missing argument; usage: ${usage}`);
}

function none(o: Directive, fail: Fail): void {
  if (o.args.length > 0) fail(o.line, `kubernetes ${o.name} takes no arguments`);
}

/** The options that shape the DNS data, into `cfg`. */
function kubernetesOption(cfg: KubernetesConfig, o: Directive, fail: Fail): void {
  switch (o.name) {
    case 'pods':
      need(o, 1, 'pods disabled|insecure|verified', fail);
      if (o.args.length > 1) fail(o.line, 'kubernetes pods takes one mode: disabled, insecure or verified');
      if (o.args[0] !== 'disabled' && o.args[0] !== 'insecure' && o.args[0] !== 'verified') {
        fail(o.line, `kubernetes pods: invalid mode "${excerpt(o.args[0]!)}"; use disabled, insecure or verified`);
      }
      cfg.pods = o.args[0] as PodMode;
      break;
    case 'ttl': {
      need(o, 1, 'ttl SECONDS (0..3600)', fail);
      const ttl = Number(o.args[0]);
      if (!/^\d+$/.test(o.args[0]!) || ttl < 0 || ttl > 3600) fail(o.line, `kubernetes ttl: "${excerpt(o.args[0]!)}" must be an integer from 0 to 3600`);
      cfg.ttl = ttl;
      break;
    }
    case 'namespaces':
      need(o, 1, 'namespaces NAMESPACE...', fail);
      for (const ns of o.args) cfg.namespaces.add(ns);
      break;
    case 'namespace_labels':
      need(o, 1, 'namespace_labels SELECTOR', fail);
      cfg.namespaceLabels = selector(o, fail);
      break;
    case 'labels':
      need(o, 1, 'labels SELECTOR', fail);
      cfg.labels = selector(o, fail);
      break;
    case 'endpoint_pod_names':
      none(o, fail);
      cfg.endpointPodNames = true;
      break;
    case 'noendpoints':
      none(o, fail);
      cfg.noEndpoints = true;
      break;
    case 'fallthrough':
      cfg.fallthrough = zoneArgs(o.args, o);
      break;
    case 'ignore':
      // As CoreDNS: only the first value counts, and `ignore` alone changes nothing.
      if (o.args.length === 0) break;
      if (o.args[0] !== 'empty_service') fail(o.line, `kubernetes ignore: unable to parse ignore value "${excerpt(o.args[0]!)}"; the only value is empty_service`);
      cfg.ignoreEmptyService = true;
      break;
    case 'multicluster':
      // CoreDNS accepts `multicluster` with no zones: no multicluster zone then.
      cfg.multicluster = zoneArgs(o.args, o);
      for (const z of cfg.multicluster) {
        if (!cfg.zones.includes(z)) fail(o.line, `kubernetes multicluster zone ${z} is not one of the plugin's zones (${cfg.zones.join(' ')})`);
      }
      break;
    case 'zonal':
      none(o, fail);
      cfg.zonal = true;
      break;
    case 'manifests':
      need(o, 1, 'manifests PATH...', fail);
      if (o.args.some((p) => p === '')) fail(o.line, 'kubernetes manifests: a path is empty; give a file or directory');
      // Relative to the Corefile, so a repository's Corefile and manifests travel together.
      cfg.manifests = [...(cfg.manifests ?? []), ...o.args.map((p) => manifestPath(p, o.file))];
      break;
    case 'watch': {
      need(o, 1, 'watch DURATION (e.g. 2s; 0 disables)', fail);
      const ms = parseGoDuration(o.args[0]!);
      if (ms === undefined || ms < 0) fail(o.line, `kubernetes watch: "${excerpt(o.args[0]!)}" is not a duration; write e.g. 500ms, 2s, 1m or 0`);
      cfg.watchMs = ms!;
      break;
    }
    default:
      fail(o.line, `unknown kubernetes option "${excerpt(o.name)}"; valid options: ${OPTIONS.join(', ')}`);
  }
}

/**
 * API-server connection options have no DNS effect here; their arguments are checked as CoreDNS
 * checks them, so a Corefile CoreDNS refuses is refused here too. False for any other option.
 */
function apiServerOption(o: Directive, fail: Fail): boolean {
  switch (o.name) {
    case 'endpoint':
      need(o, 1, 'endpoint URL...', fail);
      break;
    case 'tls':
      if (o.args.length !== 3) fail(o.line, 'kubernetes tls takes three arguments: CERT KEY CACERT');
      break;
    case 'kubeconfig':
      if (o.args.length !== 1 && o.args.length !== 2) fail(o.line, 'kubernetes kubeconfig takes KUBECONFIG [CONTEXT]');
      break;
    case 'startup_timeout':
      need(o, 1, 'startup_timeout DURATION', fail);
      if (parseGoDuration(o.args[0]!) === undefined) fail(o.line, `kubernetes startup_timeout: "${excerpt(o.args[0]!)}" is not a duration`);
      break;
    case 'apiserver_qps':
    case 'apiserver_burst':
    case 'apiserver_max_inflight': {
      if (o.args.length !== 1) fail(o.line, `kubernetes ${o.name} takes one number`);
      const text = o.args[0]!;
      const ok = o.name === 'apiserver_qps' ? /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) : /^[+-]?\d+$/.test(text);
      if (!ok) fail(o.line, `kubernetes invalid ${o.name} "${excerpt(text)}"`);
      if (Number(text) < 0) fail(o.line, `kubernetes ${o.name} must be >= 0, got ${excerpt(text)}`);
      break;
    }
    default:
      return false;
  }
  return true;
}

function selector(o: Directive, fail: (line: number, reason: string) => never): LabelSelector {
  try {
    return parseSelector(o.args.join(' '));
  } catch (err) {
    return fail(o.line, `kubernetes ${o.name}: ${(err as Error).message}`);
  }
}
