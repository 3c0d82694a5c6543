// The kubernetes plugin's immutable view of the cluster: the model filtered by the plugin's
// options and indexed for lookups. A reload builds a new store and swaps one reference.
import { createHash } from 'node:crypto';
import type { ClusterModel, EndpointPort, EndpointSlice, Pod, Service, ServiceImport } from '../../cluster/model.js';
import { canonicalIp } from '../../cluster/ip.js';
import type { KubernetesConfig } from './setup.js';

/** A ready endpoint address with the name CoreDNS gives it. */
export interface EndpointAddress {
  ip: string;
  name: string;
  zone?: string;
}

/** A slice reduced to what DNS uses: its ports and ready addresses. */
export interface ReadySlice {
  ports: readonly EndpointPort[];
  addresses: EndpointAddress[];
  /** multicluster: the source cluster id. */
  cluster?: string;
}

export interface PtrTarget {
  /** Labels of the target below the primary zone, e.g. 'svc.ns.svc' or 'ep.svc.ns.svc'. */
  relative: string;
}

const key = (namespace: string, name: string): string => `${name}.${namespace}`;

/** Endpoint name: hostname, else (endpoint_pod_names) the pod name if shorter than 64, else the dashed IP. */
export function endpointName(ip: string, hostname: string | undefined, targetRefName: string | undefined, podNames: boolean): string {
  if (hostname) return hostname;
  if (podNames && targetRefName && targetRefName.length < 64) return targetRefName;
  if (ip.includes('.')) return ip.replaceAll('.', '-');
  // IPv6: a trailing '-' (from '::' at the end) gets a 0 so the label stays valid.
  const dashed = ip.replaceAll(':', '-');
  return dashed.endsWith('-') ? dashed + '0' : dashed;
}

export class KubernetesStore {
  readonly namespaces: ReadonlySet<string>;
  readonly services = new Map<string, Service>();
  readonly slices = new Map<string, ReadySlice[]>();
  readonly imports = new Map<string, ServiceImport>();
  readonly importSlices = new Map<string, ReadySlice[]>();
  /** Cluster IP -> the first service holding it. */
  private readonly serviceByIp = new Map<string, Service>();
  /** Endpoint IP -> PTR targets (endpoint name under its service). */
  private readonly endpointsByIp = new Map<string, { relative: string; namespace: string }[]>();
  /** status.podIP -> pods (pods verified). */
  private readonly podsByIp = new Map<string, Pod[]>();
  readonly serial: number;
  readonly recordSources: number;

  constructor(
    /** The cluster model this store was built from. */
    readonly model: ClusterModel,
    private readonly cfg: KubernetesConfig,
  ) {
    const nsSelector = cfg.namespaceLabels;
    this.namespaces = new Set(
      [...model.namespaces.values()].filter((ns) => !nsSelector || nsSelector(ns.labels)).map((ns) => ns.name),
    );
    const labelOk = (labels: Readonly<Record<string, string>>): boolean => !cfg.labels || cfg.labels(labels);

    for (const svc of model.services) {
      if (!labelOk(svc.labels)) continue;
      const k = key(svc.namespace, svc.name);
      if (!this.services.has(k)) this.services.set(k, svc);
    }
    const sorted = [...this.services.values()].sort((a, b) => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1));
    for (const svc of sorted) {
      if (svc.headless) continue;
      for (const ip of svc.clusterIPs) {
        const c = canonicalIp(ip);
        if (c && !this.serviceByIp.has(c)) this.serviceByIp.set(c, svc);
      }
    }

    if (!cfg.noEndpoints) {
      for (const slice of model.endpointSlices) {
        if (!labelOk(slice.labels)) continue;
        const mcService = slice.labels['multicluster.kubernetes.io/service-name'];
        if (mcService && cfg.multicluster.length > 0) {
          const ready = this.readySlice(slice);
          ready.cluster = slice.labels['multicluster.kubernetes.io/source-cluster'];
          push(this.importSlices, key(slice.namespace, mcService), ready);
          continue;
        }
        if (!slice.serviceName) continue;
        const ready = this.readySlice(slice);
        push(this.slices, key(slice.namespace, slice.serviceName), ready);
        for (const a of ready.addresses) {
          const c = canonicalIp(a.ip) ?? a.ip;
          const list = this.endpointsByIp.get(c) ?? [];
          list.push({ relative: `${a.name}.${slice.serviceName}.${slice.namespace}.svc`, namespace: slice.namespace });
          this.endpointsByIp.set(c, list);
        }
      }
    }

    if (cfg.multicluster.length > 0) {
      for (const si of model.serviceImports) {
        if (nsSelector && !this.namespaces.has(si.namespace)) continue;
        this.imports.set(key(si.namespace, si.name), si);
      }
    }

    if (cfg.pods === 'verified') {
      for (const pod of model.pods) {
        if (!labelOk(pod.labels) || pod.deleting || !pod.podIP) continue;
        if (pod.phase === 'Succeeded' || pod.phase === 'Failed' || pod.phase === 'Unknown') continue;
        push(this.podsByIp, pod.podIP, pod);
      }
    }
    this.recordSources = this.services.size + model.endpointSlices.length + model.pods.length;
    this.serial = contentSerial(model);
  }

  private readySlice(slice: EndpointSlice): ReadySlice {
    const addresses: EndpointAddress[] = [];
    for (const ep of slice.endpoints) {
      // conditions.ready unset counts as ready (CoreDNS object/endpoint.go).
      if (ep.ready === false) continue;
      for (const ip of ep.addresses) {
        addresses.push({ ip, name: endpointName(ip, ep.hostname, ep.targetRefName, this.cfg.endpointPodNames), zone: ep.zone?.toLowerCase() });
      }
    }
    return { ports: slice.ports, addresses };
  }

  /** CoreDNS's namespaceExposed: listed by `namespaces` (when set) and existing after namespace_labels. */
  namespaceExposed(ns: string): boolean {
    if (this.cfg.namespaces.size > 0 && !this.cfg.namespaces.has(ns)) return false;
    return this.namespaces.has(ns);
  }

  service(namespace: string, name: string): Service | undefined {
    return this.services.get(key(namespace, name));
  }

  slicesOf(namespace: string, name: string): ReadySlice[] {
    return this.slices.get(key(namespace, name)) ?? [];
  }

  serviceImport(namespace: string, name: string): ServiceImport | undefined {
    return this.imports.get(key(namespace, name));
  }

  importSlicesOf(namespace: string, name: string): ReadySlice[] {
    return this.importSlices.get(key(namespace, name)) ?? [];
  }

  /** Pods answered under `pods verified`, in a stable order. */
  verifiedPods(): Pod[] {
    return [...this.podsByIp.values()].flat().sort((a, b) => (a.namespace + '/' + a.name < b.namespace + '/' + b.name ? -1 : 1));
  }

  podsWithIp(ip: string): Pod[] {
    return this.podsByIp.get(ip) ?? [];
  }

  /** PTR targets (relative to the primary zone) for an IP: a cluster IP first, else endpoints. */
  reverse(ip: string): string[] {
    const restrict = this.cfg.namespaces.size > 0;
    const svc = this.serviceByIp.get(ip);
    if (svc && (!restrict || this.namespaceExposed(svc.namespace))) return [`${svc.name}.${svc.namespace}.svc`];
    const out: string[] = [];
    for (const ep of this.endpointsByIp.get(ip) ?? []) {
      if (restrict && !this.namespaceExposed(ep.namespace)) continue;
      out.push(ep.relative);
    }
    return out;
  }
}

function push<K, V>(map: Map<K, V[]>, k: K, v: V): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

/**
 * CoreDNS's serial is the time of the last object change; without an API server the content is
 * what changes, so the serial is derived from it: same input, same serial.
 */
function contentSerial(model: ClusterModel): number {
  const h = createHash('sha256');
  for (const s of model.services) h.update(`${s.namespace}/${s.name}|${s.clusterIPs.join(',')}|${s.externalName ?? ''}|${s.ports.map((p) => `${p.name}/${p.protocol}/${p.port}`).join(',')}\n`);
  for (const e of model.endpointSlices) h.update(`${e.namespace}/${e.name}|${JSON.stringify(e.endpoints)}|${JSON.stringify(e.ports)}\n`);
  for (const p of model.pods) h.update(`${p.namespace}/${p.name}|${p.podIP ?? ''}|${p.phase}\n`);
  for (const n of model.namespaces.keys()) h.update(`ns ${n}\n`);
  // Keep it positive and below 2^31 so serial arithmetic (RFC 1982) never wraps oddly.
  return h.digest().readUInt32BE(0) & 0x7fffffff;
}
