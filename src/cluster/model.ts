// The typed cluster model: what the manifests declare, after the control-plane defaults
// (cluster IP allocation, Endpoints -> EndpointSlice mirroring) have been applied.
// Everything downstream (record store, resolv.conf emulation) reads only this.

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
}

export interface ServiceImport extends ObjectMeta {
  readonly type: 'ClusterSetIP' | 'Headless';
  readonly ips: readonly string[];
  readonly ports: readonly EndpointPort[];
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
}

export interface ClusterOptions {
  /** Service CIDRs to allocate cluster IPs from, IPv4 first. */
  readonly serviceCIDRs: readonly string[];
  /** Namespace for objects that name none. */
  readonly defaultNamespace: string;
}

export const defaultClusterOptions: ClusterOptions = {
  serviceCIDRs: ['10.96.0.0/12', 'fd00:10:96::/112'],
  defaultNamespace: 'default',
};

/** A problem in the input, located so a user can fix it. */
export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

/** Thrown when manifests cannot be loaded; carries every error found, not just the first. */
export class ManifestError extends Error {
  constructor(readonly findings: readonly Finding[]) {
    super(
      findings
        .filter((f) => f.severity === 'error')
        .map((f) => `${f.file}:${f.line}: ${f.message}`)
        .join('\n'),
    );
    this.name = 'ManifestError';
  }
}
