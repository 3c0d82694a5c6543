// The cluster data contract: what a backend serving cluster zones from manifests (the kubernetes
// plugin) publishes, so the plugins that answer from the same data (k8s_external) and the tools
// that list it or reuse its model (`clusterdns records`, resolve, resolv-conf, the library) need
// none of its classes. The shapes below are the few fields those readers use; the backend's own
// types satisfy them structurally.
import type { ListedQuestion, Plugin } from './plugin.js';

export interface ClusterPort {
  readonly name: string;
  readonly protocol: string;
  readonly port: number;
}

export interface ClusterService {
  readonly name: string;
  readonly namespace: string;
  /** ClusterIP, NodePort, LoadBalancer or ExternalName. */
  readonly type: string;
  readonly headless: boolean;
  /** The cluster IPs ([] for headless and ExternalName services). */
  readonly clusterIPs: readonly string[];
  readonly ports: readonly ClusterPort[];
  /** spec.externalIPs. */
  readonly externalIPs: readonly string[];
  /** status.loadBalancer.ingress. */
  readonly loadBalancer?: readonly { readonly ip?: string; readonly hostname?: string }[];
}

/** A slice's ready addresses (with the name DNS gives each) and its ports. */
export interface ClusterSlice {
  readonly ports: readonly ClusterPort[];
  readonly addresses: readonly { readonly ip: string; readonly name: string }[];
}

/**
 * One loaded data set, never changed in place: a load swaps in a new one, so a reader may key
 * derived indexes on it. The model itself (for tools that read pods) is added to this interface
 * by the plugins that load manifests (declaration merging), so the chain imports no cluster type.
 */
export interface ClusterData {
  /** The SOA serial of this data. */
  readonly serial: number;
  readonly services: Pick<ReadonlyMap<string, ClusterService>, 'values' | 'size'>;
  service(namespace: string, name: string): ClusterService | undefined;
  slicesOf(namespace: string, name: string): readonly ClusterSlice[];
  /** The namespace exists and the backend's `namespaces` / `namespace_labels` expose it. */
  namespaceExposed(namespace: string): boolean;
}

/** A plugin serving cluster zones from manifests (CoreDNS's kubernetes plugin as Externaler). */
export interface ClusterDataProvider extends Plugin {
  /** Zones answered (lowercased, fully qualified). */
  readonly zones: readonly string[];
  /** TTL of its records; k8s_external's SRV and CNAME records carry it. */
  readonly ttl: number;
  /** The manifest paths its data is loaded from (the block's own, else the command line's). */
  readonly manifestPaths: readonly string[];
  /** The block's own `manifests` paths; undefined when it reads the command line's. */
  readonly blockManifests: readonly string[] | undefined;
  /** The data served now. */
  clusterData(): ClusterData;
  /**
   * Every question whose answer holds its records, with the zone they belong to, for
   * `clusterdns records` and `sync` to ask through the server.
   */
  clusterQuestions(): Iterable<ListedQuestion>;
  /**
   * Set by `clusterdns records`: name the server's own addresses from the Corefile alone (bind
   * lines, else 127.0.0.1), not from this machine's interfaces, so the listing is the same on
   * every machine.
   */
  machineIndependent: boolean;
}

export function isClusterDataProvider(p: Plugin | undefined): p is ClusterDataProvider {
  const c = p as Partial<ClusterDataProvider> | undefined;
  return typeof c?.clusterData === 'function' && typeof c.clusterQuestions === 'function';
}
