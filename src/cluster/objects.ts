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
} from './model.js';
import { formatIp, parseIp } from '../pkg/ip.js';
import { type Checker, isDns1035Label, isDns1123Label, isDns1123Subdomain, isObj } from './validate.js';
import { excerpt } from './yaml-docs.js';
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
  check.what = `${check.what} ${excerpt(`${namespaced ? `${namespace}/` : ''}${name}`, 120)}`;
  if (nameRule === 'dns1035' && !isDns1035Label(name)) {
    check.error(
      `name ${excerpt(name)} is not a valid DNS-1035 label; use at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit`,
      'metadata.name',
    );
  } else if (nameRule === 'dns1123label' && !isDns1123Label(name)) {
    check.error(
      `name ${excerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit`,
      'metadata.name',
    );
  } else if (nameRule === 'subdomain' && !isDns1123Subdomain(name)) {
    check.error(`name ${excerpt(name)} is not a valid DNS-1123 subdomain; use lower-case letters, digits, '-' and '.', at most 253 characters`, 'metadata.name');
  }
  if (namespaced && nsWritten !== undefined && nsWritten !== '' && !isDns1123Label(nsWritten)) {
    check.error(`metadata.namespace ${excerpt(nsWritten)} is not a valid namespace name (DNS-1123 label: lower-case letters, digits and '-', at most 63)`, 'metadata.namespace');
  }
  return {
    name,
    namespace,
    labels: check.stringMap(md, 'labels', 'metadata.labels'),
    annotations: check.stringMap(md, 'annotations', 'metadata.annotations'),
    source,
  };
}

export function toNamespace(meta: ObjectMeta): NamespaceObject {
  // The API server labels every namespace with its own name (Kubernetes >= 1.21).
  return { name: meta.name, labels: { ...meta.labels, 'kubernetes.io/metadata.name': meta.name }, source: meta.source };
}

const SERVICE_TYPES: readonly ServiceType[] = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

function readServicePorts(spec: Obj, check: Checker): ServicePort[] {
  const out: ServicePort[] = [];
  check.arr(spec, 'ports', 'spec.ports').forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    if (!isObj(p)) {
      check.error(`${path} must be a mapping with at least "port"`, path);
      return;
    }
    const name = check.str(p, 'name', `${path}.name`) ?? '';
    const protocol = check.protocol(p, 'protocol', `${path}.protocol`);
    const port = check.port(p, 'port', `${path}.port`);
    if (port === undefined) {
      if (p['port'] === undefined || p['port'] === null) check.error(`${path}.port is missing; every Service port needs a port number (1-65535)`, path);
      return;
    }
    let targetPort: number | string | undefined;
    const tp = p['targetPort'];
    if (typeof tp === 'string' && tp !== '') targetPort = /^[0-9]+$/.test(tp) ? Number(tp) : tp;
    else if (tp !== undefined && tp !== null) targetPort = check.port(p, 'targetPort', `${path}.targetPort`);
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
      check.error(`spec.ipFamilies[${i}] ${excerpt(f)} is not an IP family; use IPv4 or IPv6`, `spec.ipFamilies[${i}]`);
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
  check.error(`spec.type ${excerpt(typeText)} is not a Service type; use ClusterIP, NodePort, LoadBalancer or ExternalName`, 'spec.type');
  return 'ClusterIP';
}

/** The cluster IPs as written: spec.clusterIPs, else [spec.clusterIP]; the two must agree. */
function writtenClusterIPs(clusterIP: string | undefined, rawIPs: readonly unknown[], check: Checker): string[] {
  const written: string[] = [];
  rawIPs.forEach((v, i) => {
    if (typeof v !== 'string') check.error(`spec.clusterIPs[${i}] must be a string`, `spec.clusterIPs[${i}]`);
    else written.push(v);
  });
  if (written.length === 0 && clusterIP !== undefined && clusterIP !== '') written.push(clusterIP);
  else if (written.length > 0 && clusterIP !== undefined && clusterIP !== '' && clusterIP !== written[0]) {
    check.error(`spec.clusterIP ${excerpt(clusterIP)} must equal spec.clusterIPs[0] ${excerpt(written[0])}; make them agree or drop spec.clusterIP`, 'spec.clusterIP');
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
      check.error(`${path} ${excerpt(v)}: spec.clusterIPs may hold at most one address per IP family`, path);
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
    if (declaredIPs.length > 1) {
      check.error('ipFamilyPolicy SingleStack allows one cluster IP; set spec.ipFamilyPolicy to PreferDualStack or RequireDualStack', 'spec.clusterIPs');
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
  const selector = check.stringMap(spec, 'selector', 'spec.selector');
  const publishNotReadyAddresses = check.bool(spec, 'publishNotReadyAddresses', 'spec.publishNotReadyAddresses') ?? false;
  const externalIPs: string[] = [];
  check.arr(spec, 'externalIPs', 'spec.externalIPs').forEach((v, i) => {
    const ip = check.ip(v, `spec.externalIPs[${i}]`);
    if (ip !== undefined) externalIPs.push(ip);
  });
  const clusterIP = check.str(spec, 'clusterIP', 'spec.clusterIP');
  const rawIPs = check.arr(spec, 'clusterIPs', 'spec.clusterIPs');
  const writtenFamilies = readFamilies(spec, check);
  const policyText = check.str(spec, 'ipFamilyPolicy', 'spec.ipFamilyPolicy');
  if (policyText !== undefined && !['SingleStack', 'PreferDualStack', 'RequireDualStack'].includes(policyText)) {
    check.error(`spec.ipFamilyPolicy ${excerpt(policyText)} is not valid; use SingleStack, PreferDualStack or RequireDualStack`, 'spec.ipFamilyPolicy');
  }
  const base = {
    meta,
    type,
    ports,
    ...(selectorPresent ? { selector } : {}),
    publishNotReadyAddresses,
    externalIPs: tight(externalIPs),
    check,
  };

  if (type === 'ExternalName') {
    const externalName = check.str(spec, 'externalName', 'spec.externalName');
    if (externalName === undefined || externalName === '') {
      check.error('type ExternalName needs spec.externalName; set it to a DNS name such as my.database.example.com', 'spec.type');
    }
    if ((clusterIP !== undefined && clusterIP !== '') || rawIPs.length > 0) {
      check.warn('spec.clusterIP/clusterIPs are ignored for an ExternalName Service; remove them', rawIPs.length > 0 ? 'spec.clusterIPs' : 'spec.clusterIP');
    }
    return { ...base, headless: false, ...(externalName ? { externalName } : {}), declaredIPs: [], families: [] };
  }

  const written = writtenClusterIPs(clusterIP, rawIPs, check);

  if (written[0] === 'None') {
    if (written.length > 1) check.error('a headless Service must have spec.clusterIPs ["None"] only', 'spec.clusterIPs');
    if (type !== 'ClusterIP') check.error(`clusterIP "None" (headless) is only valid for type ClusterIP, not ${type}`, 'spec.type');
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

function readEndpointPorts(parent: Obj, check: Checker, path: string): EndpointPort[] {
  const out: EndpointPort[] = [];
  check.arr(parent, 'ports', path).forEach((p, i) => {
    const pp = `${path}[${i}]`;
    if (!isObj(p)) {
      check.error(`${pp} must be a mapping`, pp);
      return;
    }
    const name = check.str(p, 'name', `${pp}.name`) ?? '';
    const protocol = check.protocol(p, 'protocol', `${pp}.protocol`);
    const port = check.port(p, 'port', `${pp}.port`);
    if (port === undefined) {
      if (p['port'] === undefined || p['port'] === null) check.warn(`${pp} has no port number and is ignored`, pp);
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

function hostnameOf(o: Obj, check: Checker, path: string): string | undefined {
  const h = check.str(o, 'hostname', path);
  if (h === undefined || h === '') return undefined;
  if (!isDns1123Label(h)) {
    check.error(`${path} ${excerpt(h)} is not a valid DNS-1123 label; use lower-case letters, digits and '-', at most 63`, path);
  }
  return h;
}

export function toEndpointSlice(o: Obj, meta: ObjectMeta, check: Checker, apiVersion: string, intern: (s: string) => string = (s) => s): EndpointSlice {
  const addressTypeText = check.str(o, 'addressType', 'addressType');
  let addressType: EndpointSlice['addressType'] = 'IPv4';
  if (addressTypeText === 'IPv4' || addressTypeText === 'IPv6' || addressTypeText === 'FQDN') addressType = addressTypeText;
  else if (addressTypeText === undefined) check.error('addressType is missing; set it to IPv4, IPv6 or FQDN');
  else check.error(`addressType ${excerpt(addressTypeText)} is not valid; use IPv4, IPv6 or FQDN`, 'addressType');
  const beta = apiVersion.endsWith('/v1beta1');
  const endpoints: Endpoint[] = [];
  // Slices hold most of a large cluster's objects: a field of the expected type is read directly,
  // and only one that is not goes through the checker (same findings), so the field paths of
  // messages are built only for a finding.
  check.arr(o, 'endpoints', 'endpoints').forEach((e, i) => {
    if (!isObj(e)) {
      check.error(`endpoints[${i}] must be a mapping with "addresses"`, `endpoints[${i}]`);
      return;
    }
    const addresses: string[] = [];
    const addrs = e['addresses'];
    const rawAddrs = Array.isArray(addrs) ? addrs : check.arr(e, 'addresses', `endpoints[${i}].addresses`);
    if (rawAddrs.length === 0) check.error(`endpoints[${i}].addresses is empty; list the endpoint's address`, `endpoints[${i}]`);
    rawAddrs.forEach((a, j) => {
      if (addressType === 'FQDN') {
        if (typeof a !== 'string' || a === '') check.error(`endpoints[${i}].addresses[${j}] must be a DNS name`, `endpoints[${i}].addresses[${j}]`);
        else addresses.push(a);
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
        check.error(`${ap} ${excerpt(a)} is not an ${addressType} address but the slice has addressType ${addressType}; put it in a slice of the right addressType`, ap);
        return;
      }
      addresses.push(ip);
    });
    const c = e['conditions'];
    const cond = isObj(c) ? c : check.obj(e, 'conditions', `endpoints[${i}].conditions`);
    const r = cond['ready'];
    const ready = typeof r === 'boolean' ? r : check.bool(cond, 'ready', `endpoints[${i}].conditions.ready`);
    const hostname = e['hostname'] === undefined ? undefined : hostnameOf(e, check, `endpoints[${i}].hostname`);
    const topology = beta ? check.stringMap(e, 'topology', `endpoints[${i}].topology`) : {};
    const z = e['zone'];
    const zone = (typeof z === 'string' ? z : check.str(e, 'zone', `endpoints[${i}].zone`)) ?? topology['topology.kubernetes.io/zone'];
    const nn = e['nodeName'];
    const nodeName = (typeof nn === 'string' ? nn : check.str(e, 'nodeName', `endpoints[${i}].nodeName`)) ?? topology['kubernetes.io/hostname'];
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
    ports: readEndpointPorts(o, check, 'ports'),
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
        const hostname = hostnameOf(a, check, `${ap}.hostname`);
        const nodeName = check.str(a, 'nodeName', `${ap}.nodeName`);
        out.push({ ip, ...(hostname ? { hostname } : {}), ...(nodeName ? { nodeName } : {}), ...targetRef(a, check, ap) });
      });
      return out;
    };
    subsets.push({ ready: readAddrs('addresses'), notReady: readAddrs('notReadyAddresses'), ports: readEndpointPorts(s, check, `${path}.ports`) });
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
    check.arr(spec, key, `${path}.${key}`).forEach((c, i) => {
      if (!isObj(c)) return;
      if (key === 'initContainers' && c['restartPolicy'] !== 'Always') return;
      check.arr(c, 'ports', `${path}.${key}[${i}].ports`).forEach((p, j) => {
        const pp = `${path}.${key}[${i}].ports[${j}]`;
        if (!isObj(p)) {
          check.error(`${pp} must be a mapping with containerPort`, pp);
          return;
        }
        const containerPort = check.port(p, 'containerPort', `${pp}.containerPort`);
        if (containerPort === undefined) return;
        const name = check.str(p, 'name', `${pp}.name`) ?? '';
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
    if (ip !== undefined && !podIPs.includes(ip)) podIPs.push(ip);
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
  if (hostname && !isDns1123Label(hostname)) check.error(`spec.hostname ${excerpt(hostname)} is not a valid DNS-1123 label`, 'spec.hostname');
  if (subdomain && !isDns1123Label(subdomain)) check.error(`spec.subdomain ${excerpt(subdomain)} is not a valid DNS-1123 label`, 'spec.subdomain');
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

/** The pod spec's DNS fields (dnsPolicy, dnsConfig, hostAliases, setHostnameAsFQDN), only those present. */
export function readPodDNS(spec: Obj, check: Checker, path: string): Pick<Pod, 'dnsPolicy' | 'dnsConfig' | 'hostAliases' | 'setHostnameAsFQDN'> {
  const out: { dnsPolicy?: string; dnsConfig?: PodDNSConfig; hostAliases?: HostAlias[]; setHostnameAsFQDN?: boolean } = {};
  const policy = check.str(spec, 'dnsPolicy', `${path}.dnsPolicy`);
  if (policy !== undefined && policy !== '') {
    if (!['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'].includes(policy)) {
      check.error(`${path}.dnsPolicy ${excerpt(policy)} is not valid; use ClusterFirst, ClusterFirstWithHostNet, Default or None`, `${path}.dnsPolicy`);
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
    out.dnsConfig = { nameservers: strings('nameservers'), searches: strings('searches'), options };
  }
  const aliases: HostAlias[] = [];
  check.arr(spec, 'hostAliases', `${path}.hostAliases`).forEach((a, i) => {
    if (!isObj(a)) {
      check.error(`${path}.hostAliases[${i}] must be a mapping like {ip: 10.1.2.3, hostnames: [foo.local]}`, `${path}.hostAliases[${i}]`);
      return;
    }
    const ip = check.ip(a['ip'], `${path}.hostAliases[${i}].ip`);
    const hostnames = check.arr(a, 'hostnames', `${path}.hostAliases[${i}].hostnames`).filter((h): h is string => typeof h === 'string');
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
  else check.error(`spec.type ${t === undefined ? 'is missing' : `${excerpt(t)} is not valid`}; use ClusterSetIP or Headless`, 'spec.type');
  const ips: string[] = [];
  check.arr(spec, 'ips', 'spec.ips').forEach((v, i) => {
    const ip = check.ip(v, `spec.ips[${i}]`);
    if (ip !== undefined) ips.push(ip);
  });
  return { ...meta, type, ips: tight(ips), ports: readEndpointPorts(spec, check, 'spec.ports') };
}
