// Which built-in kinds are cluster-scoped. kubernetes-models does not carry scope, so this is the
// `kubectl api-resources --namespaced=false` list of Kubernetes 1.34 (each kind's REST storage
// returns NamespaceScoped() false: pkg/registry/<group>/<resource>/strategy.go), keyed by group,
// plus the kinds of removed versions the package still ships (PodSecurityPolicy) and Gateway API's
// cluster-scoped kinds (`+kubebuilder:resource:scope=Cluster` in sigs.k8s.io/gateway-api apis/ and
// apisx/). Every other built-in kind is namespaced, subresource kinds (Scale, Eviction, Binding,
// TokenRequest) included.

const CLUSTER_SCOPED: Readonly<Record<string, readonly string[]>> = {
  '': ['ComponentStatus', 'Namespace', 'Node', 'PersistentVolume'],
  'admissionregistration.k8s.io': [
    'MutatingWebhookConfiguration',
    'ValidatingWebhookConfiguration',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
    'MutatingAdmissionPolicy',
    'MutatingAdmissionPolicyBinding',
  ],
  'apiextensions.k8s.io': ['CustomResourceDefinition'],
  'apiregistration.k8s.io': ['APIService'],
  'authentication.k8s.io': ['SelfSubjectReview', 'TokenReview'],
  'authorization.k8s.io': ['SelfSubjectAccessReview', 'SelfSubjectRulesReview', 'SubjectAccessReview'],
  'certificates.k8s.io': ['CertificateSigningRequest', 'ClusterTrustBundle'],
  'flowcontrol.apiserver.k8s.io': ['FlowSchema', 'PriorityLevelConfiguration'],
  'internal.apiserver.k8s.io': ['StorageVersion'],
  'networking.k8s.io': ['IngressClass', 'IPAddress', 'ServiceCIDR'],
  'node.k8s.io': ['RuntimeClass'],
  policy: ['PodSecurityPolicy'],
  'rbac.authorization.k8s.io': ['ClusterRole', 'ClusterRoleBinding'],
  'resource.k8s.io': ['DeviceClass', 'ResourceSlice', 'DeviceTaintRule'],
  'scheduling.k8s.io': ['PriorityClass'],
  'storage.k8s.io': ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment', 'VolumeAttributesClass'],
  'storagemigration.k8s.io': ['StorageVersionMigration'],
  'gateway.networking.k8s.io': ['GatewayClass'],
  // config/crd/experimental/gateway.networking.x-k8s.io_xmeshes.yaml: scope: Cluster.
  'gateway.networking.x-k8s.io': ['XMesh'],
};

export function builtinNamespaced(group: string, kind: string): boolean {
  return CLUSTER_SCOPED[group]?.includes(kind) !== true;
}

const CLUSTER_SCOPED_NAMES: ReadonlySet<string> = new Set(Object.values(CLUSTER_SCOPED).flat());

/** Whether some built-in group makes a kind of this name cluster-scoped (for a kind no API serves). */
export function clusterScopedName(kind: string): boolean {
  return CLUSTER_SCOPED_NAMES.has(kind);
}
