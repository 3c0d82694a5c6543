// CRDs that application charts commonly use, known by name (group, served versions, kind, scope)
// so that their objects are not "no matches for kind" when the manifests do not carry the CRD
// itself. Facts from each project's published CRD manifests; no schema unless given (objects are
// then accepted as they are). A CRD in the manifests replaces the entry of its group and kind.

export interface KnownCrd {
  readonly group: string;
  /** Served versions, preferred first. */
  readonly versions: readonly string[];
  readonly kind: string;
  readonly namespaced: boolean;
  /** openAPIV3Schema, as the project's CRD publishes it. */
  readonly schema?: Readonly<Record<string, unknown>>;
}

const str = { type: 'string' } as const;
const int64 = { type: 'integer', format: 'int64' } as const;

// kubernetes-sigs/external-dns config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml. Targets
// are any strings (the CRD has no format: a CNAME's target or a TXT value is not an address).
const DNS_ENDPOINT_SCHEMA = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        endpoints: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              dnsName: str,
              labels: { type: 'object', additionalProperties: str },
              providerSpecific: { type: 'array', items: { type: 'object', properties: { name: str, value: str } } },
              recordTTL: int64,
              recordType: str,
              setIdentifier: str,
              targets: { type: 'array', items: str },
            },
          },
        },
      },
    },
    status: { type: 'object', properties: { observedGeneration: int64 } },
  },
} as const;

const ns = (group: string, versions: readonly string[], ...kinds: string[]): KnownCrd[] => kinds.map((kind) => ({ group, versions, kind, namespaced: true }));
const cluster = (group: string, versions: readonly string[], kind: string): KnownCrd => ({ group, versions, kind, namespaced: false });

export const KNOWN_CRDS: readonly KnownCrd[] = [
  // external-dns (kubernetes-sigs/external-dns)
  { group: 'externaldns.k8s.io', versions: ['v1alpha1'], kind: 'DNSEndpoint', namespaced: true, schema: DNS_ENDPOINT_SCHEMA },
  // Multi-Cluster Services API (kubernetes-sigs/mcs-api config/crd)
  ...ns('multicluster.x-k8s.io', ['v1alpha1'], 'ServiceImport', 'ServiceExport'),
  // cert-manager (cert-manager/cert-manager deploy/crds)
  ...ns('cert-manager.io', ['v1'], 'Certificate', 'Issuer', 'CertificateRequest'),
  cluster('cert-manager.io', ['v1'], 'ClusterIssuer'),
  // prometheus-operator (prometheus-operator/prometheus-operator example/prometheus-operator-crd)
  ...ns('monitoring.coreos.com', ['v1'], 'ServiceMonitor', 'PodMonitor', 'PrometheusRule', 'Prometheus', 'Alertmanager', 'Probe'),
  // Argo CD (argoproj/argo-cd manifests/crds)
  ...ns('argoproj.io', ['v1alpha1'], 'Application', 'AppProject'),
  // Traefik (traefik/traefik docs/content/reference/dynamic-configuration; the old group until v3)
  ...ns('traefik.io', ['v1alpha1'], 'IngressRoute', 'Middleware'),
  ...ns('traefik.containo.us', ['v1alpha1'], 'IngressRoute', 'Middleware'),
  // Istio networking (istio/api kubernetes/customresourcedefinitions.gen.yaml)
  ...ns('networking.istio.io', ['v1', 'v1beta1', 'v1alpha3'], 'VirtualService', 'DestinationRule', 'Gateway', 'ServiceEntry'),
  // External Secrets Operator (external-secrets/external-secrets deploy/crds)
  ...ns('external-secrets.io', ['v1', 'v1beta1'], 'ExternalSecret', 'SecretStore'),
  cluster('external-secrets.io', ['v1', 'v1beta1'], 'ClusterSecretStore'),
  // Sealed Secrets (bitnami-labs/sealed-secrets helm/sealed-secrets/crds)
  ...ns('bitnami.com', ['v1alpha1'], 'SealedSecret'),
  // KEDA (kedacore/keda config/crd)
  ...ns('keda.sh', ['v1alpha1'], 'ScaledObject'),
  // Cilium (cilium/cilium pkg/k8s/apis/cilium.io/client/crds/v2)
  ...ns('cilium.io', ['v2'], 'CiliumNetworkPolicy'),
  cluster('cilium.io', ['v2'], 'CiliumClusterwideNetworkPolicy'),
];
