// The typed cluster model: what the manifests declare, after the control-plane defaults
// (cluster IP allocation, Endpoints -> EndpointSlice mirroring) have been applied.
// Everything downstream (record store, resolv.conf emulation) reads only this.
import type { EdgeModel } from './edge.js';

import type { ManifestLimits } from './yaml-docs.js';

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
  /** status.loadBalancer.ingress, as written or as the LoadBalancer pool filled it (src/cluster/edge.ts). */
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
  /** Ingresses, Gateways, routes, DNSEndpoints and load balancer statuses (src/cluster/edge.ts). */
  readonly edge?: EdgeModel;
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
  /** LoadBalancer address pools (--loadbalancer-cidr); default DEFAULT_LB_CIDRS of loadbalancer.ts. */
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
   * that an object whose new version is rejected keeps its previous version served (history.ts).
   */
  readonly admissionHistoryBytes?: number;
  /** Nodes of one manifest CRD's openAPIV3Schema applied at admission (--max-crd-schema-nodes; default 20000). */
  readonly maxCrdSchemaNodes?: number;
  /** Bounds on manifest files and objects (defaults in yaml-docs.ts: defaultManifestLimits). */
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

/** A problem in the input, located so a user can fix it. */
export interface Finding {
  readonly file: string;
  /** 1-based; 0 when the finding is about the whole path (a missing file, a directory). */
  readonly line: number;
  /** 1-based column, when the finding is about one place in the line (a YAML syntax error). */
  readonly column?: number;
  /**
   * error: the object is rejected, as the API server rejects it (not served); warning: served, but
   * something about it breaks or degrades DNS; info: worth knowing, never a failure (a kind DNS
   * does not use, a status clusterdns filled in).
   */
  readonly severity: 'error' | 'warning' | 'info';
  readonly message: string;
  /** A stable identifier of the kind of finding (e.g. 'selector-no-pods'), for model checks. */
  readonly code?: string;
}

/** "file:line", or just "file" for a finding about a whole path (line 0). */
export function findingPlace(f: Pick<Finding, 'file' | 'line'>): string {
  return f.line > 0 ? `${f.file}:${f.line}` : f.file;
}

/** Thrown when manifests cannot be loaded; carries every error found, not just the first. */
export class ManifestError extends Error {
  constructor(readonly findings: readonly Finding[]) {
    super(
      findings
        .filter((f) => f.severity === 'error')
        .map((f) => `${findingPlace(f)}: ${f.message}`)
        .join('\n'),
    );
    this.name = 'ManifestError';
  }
}
