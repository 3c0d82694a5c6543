// Reading a Service as the API server admits it: its type, ports and IP families, with their
// defaults and validation; cluster IPs are allocated later (emulate/allocate.ts).
import type { ObjectMeta, ServiceImport, ServicePort, ServiceType } from '../model/model.js';
import { parseIp } from '../../pkg/ip.js';
import { type Checker, hasServerSetMeta, isDns1123Label, isDns1123Subdomain, isObj, type Obj, portNameProblem, specialIpProblem } from './validate.js';
import { jsonExcerpt } from '../model/finding.js';
import { tight } from './objects.js';
import { readEndpointPorts } from './endpoints.js';

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
        check.error(
          `${path}.name is missing; a Service with more than one port must name every port (validateServicePort), e.g. name: http`,
          path,
          'unnamed-port',
        );
      }
    } else if (!isDns1123Label(name)) {
      // validateServicePort: ValidateDNS1123Label (so "HTTP" is rejected).
      check.error(
        `${path}.name ${jsonExcerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', such as "http"`,
        `${path}.name`,
        'invalid-port-name',
      );
    } else {
      const prev = names.get(name);
      if (prev !== undefined) {
        check.error(
          `${path}.name ${jsonExcerpt(name)} is also the name of spec.ports[${prev}]; port names must be unique (validateServicePort), rename one`,
          `${path}.name`,
          'duplicate-port-name',
        );
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
      check.error(
        `${path} repeats port ${key} of spec.ports[${prevKey}]; each port and protocol may appear once (ValidateService), remove or change one`,
        path,
        'duplicate-port',
      );
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
    check.error(
      'spec.clusterIPs must be empty when spec.clusterIP is not set; set spec.clusterIP to spec.clusterIPs[0] as well',
      'spec.clusterIPs',
      'cluster-ips-without-cluster-ip',
    );
  }
  if (written.length > 2) {
    check.error(
      `spec.clusterIPs holds ${written.length} addresses; it may hold at most 2, one per IP family (validateServiceClusterIPsRelatedFields)`,
      'spec.clusterIPs',
      'too-many-cluster-ips',
    );
  }
  if (written.length === 0 && clusterIP !== undefined && clusterIP !== '') written.push(clusterIP);
  else if (written.length > 0 && clusterIP !== undefined && clusterIP !== '' && clusterIP !== written[0]) {
    check.error(
      `spec.clusterIP ${jsonExcerpt(clusterIP)} must equal spec.clusterIPs[0] ${jsonExcerpt(written[0])}; make them agree or drop spec.clusterIP`,
      'spec.clusterIP',
    );
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
      check.warn(
        'two IP families but no spec.ipFamilyPolicy; treated as PreferDualStack (set spec.ipFamilyPolicy: PreferDualStack or RequireDualStack)',
        'spec',
      );
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
      check.error(
        'ipFamilyPolicy SingleStack allows one cluster IP; set spec.ipFamilyPolicy to PreferDualStack or RequireDualStack',
        'spec.clusterIPs',
        'single-stack-two-families',
      );
    } else if (policyText === 'SingleStack' && writtenFamilies.length > 1) {
      check.error(
        'ipFamilyPolicy SingleStack allows one IP family but spec.ipFamilies lists two; set spec.ipFamilyPolicy to PreferDualStack or RequireDualStack',
        'spec.ipFamilyPolicy',
        'single-stack-two-families',
      );
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
    if (why !== undefined)
      check.error(`spec.externalIPs[${i}] ${ip} ${why}; use an address the nodes receive traffic on`, `spec.externalIPs[${i}]`, 'special-ip');
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
      check.error(
        'type ExternalName needs spec.externalName; set it to a DNS name such as my.database.example.com',
        check.written('spec.externalName', 'spec.type'),
        'external-name-required',
      );
    } else if (!isDns1123Subdomain(externalName.endsWith('.') ? externalName.slice(0, -1) : externalName)) {
      check.error(
        `spec.externalName ${jsonExcerpt(externalName)} is not a valid DNS-1123 subdomain; use a lower-case DNS name such as my.database.example.com`,
        'spec.externalName',
        'invalid-external-name',
      );
    }
    if ((clusterIP !== undefined && clusterIP !== '') || rawIPs.length > 0) {
      check.error(
        'spec.clusterIP/clusterIPs may not be set for an ExternalName Service (the API server rejects it); remove them',
        check.written('spec.clusterIP', 'spec.clusterIPs'),
        'external-name-cluster-ip',
      );
    }
    if (writtenFamilies.length > 0 || policyText !== undefined) {
      check.error(
        'spec.ipFamilies and spec.ipFamilyPolicy may not be set for an ExternalName Service; remove them',
        check.written('spec.ipFamilies', 'spec.ipFamilyPolicy'),
        'external-name-families',
      );
    }
    return { ...base, headless: false, ...(externalName ? { externalName } : {}), declaredIPs: [], families: [] };
  }

  const written = writtenClusterIPs(clusterIP, rawIPs, check);

  if (written[0] === 'None') {
    if (written.length > 1) check.error('a headless Service must have spec.clusterIPs ["None"] only', 'spec.clusterIPs');
    // ValidateService: clusterIP 'None' "may not be set to 'None' for NodePort/LoadBalancer services".
    if (type !== 'ClusterIP') {
      check.error(
        `clusterIP "None" (headless) is only valid for type ClusterIP, not ${type}; drop clusterIP or use type ClusterIP`,
        check.written('spec.clusterIP', 'spec.clusterIPs'),
        'headless-type',
      );
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
