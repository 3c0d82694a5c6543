// API versions Kubernetes no longer serves, though kubernetes-models still ships their models: a
// current API server answers `no matches for kind` for them, so they are not known kinds here. From
// the Kubernetes deprecation guide (kubernetes.io/docs/reference/using-api/deprecation-guide/):
// the release that stopped serving each group/version (for the listed kinds only, when given;
// keyed by "group/version Kind" where one kind went later).

interface Removal {
  readonly release: string;
  /** Only these kinds of the group/version were removed (others are still served). */
  readonly kinds?: readonly string[];
}

const REMOVED: Readonly<Record<string, Removal>> = {
  'admissionregistration.k8s.io/v1beta1': { release: '1.22', kinds: ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'] },
  'apiextensions.k8s.io/v1beta1': { release: '1.22' },
  'apiregistration.k8s.io/v1beta1': { release: '1.22' },
  'apps/v1beta1': { release: '1.16' },
  'apps/v1beta2': { release: '1.16' },
  'authentication.k8s.io/v1beta1': { release: '1.22', kinds: ['TokenReview'] },
  'authorization.k8s.io/v1beta1': { release: '1.22' },
  'autoscaling/v2beta1': { release: '1.25' },
  'autoscaling/v2beta2': { release: '1.26' },
  'batch/v1beta1': { release: '1.25' },
  'certificates.k8s.io/v1beta1': { release: '1.22', kinds: ['CertificateSigningRequest'] },
  'coordination.k8s.io/v1beta1': { release: '1.22', kinds: ['Lease'] },
  'discovery.k8s.io/v1beta1': { release: '1.25' },
  'events.k8s.io/v1beta1': { release: '1.25' },
  'extensions/v1beta1': { release: '1.16' },
  'extensions/v1beta1 Ingress': { release: '1.22' },
  'flowcontrol.apiserver.k8s.io/v1beta1': { release: '1.26' },
  'flowcontrol.apiserver.k8s.io/v1beta2': { release: '1.29' },
  'flowcontrol.apiserver.k8s.io/v1beta3': { release: '1.32' },
  'networking.k8s.io/v1beta1': { release: '1.22', kinds: ['Ingress', 'IngressClass'] },
  'node.k8s.io/v1beta1': { release: '1.25' },
  'policy/v1beta1': { release: '1.25' },
  'rbac.authorization.k8s.io/v1beta1': { release: '1.22' },
  'scheduling.k8s.io/v1beta1': { release: '1.22' },
  'storage.k8s.io/v1beta1': { release: '1.22', kinds: ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'] },
  'storage.k8s.io/v1beta1 CSIStorageCapacity': { release: '1.27' },
};

/** The release that stopped serving this kind in this apiVersion, when it did. */
export function removedIn(apiVersion: string, kind: string): string | undefined {
  const r = REMOVED[`${apiVersion} ${kind}`] ?? REMOVED[apiVersion];
  if (r === undefined || (r.kinds !== undefined && !r.kinds.includes(kind))) return undefined;
  return r.release;
}
