// Typed reading of the object kinds clusterdns cares about, with Kubernetes defaults and validation.

import type {
  ContainerPort,
  Endpoint,
  EndpointPort,
  EndpointSlice,
  HostAlias,
  NamespaceObject,
  ObjectMeta,
  Pod,
  PodDNSConfig,
  ServiceImport,
  ServicePort,
  ServiceType,
  SourceRef,
} from '../model/model.js';
import { formatIp, parseIp } from '../../pkg/ip.js';
import {
  type Checker,
  hasServerSetMeta,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isObj,
  portNameProblem,
  specialIpProblem,
} from './validate.js';
import { jsonExcerpt } from '../model/finding.js';
import type { Obj } from './validate.js';

export type Family = 'IPv4' | 'IPv6';

/** What the cluster's service CIDRs offer, for IP family decisions. */
export interface FamilyInfo {
  /** Family of the first service CIDR (IPv4 when there is none). */
  readonly primary: Family;
  readonly available: ReadonlySet<Family>;
}

function otherFamily(f: Family): Family {
  return f === 'IPv4' ? 'IPv6' : 'IPv4';
}

export function familyOf(ip: string): Family | undefined {
  const p = parseIp(ip);
  return p ? (p.family === 4 ? 'IPv4' : 'IPv6') : undefined;
}

/** A Service before cluster IP allocation. */
export interface ServiceDraft {
  readonly meta: ObjectMeta;
  readonly type: ServiceType;
  readonly headless: boolean;
  readonly externalName?: string;
  readonly ports: ServicePort[];
  readonly selector?: Record<string, string>;
  readonly publishNotReadyAddresses: boolean;
  readonly externalIPs: string[];
  /** Declared cluster IPs (canonical), never 'None'. */
  readonly declaredIPs: string[];
  /** Families the service gets an IP in, in order (empty for ExternalName). */
  readonly families: Family[];
  /**
   * The manifest carries server-set metadata (a dump of a cluster): a real API server admitted
   * its cluster IPs and node ports, so they stand outside the configured ranges (with a warning).
   */
  readonly admitted: boolean;
  readonly check: Checker;
}

export interface EndpointsAddress {
  readonly ip: string;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly targetRefName?: string;
  readonly targetRefKind?: string;
}

export interface EndpointsSubset {
  readonly ready: EndpointsAddress[];
  readonly notReady: EndpointsAddress[];
  readonly ports: EndpointPort[];
}

/** A v1 Endpoints object, to be mirrored into EndpointSlices. */
export interface EndpointsDraft {
  readonly meta: ObjectMeta;
  readonly subsets: EndpointsSubset[];
  readonly check: Checker;
}

/** Reads metadata; undefined when the name is missing (an error has been recorded). */
export function readMeta(
  o: Obj,
  check: Checker,
  source: SourceRef,
  defaultNamespace: string,
  nameRule: 'dns1035' | 'dns1123label' | 'subdomain' | 'none',
  namespaced: boolean,
): ObjectMeta | undefined {
  const md = check.obj(o, 'metadata', 'metadata');
  const name = check.str(md, 'name', 'metadata.name');
  const nsWritten = check.str(md, 'namespace', 'metadata.namespace');
  const namespace = namespaced ? (nsWritten === undefined || nsWritten === '' ? defaultNamespace : nsWritten) : '';
  if (name === undefined || name === '') {
    check.error('metadata.name is missing; every object needs a name', 'metadata');
    return undefined;
  }
  check.what = `${check.what} ${jsonExcerpt(`${namespaced ? `${namespace}/` : ''}${name}`, 120)}`;
  // ValidateObjectMeta with the kind's name rule: ValidateServiceName (NameIsDNS1035Label),
  // ValidateNamespaceName (NameIsDNSLabel), and NameIsDNSSubdomain for the other kinds read here.
  if (nameRule === 'dns1035' && !isDns1035Label(name)) {
    check.error(
      `name ${jsonExcerpt(name)} is not a valid DNS-1035 label; use at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit`,
      'metadata.name',
      'invalid-name',
    );
  } else if (nameRule === 'dns1123label' && !isDns1123Label(name)) {
    check.error(
      `name ${jsonExcerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit`,
      'metadata.name',
      'invalid-name',
    );
  } else if (nameRule === 'subdomain' && !isDns1123Subdomain(name)) {
    check.error(`name ${jsonExcerpt(name)} is not a valid DNS-1123 subdomain; use lower-case letters, digits, '-' and '.', at most 253 characters`, 'metadata.name', 'invalid-name');
  }
  if (namespaced && nsWritten !== undefined && nsWritten !== '' && !isDns1123Label(nsWritten)) {
    check.error(`metadata.namespace ${jsonExcerpt(nsWritten)} is not a valid namespace name (DNS-1123 label: lower-case letters, digits and '-', at most 63)`, 'metadata.namespace', 'invalid-namespace');
  }
  return {
    name,
    namespace,
    // ValidateObjectMeta: metav1validation ValidateLabels and ValidateAnnotations.
    labels: check.labels(md, 'labels', 'metadata.labels'),
    annotations: check.annotations(md, 'annotations', 'metadata.annotations'),
    source,
  };
}

export function toNamespace(meta: ObjectMeta): NamespaceObject {
  // The API server labels every namespace with its own name (Kubernetes >= 1.21).
  return { name: meta.name, labels: { ...meta.labels, 'kubernetes.io/metadata.name': meta.name }, source: meta.source };
}

const SERVICE_TYPES: readonly ServiceType[] = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

/**
 * spec.ports, defaulted as pkg/apis/core/v1/defaults.go SetDefaults_ServicePort does (protocol
 * TCP; targetPort 0 or "" becomes port) and checked as ValidateService / validateServicePort do.
 */
function readServicePorts(spec: Obj, check: Checker): ServicePort[] {
  const out: ServicePort[] = [];
  const raw = check.arr(spec, 'ports', 'spec.ports');
  // validateServicePort: a name is required when the Service has more than one port.
  const requireName = raw.length > 1;
  const names = new Map<string, number>();
  const portKeys = new Map<string, number>();
  raw.forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    if (!isObj(p)) {
      check.error(`${path} must be a mapping with at least "port"`, path);
      return;
    }
    const name = check.str(p, 'name', `${path}.name`) ?? '';
    if (name === '') {
      if (requireName) {
        check.error(`${path}.name is missing; a Service with more than one port must name every port (validateServicePort), e.g. name: http`, path, 'unnamed-port');
      }
    } else if (!isDns1123Label(name)) {
      // validateServicePort: ValidateDNS1123Label (so "HTTP" is rejected).
      check.error(`${path}.name ${jsonExcerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', such as "http"`, `${path}.name`, 'invalid-port-name');
    } else {
      const prev = names.get(name);
      if (prev !== undefined) {
        check.error(`${path}.name ${jsonExcerpt(name)} is also the name of spec.ports[${prev}]; port names must be unique (validateServicePort), rename one`, `${path}.name`, 'duplicate-port-name');
      } else names.set(name, i);
    }
    const protocol = check.protocol(p, 'protocol', `${path}.protocol`);
    const port = check.port(p, 'port', `${path}.port`);
    if (port === undefined) {
      if (p['port'] === undefined || p['port'] === null) check.error(`${path}.port is missing; every Service port needs a port number (1-65535)`, path);
      return;
    }
    // ValidateService: no two ports with the same port number and protocol.
    const key = `${port}/${protocol}`;
    const prevKey = portKeys.get(key);
    if (prevKey !== undefined) {
      check.error(`${path} repeats port ${key} of spec.ports[${prevKey}]; each port and protocol may appear once (ValidateService), remove or change one`, path, 'duplicate-port');
    } else portKeys.set(key, i);
    let targetPort: number | string | undefined;
    const tp = p['targetPort'];
    if (typeof tp === 'string' && tp !== '') {
      // ValidatePortNumOrName: a string targetPort is a port name (IsValidPortName), even when it
      // is all digits: "8080" is rejected, unquoted 8080 is the number.
      const why = portNameProblem(tp);
      if (why !== undefined) {
        const fix = /^[0-9]+$/.test(tp) ? `write the number unquoted (targetPort: ${tp})` : 'use a container port name such as "http" or a number';
        check.error(`${path}.targetPort ${jsonExcerpt(tp)} is not a valid port name: it ${why}; ${fix}`, `${path}.targetPort`, 'invalid-target-port');
      }
      targetPort = tp;
    } else if (tp !== undefined && tp !== null && tp !== 0 && tp !== '') {
      targetPort = check.port(p, 'targetPort', `${path}.targetPort`);
    }
    // nodePort 0 means unset, as the API server reads it (one is allocated for NodePort/LoadBalancer).
    const nodePort = p['nodePort'] === 0 ? undefined : check.port(p, 'nodePort', `${path}.nodePort`);
    out.push({
      name,
      protocol,
      port,
      ...(targetPort !== undefined ? { targetPort } : {}),
      ...(nodePort !== undefined ? { nodePort } : {}),
    });
  });
  return tight(out);
}

function readFamilies(spec: Obj, check: Checker): Family[] {
  const out: Family[] = [];
  check.arr(spec, 'ipFamilies', 'spec.ipFamilies').forEach((f, i) => {
    if (f !== 'IPv4' && f !== 'IPv6') {
      check.error(`spec.ipFamilies[${i}] ${jsonExcerpt(f)} is not an IP family; use IPv4 or IPv6`, `spec.ipFamilies[${i}]`);
    } else if (out.includes(f)) {
      check.error(`spec.ipFamilies lists ${f} twice`, `spec.ipFamilies[${i}]`);
    } else out.push(f);
  });
  return tight(out);
}

function readServiceType(spec: Obj, check: Checker): ServiceType {
  const typeText = check.str(spec, 'type', 'spec.type');
  if (typeText === undefined || typeText === '') return 'ClusterIP';
  if ((SERVICE_TYPES as readonly string[]).includes(typeText)) return typeText as ServiceType;
  check.error(`spec.type ${jsonExcerpt(typeText)} is not a Service type; use ClusterIP, NodePort, LoadBalancer or ExternalName`, 'spec.type');
  return 'ClusterIP';
}

/** The cluster IPs as written: spec.clusterIPs, else [spec.clusterIP]; the two must agree. */
function writtenClusterIPs(clusterIP: string | undefined, rawIPs: readonly unknown[], check: Checker): string[] {
  const written: string[] = [];
  rawIPs.forEach((v, i) => {
    if (typeof v !== 'string') check.error(`spec.clusterIPs[${i}] must be a string`, `spec.clusterIPs[${i}]`);
    else written.push(v);
  });
  if (written.length > 0 && (clusterIP === undefined || clusterIP === '')) {
    // validateServiceClusterIPsRelatedFields: on create the API server copies spec.clusterIP into
    // an empty spec.clusterIPs (NormalizeClusterIPs), never the other way round.
    check.error('spec.clusterIPs must be empty when spec.clusterIP is not set; set spec.clusterIP to spec.clusterIPs[0] as well', 'spec.clusterIPs', 'cluster-ips-without-cluster-ip');
  }
  if (written.length > 2) {
    check.error(`spec.clusterIPs holds ${written.length} addresses; it may hold at most 2, one per IP family (validateServiceClusterIPsRelatedFields)`, 'spec.clusterIPs', 'too-many-cluster-ips');
  }
  if (written.length === 0 && clusterIP !== undefined && clusterIP !== '') written.push(clusterIP);
  else if (written.length > 0 && clusterIP !== undefined && clusterIP !== '' && clusterIP !== written[0]) {
    check.error(`spec.clusterIP ${jsonExcerpt(clusterIP)} must equal spec.clusterIPs[0] ${jsonExcerpt(written[0])}; make them agree or drop spec.clusterIP`, 'spec.clusterIP');
  }
  return written;
}

/** The valid written cluster IPs, at most one per family, with their families in order. */
function declaredClusterIPs(written: readonly string[], fromList: boolean, check: Checker): { declaredIPs: string[]; declaredFamilies: Family[] } {
  const declaredIPs: string[] = [];
  const declaredFamilies: Family[] = [];
  written.forEach((v, i) => {
    const path = fromList ? `spec.clusterIPs[${i}]` : 'spec.clusterIP';
    if (v === 'None') {
      check.error(`${path} "None" is only allowed as the first and only cluster IP (headless Service)`, path);
      return;
    }
    const ip = check.ip(v, path, 'write an IPv4 or IPv6 address, "None" for a headless Service, or omit it to have one allocated');
    if (ip === undefined) return;
    const f = familyOf(ip)!;
    if (declaredFamilies.includes(f)) {
      check.error(`${path} ${jsonExcerpt(v)}: spec.clusterIPs may hold at most one address per IP family`, path);
      return;
    }
    declaredIPs.push(ip);
    declaredFamilies.push(f);
  });
  return { declaredIPs: tight(declaredIPs), declaredFamilies };
}

/** The Service's IP families from its policy, declared IPs, spec.ipFamilies and the configured CIDRs. */
function serviceFamilies(
  policyText: string | undefined,
  declaredIPs: readonly string[],
  declaredFamilies: readonly Family[],
  writtenFamilies: readonly Family[],
  fam: FamilyInfo,
  check: Checker,
): Family[] {
  let policy = policyText;
  if (policy === undefined || !['SingleStack', 'PreferDualStack', 'RequireDualStack'].includes(policy)) {
    policy = 'SingleStack';
    if (policyText === undefined && (declaredFamilies.length > 1 || writtenFamilies.length > 1)) {
      check.warn('two IP families but no spec.ipFamilyPolicy; treated as PreferDualStack (set spec.ipFamilyPolicy: PreferDualStack or RequireDualStack)', 'spec');
      policy = 'PreferDualStack';
    }
  }
  const primary = declaredFamilies[0] ?? writtenFamilies[0] ?? fam.primary;
  declaredFamilies.forEach((f, i) => {
    const w = writtenFamilies[i];
    if (w !== undefined && w !== f) {
      check.error(`spec.clusterIPs[${i}] "${declaredIPs[i]}" is ${f} but spec.ipFamilies[${i}] is ${w}; list them in the same order`, `spec.ipFamilies[${i}]`);
    }
  });
  const families: Family[] = [primary];
  if (policy === 'SingleStack') {
    // initIPFamilyFields (pkg/registry/core/service/storage/alloc.go): SingleStack with two
    // cluster IPs or two IP families is rejected.
    if (declaredIPs.length > 1) {
      check.error('ipFamilyPolicy SingleStack allows one cluster IP; set spec.ipFamilyPolicy to PreferDualStack or RequireDualStack', 'spec.clusterIPs', 'single-stack-two-families');
    } else if (policyText === 'SingleStack' && writtenFamilies.length > 1) {
      check.error('ipFamilyPolicy SingleStack allows one IP family but spec.ipFamilies lists two; set spec.ipFamilyPolicy to PreferDualStack or RequireDualStack', 'spec.ipFamilyPolicy', 'single-stack-two-families');
    }
  } else {
    const second = declaredFamilies[1] ?? writtenFamilies[1] ?? otherFamily(primary);
    if (declaredFamilies.includes(second) || fam.available.has(second)) families.push(second);
    else if (policy === 'RequireDualStack') {
      check.error(
        `ipFamilyPolicy RequireDualStack needs an ${second} cluster IP, but no ${second} service CIDR is configured; add one or use PreferDualStack`,
        'spec.ipFamilyPolicy',
      );
    }
  }
  return families;
}

export function toService(o: Obj, meta: ObjectMeta, check: Checker, fam: FamilyInfo): ServiceDraft {
  const spec = check.obj(o, 'spec', 'spec');
  const type = readServiceType(spec, check);
  const ports = readServicePorts(spec, check);
  const selectorPresent = isObj(spec['selector']);
  // ValidateService: the selector is checked as labels (ValidateLabels).
  const selector = check.labels(spec, 'selector', 'spec.selector');
  const publishNotReadyAddresses = check.bool(spec, 'publishNotReadyAddresses', 'spec.publishNotReadyAddresses') ?? false;
  const externalIPs: string[] = [];
  check.arr(spec, 'externalIPs', 'spec.externalIPs').forEach((v, i) => {
    const ip = check.ip(v, `spec.externalIPs[${i}]`);
    if (ip === undefined) return;
    // ValidateService: external IPs go through ValidateEndpointIP (once ValidateNonSpecialIP).
    const why = specialIpProblem(parseIp(ip)!.bytes);
    if (why !== undefined) check.error(`spec.externalIPs[${i}] ${ip} ${why}; use an address the nodes receive traffic on`, `spec.externalIPs[${i}]`, 'special-ip');
    else externalIPs.push(ip);
  });
  const headlessWritten = spec['clusterIP'] === 'None' || (Array.isArray(spec['clusterIPs']) && spec['clusterIPs'][0] === 'None');
  // ValidateService: spec.ports is required except for headless and ExternalName Services.
  const rawPorts = spec['ports'];
  if ((!Array.isArray(rawPorts) || rawPorts.length === 0) && !headlessWritten && type !== 'ExternalName') {
    check.error('spec.ports is missing; a Service needs at least one port (only headless and ExternalName Services may have none)', 'spec', 'ports-required');
  }
  const clusterIP = check.str(spec, 'clusterIP', 'spec.clusterIP');
  const rawIPs = check.arr(spec, 'clusterIPs', 'spec.clusterIPs');
  const writtenFamilies = readFamilies(spec, check);
  const policyText = check.str(spec, 'ipFamilyPolicy', 'spec.ipFamilyPolicy');
  if (policyText !== undefined && !['SingleStack', 'PreferDualStack', 'RequireDualStack'].includes(policyText)) {
    check.error(`spec.ipFamilyPolicy ${jsonExcerpt(policyText)} is not valid; use SingleStack, PreferDualStack or RequireDualStack`, 'spec.ipFamilyPolicy');
  }
  const base = {
    meta,
    type,
    ports,
    ...(selectorPresent ? { selector } : {}),
    publishNotReadyAddresses,
    externalIPs: tight(externalIPs),
    admitted: hasServerSetMeta(o),
    check,
  };

  if (type === 'ExternalName') {
    const externalName = check.str(spec, 'externalName', 'spec.externalName');
    // ValidateService, case ExternalName: externalName is required and, without one trailing
    // dot, a DNS-1123 subdomain; cluster IPs, ipFamilies and ipFamilyPolicy are forbidden on
    // create (spec.clusterIP is copied to spec.clusterIPs first, so it is forbidden too).
    if (externalName === undefined || externalName === '' || externalName === '.') {
      check.error('type ExternalName needs spec.externalName; set it to a DNS name such as my.database.example.com', check.written('spec.externalName', 'spec.type'), 'external-name-required');
    } else if (!isDns1123Subdomain(externalName.endsWith('.') ? externalName.slice(0, -1) : externalName)) {
      check.error(
        `spec.externalName ${jsonExcerpt(externalName)} is not a valid DNS-1123 subdomain; use a lower-case DNS name such as my.database.example.com`,
        'spec.externalName',
        'invalid-external-name',
      );
    }
    if ((clusterIP !== undefined && clusterIP !== '') || rawIPs.length > 0) {
      check.error('spec.clusterIP/clusterIPs may not be set for an ExternalName Service (the API server rejects it); remove them', check.written('spec.clusterIP', 'spec.clusterIPs'), 'external-name-cluster-ip');
    }
    if (writtenFamilies.length > 0 || policyText !== undefined) {
      check.error('spec.ipFamilies and spec.ipFamilyPolicy may not be set for an ExternalName Service; remove them', check.written('spec.ipFamilies', 'spec.ipFamilyPolicy'), 'external-name-families');
    }
    return { ...base, headless: false, ...(externalName ? { externalName } : {}), declaredIPs: [], families: [] };
  }

  const written = writtenClusterIPs(clusterIP, rawIPs, check);

  if (written[0] === 'None') {
    if (written.length > 1) check.error('a headless Service must have spec.clusterIPs ["None"] only', 'spec.clusterIPs');
    // ValidateService: clusterIP 'None' "may not be set to 'None' for NodePort/LoadBalancer services".
    if (type !== 'ClusterIP') {
      check.error(`clusterIP "None" (headless) is only valid for type ClusterIP, not ${type}; drop clusterIP or use type ClusterIP`, check.written('spec.clusterIP', 'spec.clusterIPs'), 'headless-type');
    }
    const primary = writtenFamilies[0] ?? fam.primary;
    const families: Family[] = [primary];
    const second = writtenFamilies[1] ?? otherFamily(primary);
    if ((policyText === 'PreferDualStack' || policyText === 'RequireDualStack') && fam.available.has(second)) families.push(second);
    return { ...base, headless: true, declaredIPs: [], families };
  }

  const { declaredIPs, declaredFamilies } = declaredClusterIPs(written, rawIPs.length > 0, check);
  const families = serviceFamilies(policyText, declaredIPs, declaredFamilies, writtenFamilies, fam, check);
  return { ...base, headless: false, declaredIPs, families };
}

/** At most 20000 ports in an EndpointSlice (pkg/apis/discovery/validation maxPorts; older releases had 100). */
const SLICE_MAX_PORTS = 20000;
/** At most 1000 endpoints in an EndpointSlice (maxEndpoints), 100 addresses each (maxAddresses). */
const SLICE_MAX_ENDPOINTS = 1000;
const SLICE_MAX_ADDRESSES = 100;

/**
 * Ports of an EndpointSlice ('slice': discovery validatePorts), of a v1 Endpoints subset
 * ('endpoints': validateEndpointPort, from validateEndpointSubsets) or of a ServiceImport ('none').
 */
function readEndpointPorts(parent: Obj, check: Checker, path: string, rules: 'slice' | 'endpoints' | 'none'): EndpointPort[] {
  const out: EndpointPort[] = [];
  const raw = check.arr(parent, 'ports', path);
  if (rules === 'slice' && raw.length > SLICE_MAX_PORTS) {
    check.error(`${path} lists ${raw.length} ports; an EndpointSlice holds at most ${SLICE_MAX_PORTS} (validatePorts), split it`, path, 'too-many-ports');
  }
  // validatePorts: names are unique, the empty name included (it defaults to "").
  const names = rules === 'slice' ? new Map<string, number>() : undefined;
  raw.forEach((p, i) => {
    const pp = `${path}[${i}]`;
    if (!isObj(p)) {
      check.error(`${pp} must be a mapping`, pp);
      return;
    }
    const name = check.str(p, 'name', `${pp}.name`) ?? '';
    if (rules !== 'none') {
      if (name !== '' && !isDns1123Label(name)) {
        check.error(`${pp}.name ${jsonExcerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', such as "http"`, `${pp}.name`, 'invalid-port-name');
      } else if (rules === 'endpoints' && name === '' && raw.length > 1) {
        check.error(`${pp}.name is missing; a subset with more than one port must name every port (validateEndpointPort)`, pp, 'unnamed-port');
      }
      const prev = names?.get(name);
      if (prev !== undefined) {
        check.error(`${pp}.name ${jsonExcerpt(name)} is also the name of ${path}[${prev}]; port names must be unique in a slice (validatePorts), rename one`, check.written(`${pp}.name`, pp), 'duplicate-port-name');
      } else names?.set(name, i);
    }
    const protocol = check.protocol(p, 'protocol', `${pp}.protocol`);
    const port = check.port(p, 'port', `${pp}.port`);
    if (port === undefined) {
      if (p['port'] === undefined || p['port'] === null) {
        // validateEndpointPort: a v1 Endpoints port is a required number (IsValidPortNum). A slice
        // port without a number means all ports, which DNS cannot publish.
        if (rules === 'endpoints') check.error(`${pp}.port is missing; every Endpoints port needs a port number (1-65535)`, pp, 'port-required');
        else check.warn(`${pp} has no port number and is ignored`, pp);
      }
      return;
    }
    out.push({ name, protocol, port });
  });
  return tight(out);
}

function targetRef(o: Obj, check: Checker, path: string): { targetRefName?: string; targetRefKind?: string } {
  const t = o['targetRef'];
  if (isObj(t)) {
    // The usual case, without building the field paths the checker needs only for a finding.
    const name = t['name'];
    const kind = t['kind'];
    if ((name === undefined || typeof name === 'string') && (kind === undefined || typeof kind === 'string')) {
      return { ...(name ? { targetRefName: name } : {}), ...(kind ? { targetRefKind: kind } : {}) };
    }
  }
  const tr = check.obj(o, 'targetRef', `${path}.targetRef`);
  const name = check.str(tr, 'name', `${path}.targetRef.name`);
  const kind = check.str(tr, 'kind', `${path}.targetRef.kind`);
  return { ...(name ? { targetRefName: name } : {}), ...(kind ? { targetRefKind: kind } : {}) };
}

/** Whether a dotted name has a label over 63 characters (IsFullyQualifiedDomainName tests each label). */
function longLabel(name: string): boolean {
  let start = 0;
  for (let i = 0; i <= name.length; i++) {
    if (i === name.length || name.charCodeAt(i) === 46) {
      if (i - start > 63) return true;
      start = i + 1;
    }
  }
  return false;
}

function hostnameOf(o: Obj, check: Checker, path: string): string | undefined {
  const h = check.str(o, 'hostname', path);
  if (h === undefined || h === '') return undefined;
  if (!isDns1123Label(h)) {
    // ValidateEndpointSlice (validateEndpoints) and validateEndpointAddress: ValidateDNS1123Label.
    check.error(`${path} ${jsonExcerpt(h)} is not a valid DNS-1123 label; use lower-case letters, digits and '-', at most 63`, path, 'invalid-hostname');
  }
  return h;
}

export function toEndpointSlice(o: Obj, meta: ObjectMeta, check: Checker, apiVersion: string, intern: (s: string) => string = (s) => s): EndpointSlice {
  const addressTypeText = check.str(o, 'addressType', 'addressType');
  let addressType: EndpointSlice['addressType'] = 'IPv4';
  if (addressTypeText === 'IPv4' || addressTypeText === 'IPv6' || addressTypeText === 'FQDN') addressType = addressTypeText;
  // ValidateEndpointSlice (validateAddressType): required, one of IPv4, IPv6, FQDN.
  else if (addressTypeText === undefined) check.error('addressType is missing; set it to IPv4, IPv6 or FQDN', undefined, 'address-type-required');
  else check.error(`addressType ${jsonExcerpt(addressTypeText)} is not valid; use IPv4, IPv6 or FQDN`, 'addressType', 'address-type-required');
  const beta = apiVersion.endsWith('/v1beta1');
  const endpoints: Endpoint[] = [];
  // Slices hold most of a large cluster's objects: a field of the expected type is read directly,
  // and only one that is not goes through the checker (same findings), so the field paths of
  // messages are built only for a finding. The admission checks below read what was read
  // anyway (the parsed address bytes, the node name) and allocate nothing per endpoint.
  const rawEndpoints = check.arr(o, 'endpoints', 'endpoints');
  if (rawEndpoints.length > SLICE_MAX_ENDPOINTS) {
    check.error(`endpoints lists ${rawEndpoints.length} endpoints; an EndpointSlice holds at most ${SLICE_MAX_ENDPOINTS} (validateEndpoints), split it`, 'endpoints', 'too-many-endpoints');
  }
  // The last node name found valid: a slice's endpoints mostly share a few nodes.
  let validNode: string | undefined;
  rawEndpoints.forEach((e, i) => {
    if (!isObj(e)) {
      check.error(`endpoints[${i}] must be a mapping with "addresses"`, `endpoints[${i}]`);
      return;
    }
    const addresses: string[] = [];
    const addrs = e['addresses'];
    const rawAddrs = Array.isArray(addrs) ? addrs : check.arr(e, 'addresses', `endpoints[${i}].addresses`);
    // validateEndpoints: at least 1 address, at most 100.
    if (rawAddrs.length === 0) check.error(`endpoints[${i}].addresses is empty; list the endpoint's address`, `endpoints[${i}]`, 'addresses-required');
    else if (rawAddrs.length > SLICE_MAX_ADDRESSES) {
      check.error(`endpoints[${i}].addresses lists ${rawAddrs.length} addresses; an endpoint has at most ${SLICE_MAX_ADDRESSES} (validateEndpoints)`, `endpoints[${i}].addresses`, 'too-many-addresses');
    }
    rawAddrs.forEach((a, j) => {
      if (addressType === 'FQDN') {
        // validateEndpoints: IsFullyQualifiedDomainName (one trailing dot allowed, a DNS-1123
        // subdomain of at least two labels).
        const name = typeof a === 'string' && a.endsWith('.') ? a.slice(0, -1) : a;
        if (typeof name !== 'string' || !isDns1123Subdomain(name) || !name.includes('.') || longLabel(name)) {
          const ap = `endpoints[${i}].addresses[${j}]`;
          check.error(`${ap} ${jsonExcerpt(a)} is not a fully qualified DNS name; use a lower-case name of at least two labels such as db.example.com`, ap, 'invalid-address');
        } else addresses.push(a as string);
        return;
      }
      const p = typeof a === 'string' ? parseIp(a) : undefined;
      if (p === undefined) {
        check.ip(a, `endpoints[${i}].addresses[${j}]`); // the finding
        return;
      }
      const ip = formatIp(p);
      // The family from the canonical text: ':' only in IPv6. Searching it also flattens the
      // text, which formatIp builds from pieces: the model keeps one flat string per address.
      if ((ip.includes(':') ? 'IPv6' : 'IPv4') !== addressType) {
        const ap = `endpoints[${i}].addresses[${j}]`;
        check.error(`${ap} ${jsonExcerpt(a)} is not an ${addressType} address but the slice has addressType ${addressType}; put it in a slice of the right addressType`, ap, 'invalid-address');
        return;
      }
      // validateEndpoints: ValidateEndpointIP (once ValidateNonSpecialIP).
      const special = specialIpProblem(p.bytes);
      if (special !== undefined) {
        const ap = `endpoints[${i}].addresses[${j}]`;
        check.error(`${ap} ${ip} ${special}, which the API server rejects for an endpoint; use the pod's or node's address`, ap, 'special-ip');
        return;
      }
      addresses.push(ip);
    });
    const c = e['conditions'];
    const cond = isObj(c) ? c : check.obj(e, 'conditions', `endpoints[${i}].conditions`);
    const r = cond['ready'];
    const ready = typeof r === 'boolean' ? r : check.bool(cond, 'ready', `endpoints[${i}].conditions.ready`);
    const hostname = e['hostname'] === undefined ? undefined : hostnameOf(e, check, `endpoints[${i}].hostname`);
    // v1beta1 validateEndpoints: topology is checked as labels (ValidateLabels).
    const topology = beta ? check.labels(e, 'topology', `endpoints[${i}].topology`) : {};
    const z = e['zone'];
    const zone = (typeof z === 'string' ? z : check.str(e, 'zone', `endpoints[${i}].zone`)) ?? topology['topology.kubernetes.io/zone'];
    const nn = e['nodeName'];
    const nodeName = (typeof nn === 'string' ? nn : check.str(e, 'nodeName', `endpoints[${i}].nodeName`)) ?? topology['kubernetes.io/hostname'];
    if (typeof nn === 'string' && nn !== validNode) {
      // validateEndpoints: ValidateNodeName (a DNS-1123 subdomain).
      if (isDns1123Subdomain(nn)) validNode = nn;
      else check.error(`endpoints[${i}].nodeName ${jsonExcerpt(nn)} is not a valid node name (DNS-1123 subdomain); use the Node's name`, `endpoints[${i}].nodeName`, 'invalid-node-name');
    }
    const t = e['targetRef'];
    const ref = t === undefined || t === null ? {} : targetRef(e, check, `endpoints[${i}]`);
    const kind = ref.targetRefKind && intern(ref.targetRefKind);
    endpoints.push(endpointOf(tight(addresses), ready, hostname, ref.targetRefName, kind, zone ? intern(zone) : undefined, nodeName ? intern(nodeName) : undefined));
  });
  const serviceName = meta.labels['kubernetes.io/service-name'] ?? meta.labels['multicluster.kubernetes.io/service-name'];
  if (serviceName === undefined) {
    check.warn('has no kubernetes.io/service-name label, so no Service owns it; add the label with the Service name', 'metadata.labels');
  }
  return {
    ...meta,
    ...(serviceName !== undefined ? { serviceName } : {}),
    addressType,
    ports: readEndpointPorts(o, check, 'ports', 'slice'),
    endpoints: tight(endpoints),
    mirrored: false,
  };
}

/**
 * One endpoint, its fields in the model's order. The usual ones (what the EndpointSlice
 * controller writes) are one object literal, all fields in the object itself; others are built
 * field by field. Values that are absent stay absent.
 */
function endpointOf(
  addresses: readonly string[],
  ready: boolean | undefined,
  hostname: string | undefined,
  targetRefName: string | undefined,
  targetRefKind: string | undefined,
  zone: string | undefined,
  nodeName: string | undefined,
): Endpoint {
  if (ready !== undefined && hostname === undefined && targetRefName !== undefined && targetRefKind !== undefined && nodeName !== undefined) {
    return zone !== undefined ? { addresses, ready, targetRefName, targetRefKind, zone, nodeName } : { addresses, ready, targetRefName, targetRefKind, nodeName };
  }
  return {
    addresses,
    ...(ready !== undefined ? { ready } : {}),
    ...(hostname !== undefined ? { hostname } : {}),
    ...(targetRefName ? { targetRefName } : {}),
    ...(targetRefKind ? { targetRefKind } : {}),
    ...(zone ? { zone } : {}),
    ...(nodeName ? { nodeName } : {}),
  };
}

/**
 * An array with no room to spare. One grown by push keeps room for at least 17 elements: 128
 * bytes of nothing behind each one-address endpoint, 13 MiB on 100k endpoints.
 */
export function tight<T>(xs: T[]): T[] {
  return xs.length === 0 ? xs : xs.slice();
}

/**
 * One string per distinct value, for the few fields every endpoint of a cluster repeats (node
 * names, zones, target kinds): JSON.parse makes a new string of each value longer than 10
 * characters (shorter ones it shares already), and 100k endpoints on nodes named in 30
 * characters would keep 100k copies of a few names. One per load.
 */
export function interner(): (s: string) => string {
  const seen = new Map<string, string>();
  return (s) => {
    if (s.length <= 10) return s;
    const had = seen.get(s);
    if (had !== undefined) return had;
    seen.set(s, s);
    return s;
  };
}


export function toEndpoints(o: Obj, meta: ObjectMeta, check: Checker): EndpointsDraft {
  const subsets: EndpointsSubset[] = [];
  check.arr(o, 'subsets', 'subsets').forEach((s, i) => {
    const path = `subsets[${i}]`;
    if (!isObj(s)) {
      check.error(`${path} must be a mapping`, path);
      return;
    }
    const readAddrs = (key: string): EndpointsAddress[] => {
      const out: EndpointsAddress[] = [];
      check.arr(s, key, `${path}.${key}`).forEach((a, j) => {
        const ap = `${path}.${key}[${j}]`;
        if (!isObj(a)) {
          check.error(`${ap} must be a mapping with "ip"`, ap);
          return;
        }
        const ip = check.ip(a['ip'], `${ap}.ip`);
        if (ip === undefined) return;
        // validateEndpointAddress: ValidateEndpointIP (once ValidateNonSpecialIP), and nodeName
        // by ValidateNodeName.
        const special = specialIpProblem(parseIp(ip)!.bytes);
        if (special !== undefined) {
          check.error(`${ap}.ip ${ip} ${special}, which the API server rejects for an endpoint; use the pod's or node's address`, `${ap}.ip`, 'special-ip');
          return;
        }
        const hostname = hostnameOf(a, check, `${ap}.hostname`);
        const nodeName = check.str(a, 'nodeName', `${ap}.nodeName`);
        if (nodeName !== undefined && nodeName !== '' && !isDns1123Subdomain(nodeName)) {
          check.error(`${ap}.nodeName ${jsonExcerpt(nodeName)} is not a valid node name (DNS-1123 subdomain); use the Node's name`, `${ap}.nodeName`, 'invalid-node-name');
        }
        out.push({ ip, ...(hostname ? { hostname } : {}), ...(nodeName ? { nodeName } : {}), ...targetRef(a, check, ap) });
      });
      return out;
    };
    // validateEndpointSubsets: a subset lists addresses or notReadyAddresses.
    const none = (k: string): boolean => !Array.isArray(s[k]) || (s[k] as unknown[]).length === 0;
    if (none('addresses') && none('notReadyAddresses')) {
      check.error(`${path} lists no addresses; give it addresses or notReadyAddresses, or remove it`, path, 'addresses-required');
    }
    subsets.push({ ready: readAddrs('addresses'), notReady: readAddrs('notReadyAddresses'), ports: readEndpointPorts(s, check, `${path}.ports`, 'endpoints') });
  });
  return { meta, subsets, check };
}

/** Annotation that marks a pod (or, on a workload or its pod template, all its pods) not ready. */
export const READY_ANNOTATION = 'clusterdns.io/ready';

/**
 * Container ports of a pod spec: containers[].ports and those of restartable init containers
 * (sidecars, restartPolicy: Always), which FindPort also searches in current Kubernetes.
 */
export function readContainerPorts(spec: Obj, check: Checker, path: string): ContainerPort[] {
  const out: ContainerPort[] = [];
  for (const key of ['containers', 'initContainers']) {
    const containers = check.arr(spec, key, `${path}.${key}`);
    // ValidatePodSpec (validateContainers): a pod has at least one container.
    if (key === 'containers' && containers.length === 0) {
      check.error(`${path}.containers is missing; a pod needs at least one container, e.g. containers: [{name: app, image: nginx}]`, check.written(`${path}.containers`, path), 'containers-required');
    }
    containers.forEach((c, i) => {
      if (!isObj(c)) return;
      if (key === 'initContainers' && c['restartPolicy'] !== 'Always') return;
      const ports = check.arr(c, 'ports', `${path}.${key}[${i}].ports`);
      // validateContainerPorts: names unique within the container.
      const names = ports.length > 1 ? new Map<string, number>() : undefined;
      ports.forEach((p, j) => {
        const pp = `${path}.${key}[${i}].ports[${j}]`;
        if (!isObj(p)) {
          check.error(`${pp} must be a mapping with containerPort`, pp);
          return;
        }
        const containerPort = check.port(p, 'containerPort', `${pp}.containerPort`);
        if (containerPort === undefined) {
          // validateContainerPorts: containerPort is required.
          if (p['containerPort'] === undefined || p['containerPort'] === null) {
            check.error(`${pp}.containerPort is missing; give the port number (1-65535)`, pp, 'port-required');
          }
          return;
        }
        const name = check.str(p, 'name', `${pp}.name`) ?? '';
        if (name !== '') {
          // validateContainerPorts: IsValidPortName, and no name twice in a container.
          const why = portNameProblem(name);
          if (why !== undefined) {
            check.error(`${pp}.name ${jsonExcerpt(name)} is not a valid port name: it ${why}; use at most 15 lower-case letters, digits and '-', such as "http"`, `${pp}.name`, 'invalid-port-name');
          } else if (names?.has(name)) {
            check.error(`${pp}.name ${jsonExcerpt(name)} is also the name of ports[${names.get(name)}] of this container; port names must be unique, rename one`, `${pp}.name`, 'duplicate-port-name');
          } else names?.set(name, j);
        }
        out.push({ name, protocol: check.protocol(p, 'protocol', `${pp}.protocol`), containerPort });
      });
    });
  }
  return tight(out);
}

/** The controller owner reference (controller: true), else the first one; undefined when there is none. */
export function readOwner(o: Obj): { kind: string; name: string } | undefined {
  const md = o['metadata'];
  if (!isObj(md) || !Array.isArray(md['ownerReferences'])) return undefined;
  const refs = (md['ownerReferences'] as unknown[]).filter(
    (r): r is Obj => isObj(r) && typeof r['kind'] === 'string' && typeof r['name'] === 'string',
  );
  const ref = refs.find((r) => r['controller'] === true) ?? refs[0];
  return ref ? { kind: ref['kind'] as string, name: ref['name'] as string } : undefined;
}

/** Readiness as written: Ready=False condition, a phase other than Running, or the annotation. */
function podReadyFromManifest(status: Obj, phase: string, annotations: Readonly<Record<string, string>>): boolean {
  if (phase !== 'Running') return false;
  if (annotations[READY_ANNOTATION] === 'false') return false;
  const conds = status['conditions'];
  if (Array.isArray(conds)) {
    for (const c of conds) {
      if (isObj(c) && c['type'] === 'Ready' && c['status'] !== undefined && c['status'] !== 'True') return false;
    }
  }
  return true;
}

export function toPod(o: Obj, meta: ObjectMeta, check: Checker): Pod {
  const spec = check.obj(o, 'spec', 'spec');
  const status = check.obj(o, 'status', 'status');
  const md = check.obj(o, 'metadata', 'metadata');
  const podIPs: string[] = [];
  check.arr(status, 'podIPs', 'status.podIPs').forEach((p, i) => {
    if (!isObj(p)) {
      check.error(`status.podIPs[${i}] must be a mapping like {ip: 10.244.0.5}`, `status.podIPs[${i}]`);
      return;
    }
    const ip = check.ip(p['ip'], `status.podIPs[${i}].ip`);
    if (ip === undefined || podIPs.includes(ip)) return;
    // validatePodIPs (ValidatePodStatusUpdate): at most one address per IP family.
    const f = familyOf(ip);
    if (podIPs.some((x) => familyOf(x) === f)) {
      check.error(`status.podIPs[${i}] ${ip}: a pod has at most one ${f} address; remove one`, `status.podIPs[${i}]`, 'pod-ips-family');
      return;
    }
    podIPs.push(ip);
  });
  let podIP: string | undefined;
  const rawPodIP = status['podIP'];
  if (rawPodIP !== undefined && rawPodIP !== null && rawPodIP !== '') podIP = check.ip(rawPodIP, 'status.podIP');
  if (podIP !== undefined && podIPs.length > 0 && podIPs[0] !== podIP) {
    check.error(`status.podIP "${podIP}" must equal status.podIPs[0].ip "${podIPs[0]}"`, 'status.podIP');
  }
  if (podIP === undefined) podIP = podIPs[0];
  else if (podIPs.length === 0) podIPs.push(podIP);
  const phase = check.str(status, 'phase', 'status.phase') || 'Running';
  const deletion = md['deletionTimestamp'];
  const hostname = check.str(spec, 'hostname', 'spec.hostname');
  const subdomain = check.str(spec, 'subdomain', 'spec.subdomain');
  // ValidatePodSpec: hostname and subdomain are DNS-1123 labels (ValidateDNS1123Label).
  if (hostname && !isDns1123Label(hostname)) check.error(`spec.hostname ${jsonExcerpt(hostname)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-'`, 'spec.hostname', 'invalid-hostname');
  if (subdomain && !isDns1123Label(subdomain)) check.error(`spec.subdomain ${jsonExcerpt(subdomain)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-'`, 'spec.subdomain', 'invalid-subdomain');
  const nodeName = check.str(spec, 'nodeName', 'spec.nodeName');
  const owner = readOwner(o);
  return {
    ...meta,
    ...(podIP !== undefined ? { podIP } : {}),
    podIPs: tight(podIPs),
    phase,
    deleting: deletion !== undefined && deletion !== null && deletion !== '',
    ...(hostname ? { hostname } : {}),
    ...(subdomain ? { subdomain } : {}),
    ...(nodeName ? { nodeName } : {}),
    hostNetwork: check.bool(spec, 'hostNetwork', 'spec.hostNetwork') ?? false,
    ready: podReadyFromManifest(status, phase, meta.annotations),
    containerPorts: readContainerPorts(spec, check, 'spec'),
    ...(owner ? { owner } : {}),
    ...readPodDNS(spec, check, 'spec'),
  };
}

/** validatePodDNSConfig's limits (pkg/apis/core/validation: MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars). */
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_DNS_SEARCH_CHARS = 2048;
/** apimachinery dns1123SubdomainFmtWithUnderscore: labels `_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?`. */
const SEARCH_DOMAIN = /^_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*$/;

/** validatePodDNSConfig: nameservers are IPs (at most 3), search paths DNS-1123 subdomains (at most 32, 2048 characters). */
function checkDnsConfig(dc: { nameservers: readonly string[]; searches: readonly string[] }, check: Checker, path: string): void {
  if (dc.nameservers.length > MAX_DNS_NAMESERVERS) {
    check.error(`${path}.nameservers lists ${dc.nameservers.length} servers; at most ${MAX_DNS_NAMESERVERS} are allowed, remove some`, `${path}.nameservers`, 'dns-config-limits');
  }
  dc.nameservers.forEach((n, i) => {
    if (parseIp(n) === undefined) check.error(`${path}.nameservers[${i}] ${jsonExcerpt(n)} is not an IP address; write the server's IP`, `${path}.nameservers[${i}]`, 'dns-config-limits');
  });
  if (dc.searches.length > MAX_DNS_SEARCH_PATHS) {
    check.error(`${path}.searches lists ${dc.searches.length} domains; at most ${MAX_DNS_SEARCH_PATHS} are allowed, remove some`, `${path}.searches`, 'dns-config-limits');
  }
  let chars = dc.searches.length > 0 ? dc.searches.length - 1 : 0;
  dc.searches.forEach((d, i) => {
    chars += d.length;
    // validatePodDNSConfig with RelaxedDNSSearchValidation (on by default since 1.33): "." alone
    // is allowed, one trailing dot is trimmed, and labels may hold '_' (IsDNS1123SubdomainWithUnderscore).
    const bare = d.endsWith('.') ? d.slice(0, -1) : d;
    if (d !== '.' && !(bare.length <= 253 && SEARCH_DOMAIN.test(bare))) {
      check.error(`${path}.searches[${i}] ${jsonExcerpt(d)} is not a valid search domain; use a lower-case domain such as svc.cluster.local`, `${path}.searches[${i}]`, 'dns-config-limits');
    }
  });
  if (chars > MAX_DNS_SEARCH_CHARS) {
    check.error(`${path}.searches is ${chars} characters long (joined by spaces); at most ${MAX_DNS_SEARCH_CHARS} are allowed, shorten it`, `${path}.searches`, 'dns-config-limits');
  }
}

/** The pod spec's DNS fields (dnsPolicy, dnsConfig, hostAliases, setHostnameAsFQDN), only those present. */
export function readPodDNS(spec: Obj, check: Checker, path: string): Pick<Pod, 'dnsPolicy' | 'dnsConfig' | 'hostAliases' | 'setHostnameAsFQDN'> {
  const out: { dnsPolicy?: string; dnsConfig?: PodDNSConfig; hostAliases?: HostAlias[]; setHostnameAsFQDN?: boolean } = {};
  const policy = check.str(spec, 'dnsPolicy', `${path}.dnsPolicy`);
  if (policy !== undefined && policy !== '') {
    if (!['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'].includes(policy)) {
      check.error(`${path}.dnsPolicy ${jsonExcerpt(policy)} is not valid; use ClusterFirst, ClusterFirstWithHostNet, Default or None`, `${path}.dnsPolicy`);
    }
    out.dnsPolicy = policy;
  }
  if (spec['dnsConfig'] !== undefined && spec['dnsConfig'] !== null) {
    const dc = check.obj(spec, 'dnsConfig', `${path}.dnsConfig`);
    const strings = (key: string): string[] =>
      check.arr(dc, key, `${path}.dnsConfig.${key}`).flatMap((v, i) => {
        if (typeof v === 'string') return [v];
        check.error(`${path}.dnsConfig.${key}[${i}] must be a string`, `${path}.dnsConfig.${key}[${i}]`);
        return [];
      });
    const options: { name: string; value?: string }[] = [];
    check.arr(dc, 'options', `${path}.dnsConfig.options`).forEach((o, i) => {
      if (!isObj(o)) {
        check.error(`${path}.dnsConfig.options[${i}] must be a mapping like {name: ndots, value: "2"}`, `${path}.dnsConfig.options[${i}]`);
        return;
      }
      const name = check.str(o, 'name', `${path}.dnsConfig.options[${i}].name`);
      const value = check.str(o, 'value', `${path}.dnsConfig.options[${i}].value`);
      if (!name) {
        check.error(`${path}.dnsConfig.options[${i}].name is required`, `${path}.dnsConfig.options[${i}]`);
        return;
      }
      options.push(value !== undefined ? { name, value } : { name });
    });
    const dnsConfig = { nameservers: strings('nameservers'), searches: strings('searches'), options };
    checkDnsConfig(dnsConfig, check, `${path}.dnsConfig`);
    out.dnsConfig = dnsConfig;
  }
  // validatePodDNSConfig: dnsPolicy None takes its resolver from dnsConfig, with a nameserver.
  if (policy === 'None' && (out.dnsConfig?.nameservers === undefined || out.dnsConfig.nameservers.length === 0)) {
    check.error(
      `${path}.dnsPolicy None needs ${path}.dnsConfig with at least one nameserver; add dnsConfig: {nameservers: [...]} or use dnsPolicy ClusterFirst`,
      check.written(`${path}.dnsConfig`, `${path}.dnsPolicy`),
      'dns-none-needs-config',
    );
  }
  const aliases: HostAlias[] = [];
  check.arr(spec, 'hostAliases', `${path}.hostAliases`).forEach((a, i) => {
    if (!isObj(a)) {
      check.error(`${path}.hostAliases[${i}] must be a mapping like {ip: 10.1.2.3, hostnames: [foo.local]}`, `${path}.hostAliases[${i}]`);
      return;
    }
    const ip = check.ip(a['ip'], `${path}.hostAliases[${i}].ip`);
    const hostnames = check.arr(a, 'hostnames', `${path}.hostAliases[${i}].hostnames`).filter((h): h is string => typeof h === 'string');
    // validateHostAliases: each hostname a DNS-1123 subdomain.
    hostnames.forEach((h, j) => {
      if (!isDns1123Subdomain(h)) {
        check.error(`${path}.hostAliases[${i}].hostnames[${j}] ${jsonExcerpt(h)} is not a valid DNS-1123 subdomain; use a lower-case host name`, `${path}.hostAliases[${i}].hostnames[${j}]`, 'invalid-host-alias');
      }
    });
    if (ip !== undefined) aliases.push({ ip, hostnames });
  });
  if (aliases.length > 0) out.hostAliases = aliases;
  const fqdn = check.bool(spec, 'setHostnameAsFQDN', `${path}.setHostnameAsFQDN`);
  if (fqdn !== undefined) out.setHostnameAsFQDN = fqdn;
  return out;
}

export function toServiceImport(o: Obj, meta: ObjectMeta, check: Checker): ServiceImport {
  const spec = check.obj(o, 'spec', 'spec');
  const t = check.str(spec, 'type', 'spec.type');
  let type: ServiceImport['type'] = 'ClusterSetIP';
  if (t === 'ClusterSetIP' || t === 'Headless') type = t;
  else check.error(`spec.type ${t === undefined ? 'is missing' : `${jsonExcerpt(t)} is not valid`}; use ClusterSetIP or Headless`, 'spec.type');
  const ips: string[] = [];
  check.arr(spec, 'ips', 'spec.ips').forEach((v, i) => {
    const ip = check.ip(v, `spec.ips[${i}]`);
    if (ip !== undefined) ips.push(ip);
  });
  return { ...meta, type, ips: tight(ips), ports: readEndpointPorts(spec, check, 'spec.ports', 'none') };
}
