// The admission table: one manifest per API server validation rule that clusterdns follows, each
// holding one object that rule (and only it) rejects, and valid.yaml, objects of the same shapes
// that are admitted. admission-rules.test.ts loads each file alone; the whole directory can also
// be served, where every `absent` name must not answer (its object is rejected) and every
// `validNames` name must answer A.

import type { Finding } from '../../src/cluster/model/finding.js';
import { loadManifests, ManifestError } from '../../src/cluster/load.js';

export interface RejectCase {
  /** The manifest, relative to the repository root. */
  file: string;
  /** The line the one error finding is at: the offending field's (marked `# <- rejected`). */
  line: number;
  /** The finding's code. */
  rule: string;
  /** The Kubernetes function (and the check in it) the rule follows. */
  cites: string;
  message: RegExp;
  /** DNS names (FQDN, cluster.local) that must NOT answer because the object is rejected. */
  absent: string[];
}

export const ADMISSION_DIR = 'test/fixtures/admission';
const DIR = ADMISSION_DIR;

export const rejectCases: RejectCase[] = [
  {
    file: `${DIR}/svc-port-name-uppercase.yaml`,
    line: 10,
    rule: 'invalid-port-name',
    cites: 'validateServicePort: ValidateDNS1123Label(name)',
    message: /spec\.ports\[0\]\.name "HTTP" is not a valid DNS-1123 label/,
    absent: ['svc-upper.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-port-unnamed.yaml`,
    line: 11,
    rule: 'unnamed-port',
    cites: 'validateServicePort: requireName when len(ports) > 1',
    message: /spec\.ports\[1\]\.name is missing; a Service with more than one port must name every port/,
    absent: ['svc-unnamed.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-port-name-duplicate.yaml`,
    line: 11,
    rule: 'duplicate-port-name',
    cites: 'validateServicePort: allNames (field.Duplicate)',
    message: /spec\.ports\[1\]\.name "http" is also the name of spec\.ports\[0\]/,
    absent: ['svc-dupname.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-port-duplicate.yaml`,
    line: 11,
    rule: 'duplicate-port',
    cites: 'ValidateService: duplicate (protocol, port)',
    message: /spec\.ports\[1\] repeats port 80\/TCP of spec\.ports\[0\]/,
    absent: ['svc-dupport.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-target-port-name.yaml`,
    line: 12,
    rule: 'invalid-target-port',
    cites: 'ValidatePortNumOrName: IsValidPortName (IANA_SVC_NAME)',
    message: /spec\.ports\[0\]\.targetPort "web--http" is not a valid port name: it must not hold \'--\'/,
    absent: ['svc-tpname.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-target-port-quoted.yaml`,
    line: 12,
    rule: 'invalid-target-port',
    cites: 'ValidatePortNumOrName: a string is a port name (IsValidPortName: at least one letter)',
    message: /targetPort "8080" is not a valid port name: it must hold at least one letter; write the number unquoted/,
    absent: ['svc-tpquoted.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-ports-required.yaml`,
    line: 7,
    rule: 'ports-required',
    cites: 'ValidateService: spec.ports required unless headless or ExternalName',
    message: /spec\.ports is missing; a Service needs at least one port/,
    absent: ['svc-noports.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-external-name-required.yaml`,
    line: 8,
    rule: 'external-name-required',
    cites: 'ValidateService: ExternalName requires spec.externalName',
    message: /type ExternalName needs spec\.externalName/,
    absent: ['svc-extnone.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-external-name-invalid.yaml`,
    line: 9,
    rule: 'invalid-external-name',
    cites: 'ValidateService: ValidateDNS1123Subdomain(externalName without one trailing dot)',
    message: /spec\.externalName "my_db\.example\.com" is not a valid DNS-1123 subdomain/,
    absent: ['svc-extbad.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-external-name-cluster-ip.yaml`,
    line: 10,
    rule: 'external-name-cluster-ip',
    cites: 'ValidateService: clusterIPs forbidden for ExternalName (after NormalizeClusterIPs on create)',
    message: /spec\.clusterIP\/clusterIPs may not be set for an ExternalName Service/,
    absent: ['svc-extip.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-external-name-families.yaml`,
    line: 10,
    rule: 'external-name-families',
    cites: 'ValidateService: ipFamilies/ipFamilyPolicy forbidden for ExternalName',
    message: /spec\.ipFamilies and spec\.ipFamilyPolicy may not be set for an ExternalName Service/,
    absent: ['svc-extfam.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-headless-nodeport.yaml`,
    line: 9,
    rule: 'headless-type',
    cites: 'ValidateService: clusterIP None may not be set for NodePort/LoadBalancer',
    message: /clusterIP "None" \(headless\) is only valid for type ClusterIP, not NodePort/,
    absent: ['svc-hlnp.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-cluster-ips-alone.yaml`,
    line: 8,
    rule: 'cluster-ips-without-cluster-ip',
    cites: 'validateServiceClusterIPsRelatedFields: clusterIPs must be empty when clusterIP is not specified',
    message: /spec\.clusterIPs must be empty when spec\.clusterIP is not set/,
    absent: ['svc-ipsalone.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-cluster-ip-out-of-range.yaml`,
    line: 8,
    rule: 'cluster-ip-out-of-range',
    cites: 'ipallocator Allocate: provided IP is not in the valid range',
    message: /cluster IP 172\.31\.0\.10 is not in the valid range/,
    absent: ['svc-farip.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-node-port-out-of-range.yaml`,
    line: 13,
    rule: 'node-port-out-of-range',
    cites: 'portallocator Allocate: provided port is not in the valid range',
    message: /nodePort 8081: is not in the valid node port range 30000-32767/,
    absent: ['svc-farport.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-node-port-cluster-ip.yaml`,
    line: 12,
    rule: 'node-port-type',
    cites: 'ValidateService: nodePort may not be used when type is ClusterIP',
    message: /nodePort 30081: may not be used when type is ClusterIP/,
    absent: ['svc-npcip.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-selector-value.yaml`,
    line: 9,
    rule: 'invalid-label-value',
    cites: 'ValidateService: ValidateLabels(selector) -> IsValidLabelValue',
    message: /spec\.selector\.app value "web server" must be letters and digits at both ends/,
    absent: ['svc-selval.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-label-number.yaml`,
    line: 8,
    rule: 'schema-type',
    cites: 'ObjectMeta OpenAPI schema: labels are a map of strings (a number is not decoded; ValidateObjectMeta)',
    message: /metadata\.labels\.version must be a string, got 2; quote it/,
    absent: ['svc-labelnum.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-name-dns1035.yaml`,
    line: 5,
    rule: 'invalid-name',
    cites: 'ValidateObjectMeta: ValidateServiceName = NameIsDNS1035Label',
    message: /name "1web" is not a valid DNS-1035 label/,
    absent: ['1web.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-external-ip-loopback.yaml`,
    line: 10,
    rule: 'special-ip',
    cites: 'ValidateService: ValidateEndpointIP(externalIPs), once ValidateNonSpecialIP',
    message: /spec\.externalIPs\[0\] 127\.0\.0\.1 is in the loopback range/,
    absent: ['svc-extlo.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-namespace-invalid.yaml`,
    line: 6,
    rule: 'invalid-namespace',
    cites: 'ValidateObjectMeta: ValidateNamespaceName (DNS-1123 label)',
    message: /metadata\.namespace "Team_A" is not a valid namespace name/,
    absent: [],
  },
  {
    file: `${DIR}/svc-label-key.yaml`,
    line: 8,
    rule: 'invalid-label-key',
    cites: 'ValidateObjectMeta: ValidateLabels -> IsQualifiedName',
    message: /metadata\.labels key "example\.com\/a\/b" may hold at most one \'\/\'/,
    absent: ['svc-labelkey.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/svc-annotation-key.yaml`,
    line: 8,
    rule: 'invalid-annotation-key',
    cites: 'ValidateObjectMeta: ValidateAnnotations -> IsQualifiedName(lower-cased key)',
    message: /metadata\.annotations key "owner team" has a name part/,
    absent: ['svc-annkey.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/ns-name-invalid.yaml`,
    line: 5,
    rule: 'invalid-name',
    cites: 'ValidateNamespace: ValidateNamespaceName = NameIsDNSLabel',
    message: /name "team\.a" is not a valid DNS-1123 label/,
    absent: [],
  },
  {
    file: `${DIR}/eps-address-type-missing.yaml`,
    line: 2,
    rule: 'schema-required',
    cites: 'EndpointSlice OpenAPI schema: addressType required (ValidateEndpointSlice: validateAddressType)',
    message: /missing required field "addressType"/,
    absent: ['eps-notype.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-port-name.yaml`,
    line: 12,
    rule: 'invalid-port-name',
    cites: 'ValidateEndpointSlice: validatePorts -> ValidateDNS1123Label',
    message: /ports\[0\]\.name "Web" is not a valid DNS-1123 label/,
    absent: ['eps-portname.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-port-name-duplicate.yaml`,
    line: 13,
    rule: 'duplicate-port-name',
    cites: 'ValidateEndpointSlice: validatePorts (names unique, "" included)',
    message: /ports\[1\]\.name "" is also the name of ports\[0\]/,
    absent: ['eps-portdup.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-loopback.yaml`,
    line: 11,
    rule: 'special-ip',
    cites: 'ValidateEndpointSlice: validateEndpoints -> ValidateEndpointIP (once ValidateNonSpecialIP)',
    message: /endpoints\[0\]\.addresses\[0\] 127\.0\.0\.1 is in the loopback range/,
    absent: ['eps-loopback.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-link-local-v6.yaml`,
    line: 11,
    rule: 'special-ip',
    cites: 'ValidateEndpointSlice: validateEndpoints -> ValidateEndpointIP (once ValidateNonSpecialIP)',
    message: /fe80::1 is in the link-local range fe80::\/10/,
    absent: ['eps-linklocal.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-hostname.yaml`,
    line: 11,
    rule: 'invalid-hostname',
    cites: 'ValidateEndpointSlice: validateEndpoints -> ValidateDNS1123Label(hostname)',
    message: /endpoints\[0\]\.hostname "web_0" is not a valid DNS-1123 label/,
    absent: ['eps-hostname.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-node-name.yaml`,
    line: 11,
    rule: 'invalid-node-name',
    cites: 'ValidateEndpointSlice: validateEndpoints -> ValidateNodeName',
    message: /endpoints\[0\]\.nodeName "Node_1" is not a valid node name/,
    absent: ['eps-nodename.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-fqdn.yaml`,
    line: 11,
    rule: 'invalid-address',
    cites: 'ValidateEndpointSlice: validateEndpoints -> IsFullyQualifiedDomainName',
    message: /endpoints\[0\]\.addresses\[0\] "localhost" is not a fully qualified DNS name/,
    absent: ['eps-fqdn.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-service-name-label.yaml`,
    line: 8,
    rule: 'invalid-label-value',
    cites: 'ValidateEndpointSlice: ValidateObjectMeta -> ValidateLabels(kubernetes.io/service-name)',
    message: /metadata\.labels\.kubernetes\.io\/service-name value "eps-label\/x"/,
    absent: ['eps-label.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-too-many-endpoints.yaml`,
    line: 9,
    rule: 'too-many-endpoints',
    cites: 'ValidateEndpointSlice: validateEndpoints (maxEndpoints 1000)',
    message: /endpoints lists 1001 endpoints; an EndpointSlice holds at most 1000/,
    absent: ['eps-many.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/eps-fqdn-long-label.yaml`,
    line: 11,
    rule: 'invalid-address',
    cites: 'ValidateEndpointSlice: validateEndpoints -> IsFullyQualifiedDomainName (each label IsDNS1123Label)',
    message: /is not a fully qualified DNS name/,
    absent: ['eps-fqdnlong.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/ep-link-local.yaml`,
    line: 9,
    rule: 'special-ip',
    cites: 'ValidateEndpoints: validateEndpointAddress -> ValidateEndpointIP (once ValidateNonSpecialIP)',
    message: /subsets\[0\]\.addresses\[0\]\.ip 169\.254\.1\.1 is in the link-local range/,
    absent: ['ep-linklocal.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/ep-unnamed-ports.yaml`,
    line: 11,
    rule: 'unnamed-port',
    cites: 'ValidateEndpoints: validateEndpointPort (requireName when len(ports) > 1)',
    message: /subsets\[0\]\.ports\[1\]\.name is missing/,
    absent: ['ep-unnamed.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/ep-no-addresses.yaml`,
    line: 8,
    rule: 'addresses-required',
    cites: 'ValidateEndpoints: validateEndpointSubsets (addresses or notReadyAddresses)',
    message: /subsets\[0\] lists no addresses/,
    absent: ['ep-noaddr.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/ep-hostname.yaml`,
    line: 10,
    rule: 'invalid-hostname',
    cites: 'ValidateEndpoints: validateEndpointAddress -> ValidateDNS1123Label(hostname)',
    message: /subsets\[0\]\.addresses\[0\]\.hostname "Ep1" is not a valid DNS-1123 label/,
    absent: ['ep-hostname.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-containers-required.yaml`,
    line: 8,
    rule: 'schema-required',
    cites: 'PodSpec OpenAPI schema: containers required (ValidatePodSpec: validateContainers)',
    message: /missing required field "containers" in spec/,
    absent: ['nocontainers.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-port-name-long.yaml`,
    line: 15,
    rule: 'invalid-port-name',
    cites: 'validateContainerPorts: IsValidPortName (at most 15)',
    message: /ports\[0\]\.name "metrics-exporter-http" is not a valid port name: it is longer than 15 characters/,
    absent: ['longport.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-port-name-duplicate.yaml`,
    line: 16,
    rule: 'duplicate-port-name',
    cites: 'validateContainerPorts: allNames (field.Duplicate)',
    message: /ports\[1\]\.name "http" is also the name of ports\[0\]/,
    absent: ['dupport.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-container-port-range.yaml`,
    line: 15,
    rule: 'invalid-port',
    cites: 'validateContainerPorts: IsValidPortNum(containerPort)',
    message: /containerPort 70000 is not a valid port number/,
    absent: ['bigport.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-hostname.yaml`,
    line: 9,
    rule: 'invalid-hostname',
    cites: 'ValidatePodSpec: ValidateDNS1123Label(hostname)',
    message: /spec\.hostname "Web_1" is not a valid DNS-1123 label/,
    absent: [],
  },
  {
    file: `${DIR}/pod-subdomain.yaml`,
    line: 10,
    rule: 'invalid-subdomain',
    cites: 'ValidatePodSpec: ValidateDNS1123Label(subdomain)',
    message: /spec\.subdomain "my\.pods" is not a valid DNS-1123 label/,
    absent: [],
  },
  {
    file: `${DIR}/pod-dns-none.yaml`,
    line: 11,
    rule: 'dns-none-needs-config',
    cites: 'validatePodDNSConfig: dnsPolicy None requires dnsConfig',
    message: /spec\.dnsPolicy None needs spec\.dnsConfig with at least one nameserver/,
    absent: ['dnsnone.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-dns-nameservers.yaml`,
    line: 13,
    rule: 'dns-config-limits',
    cites: 'validatePodDNSConfig: MaxDNSNameservers 3',
    message: /spec\.dnsConfig\.nameservers lists 4 servers; at most 3/,
    absent: ['ns4.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-dns-search.yaml`,
    line: 13,
    rule: 'dns-config-limits',
    cites: 'validatePodDNSConfig: search paths are lower-case DNS-1123 subdomains (IsDNS1123SubdomainWithUnderscore)',
    message: /spec\.dnsConfig\.searches\[0\] "Corp\.example" is not a valid search domain/,
    absent: ['search.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-host-alias.yaml`,
    line: 14,
    rule: 'invalid-host-alias',
    cites: 'validateHostAliases: hostnames are DNS-1123 subdomains',
    message: /spec\.hostAliases\[0\]\.hostnames\[0\] "Foo_Bar" is not a valid DNS-1123 subdomain/,
    absent: ['alias.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/pod-ips-family.yaml`,
    line: 17,
    rule: 'pod-ips-family',
    cites: 'validatePodIPs: at most one IP per family',
    message: /status\.podIPs\[1\] 10\.244\.9\.2: a pod has at most one IPv4 address/,
    absent: ['twoips.pods.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/deploy-selector-mismatch.yaml`,
    line: 11,
    rule: 'selector-mismatch',
    cites: 'ValidateDeploymentSpec: ValidatePodTemplateSpecForReplicaSet (`selector` does not match template `labels`)',
    message: /`selector` does not match template `labels`/,
    absent: ['deploy-mismatch.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/deploy-selector-missing.yaml`,
    line: 7,
    rule: 'schema-required',
    cites: 'DeploymentSpec OpenAPI schema: selector required (ValidateDeploymentSpec)',
    message: /missing required field "selector" in spec/,
    absent: ['deploy-noselector.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/rs-selector-empty.yaml`,
    line: 8,
    rule: 'selector-required',
    cites: 'ValidateReplicaSetSpec: empty selector is invalid',
    message: /has an empty spec\.selector/,
    absent: ['rs-empty.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/deploy-selector-key.yaml`,
    line: 11,
    rule: 'invalid-label-key',
    cites: 'ValidateDeploymentSpec: ValidateLabelSelector -> ValidateLabelSelectorRequirement (key IsQualifiedName)',
    message: /spec\.selector\.matchExpressions\[0\]\.key "tier\/db\/primary" may hold at most one/,
    absent: ['deploy-selkey.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/deploy-restart-policy.yaml`,
    line: 13,
    rule: 'restart-policy',
    cites: 'ValidatePodTemplateSpecForReplicaSet: restartPolicy must be Always',
    message: /spec\.template\.spec\.restartPolicy "Never" is not allowed here/,
    absent: ['deploy-never.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/sts-name-label.yaml`,
    line: 5,
    rule: 'invalid-name',
    cites: 'ValidateStatefulSet: ValidateStatefulSetName = NameIsDNSLabel',
    message: /name "db\.v2" is not a valid DNS-1123 label/,
    absent: ['sts-dotted.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/job-restart-policy.yaml`,
    line: 11,
    rule: 'restart-policy',
    cites: 'batch validateJobSpec: restartPolicy OnFailure or Never (default Always)',
    message: /spec\.template\.spec\.restartPolicy is unset \(so Always\); a Job\'s pods need restartPolicy OnFailure or Never/,
    absent: ['job-always.admission.svc.cluster.local.'],
  },
  {
    file: `${DIR}/cronjob-name-long.yaml`,
    line: 5,
    rule: 'invalid-name',
    cites: 'ValidateCronJobCreate: name at most 52 characters',
    message: /a CronJob\'s name may have at most 52/,
    absent: [],
  },
  {
    file: `${DIR}/deploy-template-missing.yaml`,
    line: 7,
    rule: 'schema-required',
    cites: 'DeploymentSpec OpenAPI schema: template required (ValidateDeploymentSpec: ValidatePodTemplateSpec)',
    message: /missing required field "template" in spec/,
    absent: [],
  },
];

/** Names the objects of valid.yaml give that must answer A (FQDN). */
export const validNames: string[] = [
  'web.admission.svc.cluster.local.',
  'web-nodeport.admission.svc.cluster.local.',
  'web-lb.admission.svc.cluster.local.',
  'db.admission.svc.cluster.local.',
  'db-0.db.admission.svc.cluster.local.',
  'db-1.db.admission.svc.cluster.local.',
  'manual.admission.svc.cluster.local.',
  'm1.manual.admission.svc.cluster.local.',
  'legacy.admission.svc.cluster.local.',
  'pods.admission.svc.cluster.local.',
  'solo.pods.admission.svc.cluster.local.',
];

/**
 * The error findings of loading `paths`, whether the loader throws ManifestError on an error (as
 * it did) or returns `{ findings }` with the rejected objects left out.
 */
export function errorsOf(paths: string[]): Finding[] {
  let findings: readonly Finding[];
  try {
    findings = loadManifests(paths).findings;
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    findings = e.findings;
  }
  return findings.filter((f) => f.severity === 'error');
}
