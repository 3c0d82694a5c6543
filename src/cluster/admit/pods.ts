// Reading a Pod as the API server admits it: readiness, container ports, owner, and the DNS
// settings (dnsPolicy, dnsConfig, hostAliases) the resolver emulation reads.
import type { ContainerPort, HostAlias, ObjectMeta, Pod, PodDNSConfig } from '../model/model.js';
import { parseIp } from '../../pkg/ip.js';
import { type Checker, isDns1123Label, isDns1123Subdomain, isObj, type Obj, portNameProblem } from './validate.js';
import { jsonExcerpt } from '../model/finding.js';
import { tight } from './objects.js';
import { familyOf } from './services.js';

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
      check.error(
        `${path}.containers is missing; a pod needs at least one container, e.g. containers: [{name: app, image: nginx}]`,
        check.written(`${path}.containers`, path),
        'containers-required',
      );
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
            check.error(
              `${pp}.name ${jsonExcerpt(name)} is not a valid port name: it ${why}; use at most 15 lower-case letters, digits and '-', such as "http"`,
              `${pp}.name`,
              'invalid-port-name',
            );
          } else if (names?.has(name)) {
            check.error(
              `${pp}.name ${jsonExcerpt(name)} is also the name of ports[${names.get(name)}] of this container; port names must be unique, rename one`,
              `${pp}.name`,
              'duplicate-port-name',
            );
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
  const refs = (md['ownerReferences'] as unknown[]).filter((r): r is Obj => isObj(r) && typeof r['kind'] === 'string' && typeof r['name'] === 'string');
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
  if (hostname && !isDns1123Label(hostname))
    check.error(
      `spec.hostname ${jsonExcerpt(hostname)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-'`,
      'spec.hostname',
      'invalid-hostname',
    );
  if (subdomain && !isDns1123Label(subdomain))
    check.error(
      `spec.subdomain ${jsonExcerpt(subdomain)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-'`,
      'spec.subdomain',
      'invalid-subdomain',
    );
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
    check.error(
      `${path}.nameservers lists ${dc.nameservers.length} servers; at most ${MAX_DNS_NAMESERVERS} are allowed, remove some`,
      `${path}.nameservers`,
      'dns-config-limits',
    );
  }
  dc.nameservers.forEach((n, i) => {
    if (parseIp(n) === undefined)
      check.error(`${path}.nameservers[${i}] ${jsonExcerpt(n)} is not an IP address; write the server's IP`, `${path}.nameservers[${i}]`, 'dns-config-limits');
  });
  if (dc.searches.length > MAX_DNS_SEARCH_PATHS) {
    check.error(
      `${path}.searches lists ${dc.searches.length} domains; at most ${MAX_DNS_SEARCH_PATHS} are allowed, remove some`,
      `${path}.searches`,
      'dns-config-limits',
    );
  }
  let chars = dc.searches.length > 0 ? dc.searches.length - 1 : 0;
  dc.searches.forEach((d, i) => {
    chars += d.length;
    // validatePodDNSConfig with RelaxedDNSSearchValidation (on by default since 1.33): "." alone
    // is allowed, one trailing dot is trimmed, and labels may hold '_' (IsDNS1123SubdomainWithUnderscore).
    const bare = d.endsWith('.') ? d.slice(0, -1) : d;
    if (d !== '.' && !(bare.length <= 253 && SEARCH_DOMAIN.test(bare))) {
      check.error(
        `${path}.searches[${i}] ${jsonExcerpt(d)} is not a valid search domain; use a lower-case domain such as svc.cluster.local`,
        `${path}.searches[${i}]`,
        'dns-config-limits',
      );
    }
  });
  if (chars > MAX_DNS_SEARCH_CHARS) {
    check.error(
      `${path}.searches is ${chars} characters long (joined by spaces); at most ${MAX_DNS_SEARCH_CHARS} are allowed, shorten it`,
      `${path}.searches`,
      'dns-config-limits',
    );
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
        check.error(
          `${path}.hostAliases[${i}].hostnames[${j}] ${jsonExcerpt(h)} is not a valid DNS-1123 subdomain; use a lower-case host name`,
          `${path}.hostAliases[${i}].hostnames[${j}]`,
          'invalid-host-alias',
        );
      }
    });
    if (ip !== undefined) aliases.push({ ip, hostnames });
  });
  if (aliases.length > 0) out.hostAliases = aliases;
  const fqdn = check.bool(spec, 'setHostnameAsFQDN', `${path}.setHostnameAsFQDN`);
  if (fqdn !== undefined) out.setHostnameAsFQDN = fqdn;
  return out;
}
