// `kubernetes [ZONES...] { ... }` -> a validated KubernetesConfig, by CoreDNS's setup.go rules. Apart
// from the registration (setup.ts) because the plugin, its store and the loader threads (view.ts)
// read the same config without registering anything.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import { OptionReader, type OptionHandlers } from '../../chain/option-reader.js';
import { manifestPath } from '../../cluster/read/paths.js';
import { isReverse } from '../../pkg/names.js';
import type { LabelSelector } from '../../cluster/model/selector.js';
import { parseSelector } from './selector.js';

export type PodMode = 'disabled' | 'insecure' | 'verified';

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

export function parseKubernetes(d: Directive, blockZones: readonly string[]): KubernetesConfig {
  const r: OptionReader = OptionReader.of(d);
  const zones = r.zones(0, blockZones);
  const primaryZone = zones.find((z) => !isReverse(z));
  if (!primaryZone) throw new CorefileError(d.file, d.line, 'kubernetes needs at least one zone that is not in-addr.arpa or ip6.arpa (e.g. cluster.local)');
  const cfg: KubernetesConfig = {
    zones,
    primaryZone,
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
  r.block({ ...kubernetesOptions(cfg), ...API_SERVER_OPTIONS });
  if (cfg.namespaces.size > 0 && cfg.namespaceLabels) r.fail('namespaces and namespace_labels cannot be used together; keep one');
  if (cfg.noEndpoints && cfg.zonal) r.fail('zonal needs endpoints; remove noendpoints or zonal');
  return cfg;
}

/** The options that shape the DNS data, into `cfg`. */
function kubernetesOptions(cfg: KubernetesConfig): OptionHandlers {
  return {
    pods: (o) => {
      cfg.pods = o.arity(1, 1, 'pods disabled|insecure|verified').choice<PodMode>(0, 'mode', ['disabled', 'insecure', 'verified']);
    },
    ttl: (o) => {
      cfg.ttl = o.arity(1, 1, 'ttl SECONDS', 'ttl 30').ttl(0);
    },
    namespaces: (o) => {
      for (const ns of o.arity(1, Infinity, 'namespaces NAMESPACE...', 'namespaces default kube-system').args) cfg.namespaces.add(ns);
    },
    namespace_labels: (o) => {
      cfg.namespaceLabels = selector(o.arity(1, Infinity, 'namespace_labels SELECTOR', 'namespace_labels team=dns'));
    },
    labels: (o) => {
      cfg.labels = selector(o.arity(1, Infinity, 'labels SELECTOR', 'labels app=web'));
    },
    endpoint_pod_names: (o) => {
      o.noArgs();
      cfg.endpointPodNames = true;
    },
    noendpoints: (o) => {
      o.noArgs();
      cfg.noEndpoints = true;
    },
    fallthrough: (o) => {
      cfg.fallthrough = o.fallthrough();
    },
    ignore: (o) => {
      // As CoreDNS: only the first value counts, and `ignore` alone changes nothing.
      if (o.count === 0) return;
      o.choice(0, 'value', ['empty_service']);
      cfg.ignoreEmptyService = true;
    },
    multicluster: (o) => {
      // CoreDNS accepts `multicluster` with no zones: no multicluster zone then.
      cfg.multicluster = o.fallthrough();
      for (const z of cfg.multicluster) {
        if (!cfg.zones.includes(z)) o.fail(`zone ${z} is not one of the plugin's zones (${cfg.zones.join(' ')})`);
      }
    },
    zonal: (o) => {
      o.noArgs();
      cfg.zonal = true;
    },
    manifests: (o) => {
      o.arity(1, Infinity, 'manifests PATH...', 'manifests ./manifests');
      if (o.args.some((p) => p === '')) o.fail('a path is empty; give a file or directory');
      // Relative to the Corefile, so a repository's Corefile and manifests travel together.
      cfg.manifests = [...(cfg.manifests ?? []), ...o.args.map((p) => manifestPath(p, o.line.file))];
    },
    watch: (o) => {
      cfg.watchMs = o.arity(1, 1, 'watch DURATION', 'watch 2s').duration(0, '', { examples: '500ms, 2s, 1m or 0 to disable' });
    },
  };
}

/** A number, as client-go's flags take apiserver_qps (a float) and the others (an integer). */
function apiServerNumber(o: OptionReader): void {
  o.arity(1, 1, `${o.name} N`);
  const text = o.arg(0)!;
  const ok = o.name === 'apiserver_qps' ? /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) : /^[+-]?\d+$/.test(text);
  if (!ok) o.fail(`N "${excerpt(text)}" is not ${o.name === 'apiserver_qps' ? 'a number' : 'an integer'}`);
  if (Number(text) < 0) o.fail(`N must be at least 0: ${excerpt(text)}`);
}

/**
 * API-server connection options have no DNS effect here; their arguments are checked as CoreDNS
 * checks them, so a Corefile CoreDNS refuses is refused here too.
 */
const API_SERVER_OPTIONS: OptionHandlers = {
  endpoint: (o) => void o.arity(1, Infinity, 'endpoint URL...'),
  tls: (o) => void o.arity(3, 3, 'tls CERT KEY CACERT'),
  kubeconfig: (o) => void o.arity(1, 2, 'kubeconfig KUBECONFIG [CONTEXT]'),
  apiserver_qps: apiServerNumber,
  apiserver_burst: apiServerNumber,
  apiserver_max_inflight: apiServerNumber,
  startup_timeout: (o) => void o.arity(1, 1, 'startup_timeout DURATION').duration(0, '', { min: -Infinity }),
};

function selector(o: OptionReader): LabelSelector {
  try {
    return parseSelector(o.args.join(' '));
  } catch (err) {
    return o.fail((err as Error).message);
  }
}
