// The typed cluster model: what the manifests declare, after the control-plane defaults
// (cluster IP allocation, Endpoints -> EndpointSlice mirroring) have been applied.
// Everything downstream (record store, resolv.conf emulation) reads only this.
import type { Finding } from './finding.js';
import type { ManifestLimits } from './limits.js';
import type { LabelSelector } from './selector.js';

/** Where an object came from, for messages that name the file and line. */
export interface SourceRef {
  readonly file: string;
  /** 1-based line of the object's first line (its document or list item). */
  readonly line: number;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly source: SourceRef;
}

export interface NamespaceObject {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Absent for namespaces that exist only because an object lives in them. */
  readonly source?: SourceRef;
}

export interface ServicePort {
  /** '' for an unnamed port. */
  readonly name: string;
  /** 'TCP' | 'UDP' | 'SCTP' as written (default TCP). */
  readonly protocol: string;
  readonly port: number;
  readonly targetPort?: number | string;
  readonly nodePort?: number;
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';

export interface Service extends ObjectMeta {
  readonly type: ServiceType;
  /** Headless services have ['None']; ExternalName services have []. Allocated when absent. */
  readonly clusterIPs: readonly string[];
  readonly headless: boolean;
  readonly externalName?: string;
  readonly ports: readonly ServicePort[];
  readonly selector?: Readonly<Record<string, string>>;
  readonly publishNotReadyAddresses: boolean;
  readonly ipFamilies: readonly ('IPv4' | 'IPv6')[];
  readonly externalIPs: readonly string[];
  /** status.loadBalancer.ingress, as written or as the LoadBalancer pool filled it (emulate/edge.ts). */
  readonly loadBalancer?: readonly { readonly ip?: string; readonly hostname?: string }[];
}

export interface EndpointPort {
  readonly name: string;
  readonly protocol: string;
  readonly port: number;
}

export interface Endpoint {
  readonly addresses: readonly string[];
  /** conditions.ready as written; undefined means unset, which CoreDNS counts as ready. */
  readonly ready?: boolean;
  readonly hostname?: string;
  readonly targetRefName?: string;
  readonly targetRefKind?: string;
  readonly zone?: string;
  readonly nodeName?: string;
}

export interface EndpointSlice extends ObjectMeta {
  /** Label kubernetes.io/service-name (or, in multicluster, multicluster.kubernetes.io/service-name). */
  readonly serviceName?: string;
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly ports: readonly EndpointPort[];
  readonly endpoints: readonly Endpoint[];
  /** True when this slice was mirrored from a v1 Endpoints object. */
  readonly mirrored: boolean;
}

export interface Pod extends ObjectMeta {
  readonly podIP?: string;
  readonly podIPs: readonly string[];
  /** status.phase; 'Running' when the manifest has no status. */
  readonly phase: string;
  readonly deleting: boolean;
  readonly hostname?: string;
  readonly subdomain?: string;
  readonly nodeName?: string;
  readonly hostNetwork: boolean;
  /**
   * Whether the pod counts as ready for the endpoints controller: true unless status.conditions
   * has Ready=False, status.phase is not Running, the annotation `clusterdns.io/ready: "false"`
   * is set, or ClusterOptions.notReady names it. Set on every pod of a built model.
   */
  readonly ready?: boolean;
  /** Named and unnamed ports of containers (and restartable init containers), for targetPort lookup. */
  readonly containerPorts?: readonly ContainerPort[];
  /** The controlling owner: ownerReferences (controller) of a manifest pod, or the workload a derived pod comes from. */
  readonly owner?: { readonly kind: string; readonly name: string };
  /** True for pods clusterdns derived from a workload (not written in the manifests). */
  readonly derived?: boolean;
  /** spec.dnsPolicy as written (ClusterFirst, ClusterFirstWithHostNet, Default, None); absent = ClusterFirst. */
  readonly dnsPolicy?: string;
  /** spec.dnsConfig, for the pod's resolv.conf (src/resolver/kubelet.ts). */
  readonly dnsConfig?: PodDNSConfig;
  /** spec.hostAliases, appended to the pod's kubelet-managed /etc/hosts. */
  readonly hostAliases?: readonly HostAlias[];
  /** spec.setHostnameAsFQDN. */
  readonly setHostnameAsFQDN?: boolean;
}

/** pod.spec.dnsConfig. */
export interface PodDNSConfig {
  readonly nameservers?: readonly string[];
  readonly searches?: readonly string[];
  /** `value` absent for flag options such as `single-request`. */
  readonly options?: readonly { readonly name: string; readonly value?: string }[];
}

/** One pod.spec.hostAliases entry. */
export interface HostAlias {
  readonly ip: string;
  readonly hostnames: readonly string[];
}

export interface ContainerPort {
  /** '' when unnamed. */
  readonly name: string;
  readonly protocol: string;
  readonly containerPort: number;
}

/** A node pods are scheduled on (data only: names, addresses, zone). */
export interface ClusterNode {
  readonly name: string;
  /** InternalIPs, at most one per family (hostNetwork pods get these). */
  readonly addresses: readonly string[];
  /** topology.kubernetes.io/zone, copied into endpoints' zone. */
  readonly zone?: string;
  readonly labels?: Readonly<Record<string, string>>;
}

/** A workload read from the manifests and what became of it. */
export interface WorkloadInfo {
  readonly kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'Job' | 'CronJob';
  readonly name: string;
  readonly namespace: string;
  readonly source: SourceRef;
  /** Names of the pods clusterdns derived for it (empty when its pods are in the manifests). */
  readonly derivedPods: readonly string[];
  /** For a Deployment: the ReplicaSet name (`<deploy>-<pod-template-hash>`), derived or found. */
  readonly replicaSet?: string;
  /** True when the manifests already hold its pods (or, for a Deployment, its ReplicaSet). */
  readonly hasManifestPods: boolean;
}

export interface ServiceImport extends ObjectMeta {
  readonly type: 'ClusterSetIP' | 'Headless';
  readonly ips: readonly string[];
  readonly ports: readonly EndpointPort[];
}

/** An object the API server would reject (the findings say why): not served. */
export interface RejectedObject extends SourceRef {
  /** '' when the object has no usable kind, apiVersion or name. */
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
}

export interface ClusterModel {
  /** Keyed by name. Includes namespaces implied by objects living in them. */
  readonly namespaces: ReadonlyMap<string, NamespaceObject>;
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly pods: readonly Pod[];
  readonly serviceImports: readonly ServiceImport[];
  /** How many manifest objects were read (all kinds, including ignored ones). */
  readonly objectCount: number;
  /** Objects left out because the API server would reject them, in file and line order. */
  readonly rejected?: readonly RejectedObject[];
  /** Kinds that were read but ignored (unknown kinds, CRDs, other API groups), with counts; for a debug log. */
  readonly ignoredKinds?: ReadonlyMap<string, number>;
  /** Nodes pods were scheduled on: Node objects of the manifests when there are any, else ClusterOptions.nodes. */
  readonly nodes?: readonly ClusterNode[];
  /** Workloads found in the manifests, in namespace/name order. */
  readonly workloads?: readonly WorkloadInfo[];
  /** "namespace/name" of the Services whose EndpointSlices the endpoints controller generated from pods. */
  readonly controllerServices?: ReadonlySet<string>;
  /** Ingresses, Gateways, routes, DNSEndpoints and load balancer statuses (emulate/edge.ts). */
  readonly edge?: EdgeModel;
  /**
   * What the load that built the model found (rejected objects, warnings, infos), sorted: kept with
   * the model so that a tool handed the model by a loader thread reports them without loading again.
   */
  readonly findings?: readonly Finding[];
}

export interface ClusterOptions {
  /** Service CIDRs to allocate cluster IPs from, IPv4 first. */
  readonly serviceCIDRs: readonly string[];
  /** Namespace for objects that name none. */
  readonly defaultNamespace: string;
  /** Pod CIDRs to allocate pod IPs from, one per family; the first family is the pods' primary. */
  readonly podCIDRs?: readonly string[];
  /** Nodes to schedule derived pods on (used when the manifests hold no Node objects). */
  readonly nodes?: readonly ClusterNode[];
  /** Pods to mark not ready, for testing: "namespace/name" entries, '*' and '?' globs allowed. */
  readonly notReady?: readonly string[];
  /** LoadBalancer address pools (--loadbalancer-cidr); default DEFAULT_LB_CIDRS of emulate/loadbalancer.ts. */
  readonly loadBalancerCIDRs?: readonly string[];
  /** Node port range LOW-HIGH (--service-node-port-range); default 30000-32767. */
  readonly nodePortRange?: string;
  /**
   * Any error fails the whole load (ManifestError), as clusterdns did before admission: for CI
   * (`--strict`). Otherwise an object with an error is left out and the rest loads.
   */
  readonly strict?: boolean;
  /**
   * Bytes of manifest text a serving load keeps for the next one (--manifest-history-bytes), so
   * that an object whose new version is rejected keeps its previous version served (admit/history.ts).
   */
  readonly admissionHistoryBytes?: number;
  /**
   * false: a feed keeps no admission history at all, so a reload admits every object as a first
   * load would (no previous version kept, nor a warning that none is): `diff`'s NEW side, loaded
   * as a reload of OLD, must be what a fresh load of NEW serves.
   */
  readonly admissionHistory?: boolean;
  /** Nodes of one manifest CRD's openAPIV3Schema applied at admission (--max-crd-schema-nodes; default 20000). */
  readonly maxCrdSchemaNodes?: number;
  /** Bounds on manifest files and objects (defaults in limits.ts: defaultManifestLimits). */
  readonly manifestLimits?: Partial<ManifestLimits>;
  /**
   * Where a served feed keeps an image of its last load, so that a start on unchanged files
   * answers without parsing them (feed-image.ts); absent: no image is read or written.
   */
  readonly image?: { readonly dir: string; readonly budgetBytes: number };
}

/** kind-style default nodes: three nodes in three zones, dual-stack node addresses. */
export const defaultNodes: readonly ClusterNode[] = [
  { name: 'kind-control-plane', addresses: ['172.18.0.2', 'fc00:f853:ccd:e793::2'], zone: 'zone-a' },
  { name: 'kind-worker', addresses: ['172.18.0.3', 'fc00:f853:ccd:e793::3'], zone: 'zone-b' },
  { name: 'kind-worker2', addresses: ['172.18.0.4', 'fc00:f853:ccd:e793::4'], zone: 'zone-c' },
];

export const defaultClusterOptions: ClusterOptions = {
  serviceCIDRs: ['10.96.0.0/12', 'fd00:10:96::/112'],
  defaultNamespace: 'default',
  podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
  nodes: defaultNodes,
  notReady: [],
};

// Edge objects (Ingress, Gateway API, DNSEndpoint) and load balancer statuses, as the edge
// controllers leave them (emulate/edge.ts).

/** One status.loadBalancer.ingress (or Gateway status address) entry. */
export interface LbAddress {
  readonly ip?: string;
  readonly hostname?: string;
}

export interface EdgeStatus {
  readonly addresses: readonly LbAddress[];
  /**
   * Where the addresses come from: the manifest, or the controller clusterdns plays; 'pending':
   * the manifest writes a status without an address (or the controller would refuse the object),
   * so it has none; 'none': nothing to fill (not a LoadBalancer, or the pool is exhausted).
   */
  readonly origin: 'manifest' | 'pool' | 'controller' | 'none' | 'pending';
  /** Why a 'pending' status has no address, for `clusterdns check`. */
  readonly reason?: string;
}

export interface IngressInfo extends ObjectMeta {
  /** spec.ingressClassName, else the kubernetes.io/ingress.class annotation, else the default class. */
  readonly className?: string;
  readonly hosts: readonly string[];
  readonly status: EdgeStatus;
}

export interface IngressClassInfo {
  readonly name: string;
  readonly controller?: string;
  readonly isDefault: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly source: SourceRef;
}

export interface ListenerInfo {
  readonly name: string;
  readonly hostname?: string;
  readonly port?: number;
  readonly protocol: string;
  readonly from: 'Same' | 'All' | 'Selector' | 'None';
  readonly selector?: LabelSelector;
  /** allowedRoutes.kinds; undefined means the protocol's default kinds. */
  readonly kinds?: readonly string[];
}

export interface GatewayInfo extends ObjectMeta {
  readonly className: string;
  readonly listeners: readonly ListenerInfo[];
  readonly status: EdgeStatus;
}

export interface GatewayClassInfo {
  readonly name: string;
  readonly controllerName?: string;
  readonly source: SourceRef;
}

export type RouteKind = 'HTTPRoute' | 'TLSRoute' | 'GRPCRoute';

export interface ParentRef {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface RouteInfo extends ObjectMeta {
  readonly kind: RouteKind;
  readonly hostnames: readonly string[];
  readonly parentRefs: readonly ParentRef[];
}

/** A hostname a route really receives traffic for, through one Gateway. */
export interface RouteHost {
  readonly host: string;
  readonly route: RouteInfo;
  readonly gateway: GatewayInfo;
}

export interface DnsEndpointRecord {
  readonly dnsName: string;
  readonly recordType: string;
  readonly targets: readonly string[];
  readonly ttl?: number;
}

export interface DnsEndpointInfo extends ObjectMeta {
  readonly endpoints: readonly DnsEndpointRecord[];
}

export interface EdgeModel {
  /** "namespace/name" of every Service -> its load balancer status (only LoadBalancer Services get a filled one). */
  readonly serviceStatus: ReadonlyMap<string, EdgeStatus>;
  readonly ingresses: readonly IngressInfo[];
  readonly ingressClasses: readonly IngressClassInfo[];
  readonly gateways: readonly GatewayInfo[];
  readonly gatewayClasses: readonly GatewayClassInfo[];
  readonly routes: readonly RouteInfo[];
  /** Route hostnames where the Gateway API says traffic flows (attachment and hostname intersection). */
  readonly routeHosts: readonly RouteHost[];
  readonly dnsEndpoints: readonly DnsEndpointInfo[];
}
