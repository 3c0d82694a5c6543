// The kubernetes plugin's immutable view of the cluster: the model filtered by the plugin's
// options and indexed for lookups. A reload builds a new store and swaps one reference.
import { createHash } from 'node:crypto';
import type { ClusterModel, EndpointSlice, Pod, Service, ServiceImport } from '../../cluster/model/model.js';
import { matchesSelector } from '../../cluster/model/selector.js';
import { canonicalIp } from '../../pkg/ip.js';
import type { KubernetesConfig } from './config.js';
import { endpointName, SliceImageBuilder, SliceView, type EndpointAddress, type ReadySlice, type SliceImage } from './slice-image.js';
import { encodeServices, NO_SOURCE, NO_STRINGS, ServiceTable, type ServiceImage } from './service-table.js';

export { endpointName, type EndpointAddress, type ReadySlice } from './slice-image.js';

const key = (namespace: string, name: string): string => `${name}.${namespace}`;

/**
 * Everything a store holds, as arrays of plain data: what a loader thread builds and hands to
 * the serving thread in chunks (structured clone), and what the serving thread assembles into a
 * store without touching the manifests. Services are kept as encodeServices keeps them (no
 * labels, annotations, selector or source), pods in the lean form of leanPod.
 */
export interface StoreParts {
  namespaces: string[];
  services: [string, Service][];
  slices: [string, ReadySlice[]][];
  imports: [string, ServiceImport][];
  importSlices: [string, ReadySlice[]][];
  /** Canonical cluster IP -> key of the first service holding it. */
  serviceByIp: [string, string][];
  podsByIp: [string, Pod[]][];
  serial: number;
}

/** A Pod as `pods verified` and autopath read it: its names, addresses and phase. */
export function leanPod(pod: Pod): Pod {
  const out: { -readonly [K in keyof Pod]?: Pod[K] } = {
    name: pod.name,
    namespace: pod.namespace,
    labels: NO_STRINGS,
    annotations: NO_STRINGS,
    source: NO_SOURCE,
    podIPs: pod.podIPs,
    phase: pod.phase,
    deleting: pod.deleting,
    hostNetwork: pod.hostNetwork,
  };
  if (pod.podIP !== undefined) out.podIP = pod.podIP;
  if (pod.hostname !== undefined) out.hostname = pod.hostname;
  if (pod.subdomain !== undefined) out.subdomain = pod.subdomain;
  if (pod.nodeName !== undefined) out.nodeName = pod.nodeName;
  if (pod.ready !== undefined) out.ready = pod.ready;
  return out as Pod;
}

export class KubernetesStore {
  readonly namespaces: ReadonlySet<string>;
  readonly services: ReadonlyMap<string, Service>;
  readonly imports: ReadonlyMap<string, ServiceImport>;
  readonly importSlices: ReadonlyMap<string, ReadySlice[]>;
  /** Service slices and the endpoint reverse index, as an image (slice-image.ts). */
  private readonly slices: SliceView;
  /** Cluster IP -> key of the first service holding it. */
  private readonly serviceByIp: ReadonlyMap<string, string>;
  /** status.podIP -> pods (pods verified). */
  private readonly podsByIp: ReadonlyMap<string, Pod[]>;
  readonly serial: number;
  /**
   * The cluster model the store was built from, kept only when asked (tools that also look at
   * pods: resolve, resolv-conf, the library); a serving process does not hold it.
   */
  readonly model: ClusterModel | undefined;

  /** Use fromModel, fromParts or a StoreAssembler. */
  constructor(
    private readonly cfg: KubernetesConfig,
    maps: {
      namespaces: ReadonlySet<string>;
      services: ReadonlyMap<string, Service>;
      slices: SliceView;
      imports: ReadonlyMap<string, ServiceImport>;
      importSlices: ReadonlyMap<string, ReadySlice[]>;
      serviceByIp: ReadonlyMap<string, string>;
      podsByIp: ReadonlyMap<string, Pod[]>;
    },
    serial: number,
    model: ClusterModel | undefined,
  ) {
    this.namespaces = maps.namespaces;
    this.services = maps.services;
    this.slices = maps.slices;
    this.imports = maps.imports;
    this.importSlices = maps.importSlices;
    this.serviceByIp = maps.serviceByIp;
    this.podsByIp = maps.podsByIp;
    this.serial = serial;
    this.model = model;
  }

  /** A store with no data (a plugin whose data is still loading). */
  static empty(cfg: KubernetesConfig): KubernetesStore {
    return new StoreAssembler(cfg).finish();
  }

  /** Builds the store from a cluster model: the model filtered by the plugin's options and indexed. */
  static fromModel(model: ClusterModel, cfg: KubernetesConfig, opts: { retainModel?: boolean } = {}): KubernetesStore {
    const { parts, image, services } = storeImage(model, cfg);
    const a = new StoreAssembler(cfg);
    a.add(parts);
    a.addServices(services);
    a.addImage(image);
    return a.finish(opts.retainModel === false ? undefined : model);
  }

  /** Assembles a store from its parts (see StoreParts). */
  static fromParts(parts: StoreParts, cfg: KubernetesConfig, model?: ClusterModel): KubernetesStore {
    const a = new StoreAssembler(cfg);
    a.add(parts);
    return a.finish(model);
  }

  /** The store's data as parts (what fromParts takes back); every service's slices decoded. */
  parts(): StoreParts {
    return {
      namespaces: [...this.namespaces],
      services: [...this.services],
      slices: [...this.slices.entries()],
      imports: [...this.imports],
      importSlices: [...this.importSlices],
      serviceByIp: [...this.serviceByIp],
      podsByIp: [...this.podsByIp],
      serial: this.serial,
    };
  }

  /** CoreDNS's namespaceExposed: listed by `namespaces` (when set) and existing after namespace_labels. */
  namespaceExposed(ns: string): boolean {
    if (this.cfg.namespaces.size > 0 && !this.cfg.namespaces.has(ns)) return false;
    return this.namespaces.has(ns);
  }

  service(namespace: string, name: string): Service | undefined {
    return this.services.get(key(namespace, name));
  }

  /** The service's ready slices in model order: decoded from the image when first asked for, then kept. */
  slicesOf(namespace: string, name: string): ReadySlice[] {
    return this.slices.slicesOf(key(namespace, name)) ?? [];
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
    const k = this.serviceByIp.get(ip);
    const svc = k === undefined ? undefined : this.services.get(k);
    if (svc && (!restrict || this.namespaceExposed(svc.namespace))) return [`${svc.name}.${svc.namespace}.svc`];
    const out: string[] = [];
    for (const [relative, namespace] of this.slices.targets(ip)) {
      if (restrict && !this.namespaceExposed(namespace)) continue;
      out.push(relative);
    }
    return out;
  }
}

function readySlice(slice: EndpointSlice, podNames: boolean): ReadySlice {
  const addresses: EndpointAddress[] = [];
  for (const ep of slice.endpoints) {
    // conditions.ready unset counts as ready (CoreDNS object/endpoint.go).
    if (ep.ready === false) continue;
    for (const ip of ep.addresses) {
      const a: EndpointAddress = { ip, name: endpointName(ip, ep.hostname, ep.targetRefName, podNames) };
      if (ep.zone !== undefined) a.zone = ep.zone.toLowerCase();
      addresses.push(a);
    }
  }
  return { ports: slice.ports, addresses };
}

/**
 * The model filtered by the plugin's options and indexed (runs on a loader thread): the service
 * slices as an image, built straight from the model, and the rest as parts (`slices` left out).
 */
export function storeImage(
  model: ClusterModel,
  cfg: KubernetesConfig,
  previous?: SliceImageCache,
): { parts: Omit<StoreParts, 'slices' | 'services'>; image: SliceImage; services: ServiceImage; cache: SliceImageCache } {
  const nsSelector = cfg.namespaceLabels;
  const namespaces = [...model.namespaces.values()].filter((ns) => !nsSelector || matchesSelector(nsSelector, ns.labels)).map((ns) => ns.name);
  const nsSet = new Set(namespaces);
  const labelOk = (labels: Readonly<Record<string, string>>): boolean => !cfg.labels || matchesSelector(cfg.labels, labels);

  const services = new Map<string, Service>();
  for (const svc of model.services) {
    if (!labelOk(svc.labels)) continue;
    const k = key(svc.namespace, svc.name);
    // The model's own objects: encodeServices keeps what DNS reads of them.
    if (!services.has(k)) services.set(k, svc);
  }
  const serviceByIp = new Map<string, string>();
  // The sort key made once per service, not twice per comparison (10k services: 130k of them).
  const sorted = [...services].map(([k, svc]): [string, string, Service] => [`${svc.namespace}/${svc.name}`, k, svc]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  for (const [, k, svc] of sorted) {
    if (svc.headless) continue;
    for (const ip of svc.clusterIPs) {
      const c = canonicalIp(ip);
      if (c && !serviceByIp.has(c)) serviceByIp.set(c, k);
    }
  }

  // The image depends on the slices alone (and the options): a load that changed no slice (a new
  // Service without endpoints, a changed Ingress) gives the same slice objects in the same order.
  const reuse = previous !== undefined && sameItems(previous.slices, model.endpointSlices) ? previous.image : undefined;
  const slices = new SliceImageBuilder();
  const importSlices = new Map<string, ReadySlice[]>();
  if (!cfg.noEndpoints && (reuse === undefined || cfg.multicluster.length > 0)) {
    let order = 0;
    for (const slice of model.endpointSlices) {
      order++;
      if (!labelOk(slice.labels)) continue;
      const mcService = slice.labels['multicluster.kubernetes.io/service-name'];
      if (mcService && cfg.multicluster.length > 0) {
        const ready = readySlice(slice, cfg.endpointPodNames);
        const cluster = slice.labels['multicluster.kubernetes.io/source-cluster'];
        if (cluster !== undefined) ready.cluster = cluster;
        push(importSlices, key(slice.namespace, mcService), ready);
        continue;
      }
      if (!slice.serviceName || reuse) continue;
      slices.modelSlice(key(slice.namespace, slice.serviceName), slice, order, cfg.endpointPodNames);
    }
  }

  const imports = new Map<string, ServiceImport>();
  if (cfg.multicluster.length > 0) {
    for (const si of model.serviceImports) {
      if (nsSelector && !nsSet.has(si.namespace)) continue;
      imports.set(key(si.namespace, si.name), si);
    }
  }

  const podsByIp = new Map<string, Pod[]>();
  if (cfg.pods === 'verified') {
    for (const pod of model.pods) {
      if (!labelOk(pod.labels) || pod.deleting || !pod.podIP) continue;
      if (pod.phase === 'Succeeded' || pod.phase === 'Failed' || pod.phase === 'Unknown') continue;
      push(podsByIp, pod.podIP, leanPod(pod));
    }
  }
  const served = {
    namespaces,
    imports: [...imports],
    importSlices: [...importSlices],
    serviceByIp: [...serviceByIp],
    podsByIp: [...podsByIp],
  };
  const image = reuse ?? slices.finish();
  const serviceImage = encodeServices(services);
  return {
    parts: { ...served, serial: servedSerial(served, image, serviceImage) },
    image,
    services: serviceImage,
    cache: { slices: model.endpointSlices, image },
  };
}

/** A slice image and the slices it was built from, for the next build of the same view. */
export interface SliceImageCache {
  readonly slices: readonly EndpointSlice[];
  readonly image: SliceImage;
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Builds a store from parts that may arrive in pieces (a loader thread sends them a chunk at a
 * time so the serving thread never stops for long): each `add` indexes what it is given. The
 * service slices come either as one image (`addImage`, what a loader thread sends) or as
 * ReadySlice lists in parts, which are encoded into an image here.
 */
export class StoreAssembler {
  private readonly namespaces = new Set<string>();
  /** Services given as parts (fromParts); the loader thread sends an image instead. */
  private readonly services = new Map<string, Service>();
  private serviceImage: ServiceImage | undefined;
  private image: SliceImage | undefined;
  private builder: SliceImageBuilder | undefined;
  private readonly imports = new Map<string, ServiceImport>();
  private readonly importSlices = new Map<string, ReadySlice[]>();
  private readonly serviceByIp = new Map<string, string>();
  private readonly podsByIp = new Map<string, Pod[]>();
  private serial = 0;

  constructor(private readonly cfg: KubernetesConfig) {}

  add(parts: Partial<StoreParts>): void {
    for (const n of parts.namespaces ?? []) this.namespaces.add(n);
    if (parts.services && parts.services.length > 0) {
      if (this.serviceImage) throw new Error('kubernetes store: services given both as an image and as parts');
      for (const [k, v] of parts.services) this.services.set(k, v);
    }
    if (parts.slices && parts.slices.length > 0) {
      if (this.image) throw new Error('kubernetes store: slices given both as an image and as parts');
      this.builder ??= new SliceImageBuilder();
      for (const [k, v] of parts.slices) for (const slice of v) this.builder.ready(k, slice);
    }
    for (const [k, v] of parts.imports ?? []) this.imports.set(k, v);
    for (const [k, v] of parts.importSlices ?? []) this.importSlices.set(k, v);
    for (const [ip, k] of parts.serviceByIp ?? []) this.serviceByIp.set(ip, k);
    for (const [k, v] of parts.podsByIp ?? []) this.podsByIp.set(k, v);
    if (parts.serial !== undefined) this.serial = parts.serial;
  }

  /** The Services, as the loader thread encoded them (service-table.ts). */
  addServices(image: ServiceImage): void {
    if (this.serviceImage || this.services.size > 0) throw new Error('kubernetes store: services given twice');
    this.serviceImage = image;
  }

  /** The service slices, as the loader thread built them. */
  addImage(image: SliceImage): void {
    if (this.image || this.builder) throw new Error('kubernetes store: slices given twice');
    this.image = image;
  }

  finish(model?: ClusterModel): KubernetesStore {
    const image = this.image ?? (this.builder ?? new SliceImageBuilder()).finish();
    const services = new ServiceTable(this.serviceImage ?? encodeServices(this.services));
    // A cluster IP naming a service the store does not hold answers nothing (as before, when
    // the two were joined here): drop it, so reverse() never finds a key without a service.
    for (const [ip, k] of this.serviceByIp) if (!services.has(k)) this.serviceByIp.delete(ip);
    return new KubernetesStore(
      this.cfg,
      {
        namespaces: this.namespaces,
        services,
        slices: new SliceView(image),
        imports: this.imports,
        importSlices: this.importSlices,
        serviceByIp: this.serviceByIp,
        podsByIp: this.podsByIp,
      },
      this.serial,
      model,
    );
  }
}

function push<K, V>(map: Map<K, V[]>, k: K, v: V): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

/**
 * CoreDNS's serial is the time of the last object change; without an API server the content is
 * what changes, so the serial is derived from it: same input, same serial. It is the digest of
 * what the store serves (the encoded Services, the slice image, the other parts), not of the
 * model: the loader thread has those bytes at hand, so hashing them costs a few ms instead of
 * building a string per object (about 75 ms for 10k Services and 100k endpoints), and a change
 * DNS cannot see (a not-ready endpoint's address, a pod under `pods insecure`) leaves it as it is.
 */
function servedSerial(parts: Omit<StoreParts, 'slices' | 'services' | 'serial'>, image: SliceImage, services: ServiceImage): number {
  const h = createHash('sha256');
  const add = (label: string, v: string | ArrayBufferView): void => {
    // The length first, so no two different sequences of parts hash the same bytes.
    h.update(`${label} ${typeof v === 'string' ? v.length : v.byteLength}\n`);
    h.update(typeof v === 'string' ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  };
  add('service keys', services.keys);
  add('services', services.json);
  add('service offsets', services.at);
  const fields = image as unknown as Record<string, string | ArrayBufferView>;
  for (const k of Object.keys(fields).sort()) add(k, fields[k]!);
  add('parts', JSON.stringify([parts.namespaces, parts.imports, parts.importSlices, parts.serviceByIp, parts.podsByIp]));
  // Keep it positive and below 2^31 so serial arithmetic (RFC 1982) never wraps oddly.
  return h.digest().readUInt32BE(0) & 0x7fffffff;
}
