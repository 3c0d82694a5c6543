// Edge objects (Ingress, IngressClass, Gateway, GatewayClass, HTTPRoute, TLSRoute, GRPCRoute,
// external-dns's DNSEndpoint) and the LoadBalancer status of Services, read from the manifests,
// then completed the way the controllers a user runs would fill their status: the LoadBalancer
// pool (MetalLB or a cloud), the ingress controller publishing its Service's address, the
// Gateway controller. Status written in a manifest always wins.
import type { ClusterOptions, Finding, NamespaceObject, ObjectMeta, Service, SourceRef } from './model.js';
import { type Checker, isObj, type Obj } from './validate.js';
import { canonicalIp, parseIp } from '../pkg/ip.js';
import { DEFAULT_LB_CIDRS, LoadBalancerPool } from './loadbalancer.js';
import { matchesSelector, readLabelSelector, type LabelSelector } from './selector.js';

/** One status.loadBalancer.ingress (or Gateway status address) entry. */
export interface LbAddress {
  readonly ip?: string;
  readonly hostname?: string;
}

export interface EdgeStatus {
  readonly addresses: readonly LbAddress[];
  /** Where the addresses come from: the manifest, or the controller clusterdns plays. */
  readonly origin: 'manifest' | 'pool' | 'controller' | 'none';
}

export interface IngressInfo extends ObjectMeta {
  /** spec.ingressClassName, else the kubernetes.io/ingress.class annotation, else the default class. */
  readonly className?: string;
  readonly hosts: readonly string[];
  readonly status: EdgeStatus;
}

export interface IngressClassInfo {
  readonly name: string;
  readonly controller?: string;
  readonly isDefault: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly source: SourceRef;
}

export interface ListenerInfo {
  readonly name: string;
  readonly hostname?: string;
  readonly port?: number;
  readonly protocol: string;
  readonly from: 'Same' | 'All' | 'Selector' | 'None';
  readonly selector?: LabelSelector;
  /** allowedRoutes.kinds; undefined means the protocol's default kinds. */
  readonly kinds?: readonly string[];
}

export interface GatewayInfo extends ObjectMeta {
  readonly className: string;
  readonly listeners: readonly ListenerInfo[];
  readonly status: EdgeStatus;
}

export interface GatewayClassInfo {
  readonly name: string;
  readonly controllerName?: string;
  readonly source: SourceRef;
}

export type RouteKind = 'HTTPRoute' | 'TLSRoute' | 'GRPCRoute';

export interface ParentRef {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface RouteInfo extends ObjectMeta {
  readonly kind: RouteKind;
  readonly hostnames: readonly string[];
  readonly parentRefs: readonly ParentRef[];
}

/** A hostname a route really receives traffic for, through one Gateway. */
export interface RouteHost {
  readonly host: string;
  readonly route: RouteInfo;
  readonly gateway: GatewayInfo;
}

export interface DnsEndpointRecord {
  readonly dnsName: string;
  readonly recordType: string;
  readonly targets: readonly string[];
  readonly ttl?: number;
}

export interface DnsEndpointInfo extends ObjectMeta {
  readonly endpoints: readonly DnsEndpointRecord[];
}

export interface EdgeModel {
  /** "namespace/name" of every Service -> its load balancer status (only LoadBalancer Services get a filled one). */
  readonly serviceStatus: ReadonlyMap<string, EdgeStatus>;
  readonly ingresses: readonly IngressInfo[];
  readonly ingressClasses: readonly IngressClassInfo[];
  readonly gateways: readonly GatewayInfo[];
  readonly gatewayClasses: readonly GatewayClassInfo[];
  readonly routes: readonly RouteInfo[];
  /** Route hostnames where the Gateway API says traffic flows (attachment and hostname intersection). */
  readonly routeHosts: readonly RouteHost[];
  readonly dnsEndpoints: readonly DnsEndpointInfo[];
}

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const NETWORKING_GROUP = 'networking.k8s.io';

/** The kinds this module reads, by API group. */
const EDGE_KINDS: Readonly<Record<string, string>> = {
  Ingress: NETWORKING_GROUP,
  IngressClass: NETWORKING_GROUP,
  Gateway: GATEWAY_GROUP,
  GatewayClass: GATEWAY_GROUP,
  HTTPRoute: GATEWAY_GROUP,
  TLSRoute: GATEWAY_GROUP,
  GRPCRoute: GATEWAY_GROUP,
  DNSEndpoint: 'externaldns.k8s.io',
};

function isEdgeKind(kind: string, group: string): boolean {
  return EDGE_KINDS[kind] === group;
}

/** Default route kinds of a listener protocol (Gateway API, when allowedRoutes.kinds is unset). */
function defaultKinds(protocol: string): string[] {
  switch (protocol.toUpperCase()) {
    case 'HTTP':
    case 'HTTPS':
      return ['HTTPRoute', 'GRPCRoute'];
    case 'TLS':
      return ['TLSRoute'];
    default:
      return [];
  }
}

const byKey = <T extends { namespace: string; name: string }>(a: T, b: T): number => {
  const x = `${a.namespace}/${a.name}`;
  const y = `${b.namespace}/${b.name}`;
  return x < y ? -1 : x > y ? 1 : 0;
};

function lower(h: string): string {
  return h.toLowerCase().replace(/\.$/, '');
}

/**
 * Gateway API hostname intersection of a listener hostname and a route hostname: equal names,
 * or a wildcard on one side (`*.example.com` covers any name with at least one more label)
 * that covers the other; two wildcards give the more specific one. Undefined: no overlap.
 */
function intersectHost(listener: string | undefined, route: string): string | undefined {
  if (listener === undefined || listener === '') return route;
  const l = lower(listener);
  const r = lower(route);
  if (l === r) return r;
  const covers = (wild: string, name: string): boolean => wild.startsWith('*.') && name.endsWith(wild.slice(1)) && name.length > wild.length - 1;
  if (covers(l, r)) return r;
  if (covers(r, l)) return l;
  return undefined;
}

/** A Service's written LoadBalancer addresses and those it asks for (loadBalancerIP, MetalLB). */
interface RawServiceStatus {
  addresses: LbAddress[];
  requested: string[];
}

/** Reads edge objects as load.ts meets them, then fills their status in build(). */
export class EdgeCollector {
  private readonly rawServices = new Map<string, RawServiceStatus>();
  /** "namespace/name" of LoadBalancer Services with spec.allocateLoadBalancerNodePorts: false. */
  readonly withoutNodePorts = new Set<string>();
  private readonly ingresses: { meta: ObjectMeta; className?: string; hosts: string[]; addresses: LbAddress[]; check: Checker }[] = [];
  private readonly ingressClasses: IngressClassInfo[] = [];
  private readonly gateways: { meta: ObjectMeta; className: string; listeners: ListenerInfo[]; status: LbAddress[]; requested: string[]; check: Checker }[] = [];
  private readonly gatewayClasses: GatewayClassInfo[] = [];
  private readonly routes: RouteInfo[] = [];
  private readonly dnsEndpoints: DnsEndpointInfo[] = [];

  /** Called for every object load.ts accepted; true when this module consumed it (an edge kind). */
  read(kind: string, group: string, o: Obj, meta: ObjectMeta, check: Checker): boolean {
    if (kind === 'Service' && group === '') {
      this.readServiceStatus(o, meta, check);
      return false;
    }
    if (!isEdgeKind(kind, group)) return false;
    switch (kind) {
      case 'Ingress':
        this.readIngress(o, meta, check);
        break;
      case 'IngressClass': {
        const spec = check.obj(o, 'spec', 'spec');
        const controller = check.str(spec, 'controller', 'spec.controller');
        this.ingressClasses.push({
          name: meta.name,
          ...(controller ? { controller } : {}),
          isDefault: meta.annotations['ingressclass.kubernetes.io/is-default-class'] === 'true',
          labels: meta.labels,
          annotations: meta.annotations,
          source: meta.source,
        });
        break;
      }
      case 'Gateway':
        this.readGateway(o, meta, check);
        break;
      case 'GatewayClass': {
        const spec = check.obj(o, 'spec', 'spec');
        const controllerName = check.str(spec, 'controllerName', 'spec.controllerName');
        if (!controllerName) check.error('spec.controllerName is missing; name the controller that implements this class, e.g. gateway.envoyproxy.io/gatewayclass-controller', 'spec');
        this.gatewayClasses.push({ name: meta.name, ...(controllerName ? { controllerName } : {}), source: meta.source });
        break;
      }
      case 'HTTPRoute':
      case 'TLSRoute':
      case 'GRPCRoute':
        this.readRoute(kind, o, meta, check);
        break;
      case 'DNSEndpoint':
        this.readDnsEndpoint(o, meta, check);
        break;
    }
    return true;
  }

  private readLbIngress(list: unknown[], path: string, check: Checker): LbAddress[] {
    const out: LbAddress[] = [];
    list.forEach((e, i) => {
      if (!isObj(e)) {
        check.error(`${path}[${i}] must be a mapping like {ip: 203.0.113.10} or {hostname: lb.example.com}`, `${path}[${i}]`);
        return;
      }
      const ipText = check.str(e, 'ip', `${path}[${i}].ip`);
      const hostname = check.str(e, 'hostname', `${path}[${i}].hostname`);
      if (ipText) {
        const ip = check.ip(ipText, `${path}[${i}].ip`);
        if (ip) out.push({ ip });
      } else if (hostname) out.push({ hostname: lower(hostname) });
      else check.warn(`${path}[${i}] has neither ip nor hostname and is ignored`, `${path}[${i}]`);
    });
    return out;
  }

  private readServiceStatus(o: Obj, meta: ObjectMeta, check: Checker): void {
    const status = check.obj(o, 'status', 'status');
    const lb = check.obj(status, 'loadBalancer', 'status.loadBalancer');
    const addresses = this.readLbIngress(check.arr(lb, 'ingress', 'status.loadBalancer.ingress'), 'status.loadBalancer.ingress', check);
    // Addresses a user asks the load balancer for: spec.loadBalancerIP (deprecated) and MetalLB's annotation.
    const spec = check.obj(o, 'spec', 'spec');
    if (spec['allocateLoadBalancerNodePorts'] === false) this.withoutNodePorts.add(`${meta.namespace}/${meta.name}`);
    const requested: string[] = [];
    const lbIP = check.str(spec, 'loadBalancerIP', 'spec.loadBalancerIP');
    if (lbIP) {
      const ip = check.ip(lbIP, 'spec.loadBalancerIP');
      if (ip) requested.push(ip);
    }
    const ann = meta.annotations['metallb.io/loadBalancerIPs'] ?? meta.annotations['metallb.universe.tf/loadBalancerIPs'];
    if (ann) {
      for (const part of ann.split(',').map((s) => s.trim()).filter(Boolean)) {
        const ip = canonicalIp(part);
        if (ip) requested.push(ip);
        else check.error(`annotation metallb.io/loadBalancerIPs: "${part}" is not an IP address; list addresses separated by commas`, 'metadata.annotations');
      }
    }
    this.rawServices.set(`${meta.namespace}/${meta.name}`, { addresses, requested });
  }

  private readIngress(o: Obj, meta: ObjectMeta, check: Checker): void {
    const spec = check.obj(o, 'spec', 'spec');
    const className = check.str(spec, 'ingressClassName', 'spec.ingressClassName') || meta.annotations['kubernetes.io/ingress.class'] || undefined;
    const hosts: string[] = [];
    check.arr(spec, 'rules', 'spec.rules').forEach((r, i) => {
      if (!isObj(r)) {
        check.error(`spec.rules[${i}] must be a mapping with host and http`, `spec.rules[${i}]`);
        return;
      }
      const host = check.str(r, 'host', `spec.rules[${i}].host`);
      if (host === undefined || host === '') return;
      if (!validHost(host)) {
        check.error(`spec.rules[${i}].host "${host}" is not a valid host name; use a DNS name such as www.example.com or a wildcard *.example.com (no IP addresses, no port)`, `spec.rules[${i}].host`);
        return;
      }
      if (!hosts.includes(lower(host))) hosts.push(lower(host));
    });
    const status = check.obj(o, 'status', 'status');
    const lb = check.obj(status, 'loadBalancer', 'status.loadBalancer');
    const addresses = this.readLbIngress(check.arr(lb, 'ingress', 'status.loadBalancer.ingress'), 'status.loadBalancer.ingress', check);
    this.ingresses.push({ meta, ...(className ? { className } : {}), hosts, addresses, check });
  }

  private readGateway(o: Obj, meta: ObjectMeta, check: Checker): void {
    const spec = check.obj(o, 'spec', 'spec');
    const className = check.str(spec, 'gatewayClassName', 'spec.gatewayClassName') ?? '';
    if (className === '') check.error('spec.gatewayClassName is missing; name the GatewayClass of this Gateway', 'spec');
    const listeners: ListenerInfo[] = [];
    check.arr(spec, 'listeners', 'spec.listeners').forEach((l, i) => {
      const path = `spec.listeners[${i}]`;
      if (!isObj(l)) {
        check.error(`${path} must be a mapping with name, port and protocol`, path);
        return;
      }
      const name = check.str(l, 'name', `${path}.name`) ?? '';
      if (name === '') check.error(`${path}.name is missing; every listener needs a name (routes attach to it with sectionName)`, path);
      const hostname = check.str(l, 'hostname', `${path}.hostname`);
      if (hostname && !validHost(hostname)) check.error(`${path}.hostname "${hostname}" is not a valid host name`, `${path}.hostname`);
      const port = check.port(l, 'port', `${path}.port`);
      const protocol = check.str(l, 'protocol', `${path}.protocol`) ?? 'HTTP';
      const ar = check.obj(l, 'allowedRoutes', `${path}.allowedRoutes`);
      const nsObj = check.obj(ar, 'namespaces', `${path}.allowedRoutes.namespaces`);
      const fromText = check.str(nsObj, 'from', `${path}.allowedRoutes.namespaces.from`) ?? 'Same';
      let from: ListenerInfo['from'] = 'Same';
      if (fromText === 'Same' || fromText === 'All' || fromText === 'Selector' || fromText === 'None') from = fromText;
      else check.error(`${path}.allowedRoutes.namespaces.from "${fromText}" is not valid; use Same, All, Selector or None`, `${path}.allowedRoutes.namespaces.from`);
      const selector = from === 'Selector' ? readLabelSelector(nsObj, 'selector', `${path}.allowedRoutes.namespaces.selector`, check) : undefined;
      if (from === 'Selector' && !selector) check.error(`${path}.allowedRoutes.namespaces.selector is required when from is Selector`, `${path}.allowedRoutes.namespaces`);
      const kindsRaw = check.arr(ar, 'kinds', `${path}.allowedRoutes.kinds`);
      const kinds = kindsRaw.length > 0 ? kindsRaw.filter(isObj).map((k) => String(k['kind'] ?? '')) : undefined;
      listeners.push({
        name,
        ...(hostname ? { hostname: lower(hostname) } : {}),
        ...(port !== undefined ? { port } : {}),
        protocol,
        from,
        ...(selector ? { selector } : {}),
        ...(kinds ? { kinds } : {}),
      });
    });
    const requested: string[] = [];
    check.arr(spec, 'addresses', 'spec.addresses').forEach((a, i) => {
      if (!isObj(a)) return;
      const type = a['type'] ?? 'IPAddress';
      if (type !== 'IPAddress') return;
      const ip = check.ip(a['value'], `spec.addresses[${i}].value`);
      if (ip) requested.push(ip);
    });
    const status: LbAddress[] = [];
    const st = check.obj(o, 'status', 'status');
    check.arr(st, 'addresses', 'status.addresses').forEach((a, i) => {
      if (!isObj(a)) return;
      const type = a['type'] ?? 'IPAddress';
      const value = check.str(a, 'value', `status.addresses[${i}].value`);
      if (!value) return;
      if (type === 'Hostname') status.push({ hostname: lower(value) });
      else {
        const ip = check.ip(value, `status.addresses[${i}].value`);
        if (ip) status.push({ ip });
      }
    });
    this.gateways.push({ meta, className, listeners, status, requested, check });
  }

  private readRoute(kind: RouteKind, o: Obj, meta: ObjectMeta, check: Checker): void {
    const spec = check.obj(o, 'spec', 'spec');
    const hostnames: string[] = [];
    check.arr(spec, 'hostnames', 'spec.hostnames').forEach((h, i) => {
      if (typeof h !== 'string' || !validHost(h)) {
        check.error(`spec.hostnames[${i}] ${JSON.stringify(h)} is not a valid host name; use e.g. www.example.com or *.example.com`, `spec.hostnames[${i}]`);
        return;
      }
      if (!hostnames.includes(lower(h))) hostnames.push(lower(h));
    });
    const parentRefs: ParentRef[] = [];
    check.arr(spec, 'parentRefs', 'spec.parentRefs').forEach((p, i) => {
      if (!isObj(p)) {
        check.error(`spec.parentRefs[${i}] must be a mapping with at least name`, `spec.parentRefs[${i}]`);
        return;
      }
      const name = check.str(p, 'name', `spec.parentRefs[${i}].name`);
      if (!name) {
        check.error(`spec.parentRefs[${i}].name is missing; name the Gateway this route attaches to`, `spec.parentRefs[${i}]`);
        return;
      }
      const sectionName = check.str(p, 'sectionName', `spec.parentRefs[${i}].sectionName`);
      const port = check.port(p, 'port', `spec.parentRefs[${i}].port`);
      parentRefs.push({
        group: check.str(p, 'group', `spec.parentRefs[${i}].group`) ?? GATEWAY_GROUP,
        kind: check.str(p, 'kind', `spec.parentRefs[${i}].kind`) ?? 'Gateway',
        namespace: check.str(p, 'namespace', `spec.parentRefs[${i}].namespace`) || meta.namespace,
        name,
        ...(sectionName ? { sectionName } : {}),
        ...(port !== undefined ? { port } : {}),
      });
    });
    this.routes.push({ ...meta, kind, hostnames, parentRefs });
  }

  private readDnsEndpoint(o: Obj, meta: ObjectMeta, check: Checker): void {
    const spec = check.obj(o, 'spec', 'spec');
    const endpoints: DnsEndpointRecord[] = [];
    check.arr(spec, 'endpoints', 'spec.endpoints').forEach((e, i) => {
      const path = `spec.endpoints[${i}]`;
      if (!isObj(e)) {
        check.error(`${path} must be a mapping with dnsName, recordType and targets`, path);
        return;
      }
      const dnsName = check.str(e, 'dnsName', `${path}.dnsName`);
      const recordType = check.str(e, 'recordType', `${path}.recordType`) ?? 'A';
      if (!dnsName) {
        check.error(`${path}.dnsName is missing`, path);
        return;
      }
      const targets = check.arr(e, 'targets', `${path}.targets`).filter((t): t is string => typeof t === 'string');
      if (recordType === 'A' || recordType === 'AAAA') {
        for (const t of targets) {
          const p = parseIp(t);
          if (!p || (p.family === 4) !== (recordType === 'A')) check.error(`${path}.targets: "${t}" is not an ${recordType === 'A' ? 'IPv4' : 'IPv6'} address, so it cannot be an ${recordType} record`, `${path}.targets`);
        }
      }
      const ttl = e['recordTTL'];
      endpoints.push({ dnsName: lower(dnsName), recordType, targets, ...(typeof ttl === 'number' && ttl > 0 ? { ttl } : {}) });
    });
    this.dnsEndpoints.push({ ...meta, endpoints });
  }

  /**
   * Fills statuses the manifests leave out and resolves route attachment. Findings about what
   * a controller would refuse or ignore are warnings at the object's file and line.
   */
  build(services: readonly Service[], namespaces: ReadonlyMap<string, NamespaceObject>, opts: ClusterOptions, findings: Finding[]): EdgeModel {
    const pool = this.poolWithWrittenAddresses(opts, findings);
    const sortedServices = [...services].sort(byKey);
    const serviceStatus = serviceStatuses(sortedServices, this.rawServices, pool, opts, findings);
    const classes = [...this.ingressClasses].sort((a, b) => (a.name < b.name ? -1 : 1));
    const ingresses = this.ingressStatuses(classes, sortedServices, serviceStatus, pool, findings);
    const gwClasses = [...this.gatewayClasses].sort((a, b) => (a.name < b.name ? -1 : 1));
    const gateways = this.gatewayStatuses(gwClasses, pool, findings);
    const routes = [...this.routes].sort(byKey);
    const routeHosts = attachRoutes(routes, gateways, namespaces, findings);
    warnDuplicateHosts(ingresses, routeHosts, findings);

    return {
      serviceStatus,
      ingresses,
      ingressClasses: classes,
      gateways,
      gatewayClasses: gwClasses,
      routes,
      routeHosts,
      dnsEndpoints: [...this.dnsEndpoints].sort(byKey),
    };
  }

  /** The pool with every written address taken first, so it never hands one out twice. */
  private poolWithWrittenAddresses(opts: ClusterOptions, findings: Finding[]): LoadBalancerPool {
    const pool = new LoadBalancerPool(opts.loadBalancerCIDRs ?? DEFAULT_LB_CIDRS, findings);
    for (const s of this.rawServices.values()) for (const a of [...s.addresses.map((x) => x.ip ?? ''), ...s.requested]) pool.reserve(a);
    for (const g of this.gateways) for (const a of [...g.status.map((x) => x.ip ?? ''), ...g.requested]) pool.reserve(a);
    for (const i of this.ingresses) for (const a of i.addresses) if (a.ip) pool.reserve(a.ip);
    return pool;
  }

  /**
   * Each Ingress's address: written, else the address its class's controller Service publishes,
   * else one pool address per class that every Ingress of the class shares.
   */
  private ingressStatuses(
    classes: readonly IngressClassInfo[],
    sortedServices: readonly Service[],
    serviceStatus: ReadonlyMap<string, EdgeStatus>,
    pool: LoadBalancerPool,
    findings: Finding[],
  ): IngressInfo[] {
    const defaultClass = classes.find((c) => c.isDefault);
    const classAddress = new Map<string, EdgeStatus>();
    const ingresses: IngressInfo[] = [];
    for (const ing of [...this.ingresses].sort((a, b) => byKey(a.meta, b.meta))) {
      const className = ing.className ?? defaultClass?.name;
      let status: EdgeStatus;
      if (ing.addresses.length > 0) status = { addresses: ing.addresses, origin: 'manifest' };
      else {
        const cls = className !== undefined ? classes.find((c) => c.name === className) : undefined;
        const warn = (message: string): void =>
          void findings.push({ ...ing.meta.source, severity: 'warning', code: 'ingress-no-controller', message: `Ingress "${ing.meta.namespace}/${ing.meta.name}": ${message}` });
        if (className === undefined) warn('has no ingress class (spec.ingressClassName) and no IngressClass is marked default, so no controller would serve it; set spec.ingressClassName (address taken from the LoadBalancer pool meanwhile)');
        else if (!cls?.controller) warn(`its IngressClass "${className}" ${cls ? 'names no controller' : 'is not in the manifests'}, so no ingress controller would give it an address; add the IngressClass and its controller (address taken from the LoadBalancer pool meanwhile)`);
        const cacheKey = className ?? '';
        let shared = classAddress.get(cacheKey);
        if (!shared) {
          const published = cls ? controllerService(cls, sortedServices, serviceStatus) : undefined;
          if (published && published.addresses.length > 0) shared = { addresses: published.addresses, origin: 'controller' };
          else {
            const ip = pool.allocate(`IngressClass/${cacheKey}`, pool.families()[0] ?? 4);
            shared = { addresses: ip ? [{ ip }] : [], origin: ip ? 'pool' : 'none' };
          }
          classAddress.set(cacheKey, shared);
        }
        status = shared;
      }
      ingresses.push({ ...ing.meta, ...(className !== undefined ? { className } : {}), hosts: ing.hosts, status });
    }
    return ingresses;
  }

  /** Each Gateway's address (written, requested, else from the pool) and a missing class warned. */
  private gatewayStatuses(gwClasses: readonly GatewayClassInfo[], pool: LoadBalancerPool, findings: Finding[]): GatewayInfo[] {
    const gateways: GatewayInfo[] = [];
    for (const g of [...this.gateways].sort((a, b) => byKey(a.meta, b.meta))) {
      let status: EdgeStatus;
      if (g.status.length > 0) status = { addresses: g.status, origin: 'manifest' };
      else if (g.requested.length > 0) status = { addresses: g.requested.map((ip) => ({ ip })), origin: 'controller' };
      else {
        const ip = pool.allocate(`Gateway/${g.meta.namespace}/${g.meta.name}`, pool.families()[0] ?? 4);
        status = { addresses: ip ? [{ ip }] : [], origin: ip ? 'pool' : 'none' };
      }
      if (g.className !== '' && !gwClasses.some((c) => c.name === g.className)) {
        findings.push({ ...g.meta.source, severity: 'warning', code: 'gateway-class-missing', message: `Gateway "${g.meta.namespace}/${g.meta.name}": GatewayClass "${g.className}" is not in the manifests, so no controller would program it; add the GatewayClass (address taken from the LoadBalancer pool meanwhile)` });
      }
      gateways.push({ ...g.meta, className: g.className, listeners: g.listeners, status });
    }
    return gateways;
  }
}

/**
 * Each Service's LoadBalancer status: written, else requested (spec.loadBalancerIP, MetalLB's
 * annotation), else one pool address per IP family; other types have none.
 */
function serviceStatuses(
  sortedServices: readonly Service[],
  rawServices: ReadonlyMap<string, RawServiceStatus>,
  pool: LoadBalancerPool,
  opts: ClusterOptions,
  findings: Finding[],
): Map<string, EdgeStatus> {
  const serviceStatus = new Map<string, EdgeStatus>();
  for (const svc of sortedServices) {
    const key = `${svc.namespace}/${svc.name}`;
    const raw = rawServices.get(key);
    if (raw && raw.addresses.length > 0) {
      serviceStatus.set(key, { addresses: raw.addresses, origin: 'manifest' });
      continue;
    }
    if (svc.type !== 'LoadBalancer') {
      serviceStatus.set(key, { addresses: [], origin: 'none' });
      continue;
    }
    if (raw && raw.requested.length > 0) {
      serviceStatus.set(key, { addresses: raw.requested.map((ip) => ({ ip })), origin: 'pool' });
      continue;
    }
    const addresses: LbAddress[] = [];
    for (const fam of svc.ipFamilies) {
      const ip = pool.allocate(`Service/${key}`, fam === 'IPv4' ? 4 : 6);
      if (ip) addresses.push({ ip });
    }
    if (addresses.length === 0) {
      const cidrs = (opts.loadBalancerCIDRs ?? DEFAULT_LB_CIDRS).join(', ');
      findings.push({
        ...svc.source,
        severity: 'warning',
        code: 'loadbalancer-pool-exhausted',
        message:
          `Service "${key}": no LoadBalancer address left for ${svc.ipFamilies.join('/')} in the pool (${cidrs}); ` +
          'add a --loadbalancer-cidr of that family or write status.loadBalancer.ingress',
      });
    }
    serviceStatus.set(key, { addresses, origin: addresses.length > 0 ? 'pool' : 'none' });
  }
  return serviceStatus;
}

/** A DNS name, or a wildcard `*.` followed by one (Ingress rule hosts and Gateway API hostnames). */
function validHost(h: string): boolean {
  const name = h.startsWith('*.') ? h.slice(2) : h;
  if (name.length === 0 || name.length > 253 || parseIp(name)) return false;
  return /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*\.?$/.test(name);
}

/**
 * The Service an ingress controller publishes its address from (ingress-nginx's
 * --publish-service): named by the IngressClass annotation `clusterdns.io/publish-service:
 * NS/NAME`, else the LoadBalancer Service carrying the IngressClass's app.kubernetes.io/name
 * and instance labels (as the controllers' Helm charts label both), else one whose
 * app.kubernetes.io/name is the last segment of the controller name (k8s.io/ingress-nginx).
 */
function controllerService(c: IngressClassInfo, services: readonly Service[], status: ReadonlyMap<string, EdgeStatus>): EdgeStatus | undefined {
  const pick = (svc: Service | undefined): EdgeStatus | undefined => {
    if (!svc) return undefined;
    const st = status.get(`${svc.namespace}/${svc.name}`);
    if (st && st.addresses.length > 0) return st;
    return svc.externalIPs.length > 0 ? { addresses: svc.externalIPs.map((ip) => ({ ip })), origin: 'controller' } : undefined;
  };
  const named = c.annotations['clusterdns.io/publish-service'];
  if (named) {
    const [ns, name] = named.split('/');
    return pick(services.find((s) => s.namespace === ns && s.name === name));
  }
  const lbs = services.filter((s) => s.type === 'LoadBalancer');
  const appName = c.labels['app.kubernetes.io/name'];
  if (appName) {
    const inst = c.labels['app.kubernetes.io/instance'];
    const hit = lbs.find(
      (s) => s.labels['app.kubernetes.io/name'] === appName && (inst === undefined || s.labels['app.kubernetes.io/instance'] === inst) && (s.labels['app.kubernetes.io/component'] ?? 'controller') === 'controller',
    );
    if (hit) return pick(hit);
  }
  const last = c.controller?.split('/').pop();
  if (last) return pick(lbs.find((s) => s.labels['app.kubernetes.io/name'] === last || s.labels['app'] === last));
  return undefined;
}

/**
 * Gateway API attachment: a route's parentRef must name an existing Gateway, the listener(s) it
 * selects (sectionName, port) must allow the route's namespace and kind, and the hostnames
 * served are the intersection of listener and route hostnames (a route without hostnames gets
 * the listener's; neither means any host, which DNS cannot enumerate).
 */
function attachRoutes(routes: readonly RouteInfo[], gateways: readonly GatewayInfo[], namespaces: ReadonlyMap<string, NamespaceObject>, findings: Finding[]): RouteHost[] {
  const out: RouteHost[] = [];
  const gwByKey = new Map(gateways.map((g) => [`${g.namespace}/${g.name}`, g]));
  for (const route of routes) {
    const where = `${route.kind} "${route.namespace}/${route.name}"`;
    const warn = (code: string, message: string): void => void findings.push({ ...route.source, severity: 'warning', code, message: `${where}: ${message}` });
    if (route.parentRefs.length === 0) warn('route-no-parent', 'has no spec.parentRefs, so it is attached to no Gateway and serves nothing; add a parentRef naming your Gateway');
    for (const ref of route.parentRefs) {
      if (ref.group !== GATEWAY_GROUP || ref.kind !== 'Gateway') continue;
      const gw = gwByKey.get(`${ref.namespace}/${ref.name}`);
      if (!gw) {
        warn('route-parent-missing', `parentRef Gateway "${ref.namespace}/${ref.name}" is not in the manifests; its hostnames resolve to nothing`);
        continue;
      }
      const candidates = gw.listeners.filter((l) => (ref.sectionName === undefined || l.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port));
      if (candidates.length === 0) {
        warn('route-parent-rejects', `Gateway "${gw.namespace}/${gw.name}" has no listener${ref.sectionName ? ` named "${ref.sectionName}"` : ''}${ref.port ? ` on port ${ref.port}` : ''}; fix sectionName/port`);
        continue;
      }
      let accepted = 0;
      const nsLabels = namespaces.get(route.namespace)?.labels ?? { 'kubernetes.io/metadata.name': route.namespace };
      for (const l of candidates) {
        const nsOk = l.from === 'All' || (l.from === 'Same' && route.namespace === gw.namespace) || (l.from === 'Selector' && l.selector !== undefined && matchesSelector(l.selector, nsLabels));
        const kindOk = (l.kinds ?? defaultKinds(l.protocol)).includes(route.kind);
        if (!nsOk || !kindOk) continue;
        const hosts = route.hostnames.length > 0 ? route.hostnames : l.hostname ? [l.hostname] : [];
        let matched = false;
        for (const h of hosts) {
          const served = intersectHost(l.hostname, h);
          if (served === undefined) continue;
          matched = true;
          if (!out.some((x) => x.host === served && x.route === route && x.gateway === gw)) out.push({ host: served, route, gateway: gw });
        }
        if (matched || hosts.length === 0) accepted++;
      }
      if (accepted === 0) {
        warn(
          'route-parent-rejects',
          `Gateway "${gw.namespace}/${gw.name}" does not accept it: no selected listener allows ${route.kind} from namespace "${route.namespace}" with a matching hostname (check allowedRoutes, sectionName and listener hostnames)`,
        );
      }
    }
  }
  return out;
}

/** Two Ingresses, or two routes, claiming one host: controllers merge or pick one, DNS answers both. */
function warnDuplicateHosts(ingresses: readonly IngressInfo[], routeHosts: readonly RouteHost[], findings: Finding[]): void {
  const first = new Map<string, { what: string; source: SourceRef }>();
  const claim = (host: string, what: string, source: SourceRef): void => {
    const prev = first.get(host);
    if (!prev) {
      first.set(host, { what, source });
      return;
    }
    if (prev.what === what) return;
    findings.push({ ...source, severity: 'warning', code: 'host-claimed-twice', message: `${what}: host "${host}" is also claimed by ${prev.what} (${prev.source.file}:${prev.source.line}); DNS answers with the addresses of both, the controllers will route only one` });
  };
  for (const i of ingresses) for (const h of i.hosts) claim(h, `Ingress "${i.namespace}/${i.name}"`, i.source);
  for (const r of routeHosts) claim(r.host, `${r.route.kind} "${r.route.namespace}/${r.route.name}"`, r.route.source);
}

/**
 * One line per status clusterdns filled in (not written in the manifests), for `check`:
 * "where: what: addresses (who filled it)".
 */
export function filledStatuses(edge: EdgeModel | undefined, services: readonly Service[]): { source: SourceRef; text: string }[] {
  if (!edge) return [];
  const out: { source: SourceRef; text: string }[] = [];
  const show = (st: EdgeStatus, controller = 'ingress controller'): string => `${st.addresses.map((a) => a.ip ?? a.hostname).join(', ')} (${st.origin === 'pool' ? 'LoadBalancer pool' : controller})`;
  for (const svc of services) {
    const st = edge.serviceStatus.get(`${svc.namespace}/${svc.name}`);
    if (st && (st.origin === 'pool' || st.origin === 'controller') && st.addresses.length > 0) out.push({ source: svc.source, text: `Service "${svc.namespace}/${svc.name}": status.loadBalancer ${show(st)}` });
  }
  for (const i of edge.ingresses) {
    if (i.status.origin !== 'manifest' && i.status.addresses.length > 0) out.push({ source: i.source, text: `Ingress "${i.namespace}/${i.name}" (${i.hosts.join(', ')}): status.loadBalancer ${show(i.status)}` });
  }
  for (const g of edge.gateways) {
    if (g.status.origin !== 'manifest' && g.status.addresses.length > 0) out.push({ source: g.source, text: `Gateway "${g.namespace}/${g.name}": status.addresses ${show(g.status, 'Gateway spec.addresses')}` });
  }
  return out;
}

/** Services carrying their load balancer status (written or filled), so lean copies keep it. */
export function withLoadBalancerStatus(services: readonly Service[], edge: EdgeModel): Service[] {
  return services.map((s) => {
    const st = edge.serviceStatus.get(`${s.namespace}/${s.name}`);
    return st && st.addresses.length > 0 ? { ...s, loadBalancer: st.addresses } : s;
  });
}
