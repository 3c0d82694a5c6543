// Edge objects (Ingress, IngressClass, Gateway, GatewayClass, HTTPRoute, TLSRoute, GRPCRoute,
// external-dns's DNSEndpoint) and the LoadBalancer status of Services, read from the manifests as
// the API server admits them; EdgeCollector (emulate/edge.ts) then fills the status their
// controllers would.
//
// Findings follow the API server: `error` only for what it rejects (the object is then not
// served), citing the validation; what it admits but DNS cannot use is a warning naming the part
// skipped. Status is never validated on create (each kind's PrepareForCreate resets it, and a CRD
// with a status subresource ignores it), so a bad status value is skipped with a warning.
import type {
  DnsEndpointInfo,
  DnsEndpointRecord,
  GatewayClassInfo,
  IngressClassInfo,
  LbAddress,
  ListenerInfo,
  ObjectMeta,
  ParentRef,
  RouteInfo,
  RouteKind,
} from '../model/model.js';
import { jsonExcerpt } from '../model/finding.js';
import { canonicalIp, parseIp } from '../../pkg/ip.js';
import { pushAll } from '../../pkg/arrays.js';
import { type Checker, isDns1123Subdomain, isObj, type Obj } from './validate.js';
import { readLabelSelector } from './selector.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
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

export function lower(h: string): string {
  return h.toLowerCase().replace(/\.$/, '');
}

/** A Service's written LoadBalancer addresses and those it asks for (loadBalancerIP, MetalLB). */
export interface RawServiceStatus {
  addresses: LbAddress[];
  /** status.loadBalancer is written (a dump's `loadBalancer: {}`): what it holds is the status. */
  written: boolean;
  requested: string[];
  /** Why the load balancer controller would give it no address (an annotation it cannot parse). */
  refused?: string;
}

/** A Gateway as read, before its status is settled. */
export interface RawGateway {
  meta: ObjectMeta;
  className: string;
  listeners: ListenerInfo[];
  status: LbAddress[];
  /** status.addresses or status.conditions is written: a controller (or the CRD default) was there. */
  statusWritten: boolean;
  requested: string[];
  /** Why the Gateway controller would assign no address (a spec.addresses value it cannot use). */
  refused?: string;
}

/** The versions of each Gateway API kind some release of its CRDs serves (others: "no matches for kind"). */
const SERVED_VERSIONS: Readonly<Record<string, readonly string[]>> = {
  Gateway: ['v1', 'v1beta1'],
  GatewayClass: ['v1', 'v1beta1'],
  HTTPRoute: ['v1', 'v1beta1'],
  GRPCRoute: ['v1', 'v1alpha2'],
  // TLSRoute went v1alpha2, v1alpha3 (Gateway API 1.3, experimental), v1 (1.5, standard); a
  // cluster serves whichever its installed CRDs hold, so each is read alike. Upstream k8s_gateway
  // now watches v1 alone (newKubeController in kubernetes.go: crdServesVersion(..., "v1")).
  TLSRoute: ['v1', 'v1alpha3', 'v1alpha2'],
  DNSEndpoint: ['v1alpha1'],
};

/** The record types k8s_gateway's DNSEndpoint source answers (dnsendpoint.go lookupDNSEndpoint). */
const ANSWERED_RECORD_TYPES = new Set(['A', 'AAAA', 'TXT']);

/** Reads edge objects as load.ts meets them; EdgeCollector (emulate/edge.ts) then fills their status. */
export class EdgeReader {
  protected readonly rawServices = new Map<string, RawServiceStatus>();
  /** "namespace/name" of LoadBalancer Services with spec.allocateLoadBalancerNodePorts: false. */
  readonly withoutNodePorts = new Set<string>();
  protected readonly ingresses: { meta: ObjectMeta; className?: string; hosts: string[]; addresses: LbAddress[]; statusWritten: boolean }[] = [];
  protected readonly ingressClasses: IngressClassInfo[] = [];
  protected readonly gateways: RawGateway[] = [];
  protected readonly gatewayClasses: GatewayClassInfo[] = [];
  protected readonly routes: RouteInfo[] = [];
  protected readonly dnsEndpoints: DnsEndpointInfo[] = [];

  /**
   * One collector holding what `parts` read, in their order, as if one had read it all (feed.ts
   * keeps a collector per manifest file). The items are shared: build() reads them only.
   */
  static merged<T extends EdgeReader>(this: new () => T, parts: readonly EdgeReader[]): T {
    const m = new this();
    for (const p of parts) {
      for (const [k, v] of p.rawServices) m.rawServices.set(k, v);
      for (const k of p.withoutNodePorts) m.withoutNodePorts.add(k);
      pushAll(m.ingresses, p.ingresses);
      pushAll(m.ingressClasses, p.ingressClasses);
      pushAll(m.gateways, p.gateways);
      pushAll(m.gatewayClasses, p.gatewayClasses);
      pushAll(m.routes, p.routes);
      pushAll(m.dnsEndpoints, p.dnsEndpoints);
    }
    return m;
  }

  /**
   * Called for every object load.ts accepted; true when this module consumed it (an edge kind).
   * An object with an error (its checker's, from reading it here or before) is the API server's
   * rejection: it is consumed but not kept, so nothing of it is served.
   */
  read(kind: string, group: string, o: Obj, meta: ObjectMeta, check: Checker): boolean {
    if (kind === 'Service' && group === '') {
      this.readServiceStatus(o, meta, check);
      return false;
    }
    if (!isEdgeKind(kind, group)) return false;
    if (!this.servedVersion(kind, o, check)) return true;
    switch (kind) {
      case 'Ingress':
        this.readIngress(o, meta, check);
        break;
      case 'IngressClass': {
        const spec = check.obj(o, 'spec', 'spec');
        const controller = check.str(spec, 'controller', 'spec.controller');
        if (check.errors > 0) break;
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
        // GatewayClassSpec: controllerName is +required (gatewayclass_types.go).
        if (!controllerName) {
          check.error(
            'spec.controllerName is missing (the GatewayClass CRD requires it); ' +
              'name the controller that implements this class, e.g. gateway.envoyproxy.io/gatewayclass-controller',
            'spec',
          );
        }
        if (check.errors > 0) break;
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

  /**
   * A CRD kind at a version no release of its CRDs serves is refused by the API server ("no
   * matches for kind"). A List item without its own apiVersion takes the List's (not in `o`), so
   * only a written one is tested. Ingress and IngressClass versions are the loader's.
   */
  private servedVersion(kind: string, o: Obj, check: Checker): boolean {
    const served = SERVED_VERSIONS[kind];
    const apiVersion = o['apiVersion'];
    if (!served || typeof apiVersion !== 'string') return true;
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    if (served.includes(version)) return true;
    check.error(
      `apiVersion ${jsonExcerpt(apiVersion)}: no version of the ${kind} CRD serves ${jsonExcerpt(version)}, ` +
        `so the API server refuses it; use ${EDGE_KINDS[kind]}/${served[0]}`,
      'apiVersion',
    );
    return false;
  }

  /**
   * status.loadBalancer.ingress (Service, Ingress). A value the status validation would refuse
   * (ValidateLoadBalancerStatus / ValidateIngressLoadBalancerStatus: an IP, or a DNS-1123
   * hostname that is not an IP) is skipped with a warning: status is reset on create, so it
   * never makes the API server reject the object. A wrong type still fails decoding: an error.
   */
  private readLbIngress(list: unknown[], path: string, check: Checker): LbAddress[] {
    const out: LbAddress[] = [];
    list.forEach((e, i) => {
      const at = `${path}[${i}]`;
      if (!isObj(e)) {
        check.error(`${at} must be a mapping like {ip: 203.0.113.10} or {hostname: lb.example.com}`, at);
        return;
      }
      const ipText = check.str(e, 'ip', `${at}.ip`);
      const hostname = check.str(e, 'hostname', `${at}.hostname`);
      if (ipText) {
        const ip = canonicalIp(ipText);
        if (ip) out.push({ ip });
        else
          check.warn(
            `${at}.ip ${jsonExcerpt(ipText)} is not an IP address, so this status entry is skipped; ` + `write e.g. ip: 203.0.113.10`,
            `${at}.ip`,
            'status-value-skipped',
          );
      } else if (hostname) {
        if (parseIp(hostname) || !isDns1123Subdomain(lower(hostname))) {
          check.warn(
            `${at}.hostname ${jsonExcerpt(hostname)} is not a DNS name, so this status entry is skipped; ` + `write e.g. hostname: lb.example.com`,
            `${at}.hostname`,
            'status-value-skipped',
          );
        } else out.push({ hostname: lower(hostname) });
      } else check.warn(`${at} has neither ip nor hostname and is ignored`, at);
    });
    return out;
  }

  private readServiceStatus(o: Obj, meta: ObjectMeta, check: Checker): void {
    const status = check.obj(o, 'status', 'status');
    const written = isObj(status['loadBalancer']);
    const lb = check.obj(status, 'loadBalancer', 'status.loadBalancer');
    const addresses = this.readLbIngress(check.arr(lb, 'ingress', 'status.loadBalancer.ingress'), 'status.loadBalancer.ingress', check);
    // Addresses a user asks the load balancer for: spec.loadBalancerIP (deprecated) and MetalLB's annotation.
    const spec = check.obj(o, 'spec', 'spec');
    if (spec['allocateLoadBalancerNodePorts'] === false) this.withoutNodePorts.add(`${meta.namespace}/${meta.name}`);
    const requested: string[] = [];
    const lbIP = check.str(spec, 'loadBalancerIP', 'spec.loadBalancerIP');
    if (lbIP) {
      // ValidateService (pkg/apis/core/validation) refuses a spec.loadBalancerIP that is not an IP.
      const ip = check.ip(lbIP, 'spec.loadBalancerIP');
      if (ip) requested.push(ip);
    }
    let refused: string | undefined;
    const annKey = ['metallb.io/loadBalancerIPs', 'metallb.universe.tf/loadBalancerIPs'].find((k) => meta.annotations[k] !== undefined);
    const ann = annKey ? meta.annotations[annKey] : undefined;
    if (ann) {
      for (const part of ann
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const ip = canonicalIp(part);
        if (ip) requested.push(ip);
        else refused ??= `MetalLB refuses its annotation ${annKey}: ${jsonExcerpt(part)} is not an IP address`;
      }
      // Annotations are free text to the API server; MetalLB's controller (getDesiredLbIPs in
      // controller/service.go) fails the whole allocation on one bad address, so none is given.
      if (refused)
        check.warn(
          `${refused}, so the Service gets no LoadBalancer address (it stays pending); ` + `list addresses separated by commas`,
          'metadata.annotations',
          'loadbalancer-refused',
        );
    }
    this.rawServices.set(`${meta.namespace}/${meta.name}`, { addresses, written, requested, ...(refused ? { refused } : {}) });
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
      // ValidateIngress (pkg/apis/networking/validation, validateIngressRules): a host is a
      // DNS-1123 subdomain, a wildcard only as a leading `*.`, never an IP address.
      const wrong = ingressHostProblem(host);
      if (wrong) {
        check.error(
          `spec.rules[${i}].host ${jsonExcerpt(host)} ${wrong}, so the API server refuses the Ingress; ` +
            `use a lower-case DNS name such as www.example.com or a wildcard *.example.com (no port)`,
          `spec.rules[${i}].host`,
        );
        return;
      }
      if (!hosts.includes(host)) hosts.push(host);
    });
    const status = check.obj(o, 'status', 'status');
    const statusWritten = isObj(status['loadBalancer']);
    const lb = check.obj(status, 'loadBalancer', 'status.loadBalancer');
    const addresses = this.readLbIngress(check.arr(lb, 'ingress', 'status.loadBalancer.ingress'), 'status.loadBalancer.ingress', check);
    if (check.errors > 0) return;
    this.ingresses.push({ meta, ...(className ? { className } : {}), hosts, addresses, statusWritten });
  }

  private readGateway(o: Obj, meta: ObjectMeta, check: Checker): void {
    const spec = check.obj(o, 'spec', 'spec');
    const className = check.str(spec, 'gatewayClassName', 'spec.gatewayClassName') ?? '';
    // GatewaySpec: gatewayClassName is +required (gateway_types.go).
    if (className === '') check.error('spec.gatewayClassName is missing (the Gateway CRD requires it); name the GatewayClass of this Gateway', 'spec');
    const listeners: ListenerInfo[] = [];
    const seen = new Map<string, number>();
    const combos = new Map<string, number>();
    check.arr(spec, 'listeners', 'spec.listeners').forEach((l, i) => {
      const path = `spec.listeners[${i}]`;
      if (!isObj(l)) {
        check.error(`${path} must be a mapping with name, port and protocol`, path);
        return;
      }
      const name = check.str(l, 'name', `${path}.name`) ?? '';
      if (name === '')
        check.error(`${path}.name is missing (the Gateway CRD requires it); ` + `every listener needs a name (routes attach to it with sectionName)`, path);
      // The listeners' CEL rules (GatewaySpec.Listeners in gateway_types.go): names unique, and
      // port, protocol and hostname unique together.
      const twin = seen.get(name);
      if (name !== '' && twin !== undefined) {
        check.error(
          `${path}.name ${jsonExcerpt(name)} is also spec.listeners[${twin}]'s; ` +
            `the Gateway CRD requires listener names unique within the Gateway: rename one`,
          `${path}.name`,
        );
      } else seen.set(name, i);
      const hostname = check.str(l, 'hostname', `${path}.hostname`);
      // Listener.hostname is a Hostname: the CRD's pattern, lower case, a leading `*.` at most.
      if (hostname && !gatewayHostname(hostname)) {
        check.error(
          `${path}.hostname ${jsonExcerpt(hostname)} does not match the Gateway API Hostname pattern (lower-case DNS name, ` +
            `optionally *.), so the API server refuses it`,
          `${path}.hostname`,
        );
      }
      const port = check.port(l, 'port', `${path}.port`);
      const protocol = check.str(l, 'protocol', `${path}.protocol`) ?? 'HTTP';
      if (hostname && (protocol === 'TCP' || protocol === 'UDP')) {
        check.error(`${path}.hostname: the Gateway CRD refuses a hostname on a ${protocol} listener; remove it`, `${path}.hostname`);
      }
      const combo = `${port}|${protocol}|${hostname ?? ''}`;
      const same = combos.get(combo);
      if (same !== undefined) {
        check.error(
          `${path} has the port, protocol and hostname of spec.listeners[${same}]; ` + `the Gateway CRD requires that combination unique for each listener`,
          path,
        );
      } else combos.set(combo, i);
      const ar = check.obj(l, 'allowedRoutes', `${path}.allowedRoutes`);
      const nsObj = check.obj(ar, 'namespaces', `${path}.allowedRoutes.namespaces`);
      const fromText = check.str(nsObj, 'from', `${path}.allowedRoutes.namespaces.from`) ?? 'Same';
      let from: ListenerInfo['from'] = 'Same';
      // RouteNamespaces.from: +kubebuilder:validation:Enum=All;Selector;Same.
      if (fromText === 'Same' || fromText === 'All' || fromText === 'Selector') from = fromText;
      else
        check.error(
          `${path}.allowedRoutes.namespaces.from ${jsonExcerpt(fromText)} is not one the Gateway CRD allows; use Same, ` + `All or Selector`,
          `${path}.allowedRoutes.namespaces.from`,
        );
      const selector = from === 'Selector' ? readLabelSelector(nsObj, 'selector', `${path}.allowedRoutes.namespaces.selector`, check) : undefined;
      if (from === 'Selector' && !selector) {
        // "Selector must be specified when From is set to Selector" is documentation, not a
        // CRD rule: the Gateway is admitted and the listener selects no namespace.
        check.warn(
          `${path}.allowedRoutes.namespaces.selector is missing while from is Selector, ` +
            `so this listener admits no route; add a selector or use from: Same or All`,
          `${path}.allowedRoutes.namespaces`,
          'listener-no-selector',
        );
        from = 'None';
      }
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
    let refused: string | undefined;
    check.arr(spec, 'addresses', 'spec.addresses').forEach((a, i) => {
      if (!isObj(a)) return;
      const type = a['type'] ?? 'IPAddress';
      if (type !== 'IPAddress') return;
      const value = check.str(a, 'value', `spec.addresses[${i}].value`);
      if (!value) return;
      const ip = canonicalIp(value);
      if (ip) requested.push(ip);
      else {
        // GatewaySpecAddress has no CEL rule on an IPAddress value: the API server admits it and
        // the controller reports Programmed False (AddressNotUsable), giving no address.
        refused ??= `spec.addresses[${i}].value ${jsonExcerpt(value)} is not an IP address`;
        check.warn(
          `${refused}, so the Gateway controller would assign no address (Programmed: False, AddressNotUsable); ` + `write an IP or leave spec.addresses out`,
          `spec.addresses[${i}].value`,
          'gateway-address-unusable',
        );
      }
    });
    const status: LbAddress[] = [];
    const st = check.obj(o, 'status', 'status');
    const statusWritten = Array.isArray(st['addresses']) || (Array.isArray(st['conditions']) && st['conditions'].length > 0);
    check.arr(st, 'addresses', 'status.addresses').forEach((a, i) => {
      if (!isObj(a)) return;
      const type = a['type'] ?? 'IPAddress';
      const value = check.str(a, 'value', `status.addresses[${i}].value`);
      if (!value) return;
      if (type === 'Hostname') {
        if (gatewayHostname(value)) status.push({ hostname: lower(value) });
        else
          check.warn(
            `status.addresses[${i}].value ${jsonExcerpt(value)} is not a host name, ` + `so this status entry is skipped`,
            `status.addresses[${i}].value`,
            'status-value-skipped',
          );
      } else {
        const ip = canonicalIp(value);
        if (ip) status.push({ ip });
        else
          check.warn(
            `status.addresses[${i}].value ${jsonExcerpt(value)} is not an IP address, so this status entry is skipped; ` + `write e.g. value: 203.0.113.10`,
            `status.addresses[${i}].value`,
            'status-value-skipped',
          );
      }
    });
    if (check.errors > 0) return;
    this.gateways.push({ meta, className, listeners, status, statusWritten, requested, ...(refused ? { refused } : {}) });
  }

  private readRoute(kind: RouteKind, o: Obj, meta: ObjectMeta, check: Checker): void {
    const spec = check.obj(o, 'spec', 'spec');
    const hostnames: string[] = [];
    // A Set beside the list: a route may list tens of thousands of names before admission's
    // maxItems refuses it, and a search of the list per name would be quadratic.
    const seenHostnames = new Set<string>();
    const v1TlsRoute = kind === 'TLSRoute' && o['apiVersion'] === `${GATEWAY_GROUP}/v1`;
    check.arr(spec, 'hostnames', 'spec.hostnames').forEach((h, i) => {
      const at = `spec.hostnames[${i}]`;
      // Route hostnames are Hostnames: the CRD's pattern refuses anything else.
      if (typeof h !== 'string' || !gatewayHostname(h)) {
        check.error(
          `${at} ${jsonExcerpt(h)} does not match the Gateway API Hostname pattern, so the API server refuses the ${kind}; ` +
            `use a lower-case name such as www.example.com or *.example.com`,
          at,
        );
        return;
      }
      if (parseIp(h)) {
        // An IPv4 address matches the Hostname pattern; only TLSRoute v1 has a CEL rule against
        // it ("Hostnames cannot contain an IP", tlsroute_types.go). Elsewhere it is admitted, and
        // the Gateway API says an IP is not a hostname to match: DNS has nothing to serve.
        if (v1TlsRoute) check.error(`${at} ${jsonExcerpt(h)}: the TLSRoute CRD refuses IP addresses as hostnames; use a DNS name`, at);
        else check.warn(`${at} ${jsonExcerpt(h)} is an IP address, which no Gateway matches as a host name; it is skipped`, at, 'route-hostname-skipped');
        return;
      }
      if (seenHostnames.has(h)) return;
      seenHostnames.add(h);
      hostnames.push(h);
    });
    const parentRefs: ParentRef[] = [];
    check.arr(spec, 'parentRefs', 'spec.parentRefs').forEach((p, i) => {
      if (!isObj(p)) {
        check.error(`spec.parentRefs[${i}] must be a mapping with at least name`, `spec.parentRefs[${i}]`);
        return;
      }
      const name = check.str(p, 'name', `spec.parentRefs[${i}].name`);
      if (!name) {
        // ParentReference.name is +required (shared_types.go).
        check.error(`spec.parentRefs[${i}].name is missing (the ${kind} CRD requires it); name the Gateway this route attaches to`, `spec.parentRefs[${i}]`);
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
    if (check.errors > 0) return;
    this.routes.push({ ...meta, kind, hostnames, parentRefs });
  }

  /**
   * external-dns's DNSEndpoint. Its CRD types every field (endpoints a list of mappings, targets
   * strings, recordTTL an integer) and requires none, and takes any string as a target: a type
   * error is the API server's refusal, a value k8s_gateway cannot answer is skipped with a
   * warning, as k8s_gateway's lookupDNSEndpoint (dnsendpoint.go) skips it: A and AAAA targets
   * that do not parse as an address are passed over, TXT targets answer TXT, other record types
   * answer nothing.
   */
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
      const recordType = check.str(e, 'recordType', `${path}.recordType`);
      const ttl = e['recordTTL'];
      if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isInteger(ttl))) {
        check.error(`${path}.recordTTL ${jsonExcerpt(ttl)} must be an integer number of seconds (the CRD types it int64)`, `${path}.recordTTL`);
      }
      const targets: string[] = [];
      check.arr(e, 'targets', `${path}.targets`).forEach((t, j) => {
        if (typeof t === 'string') targets.push(t);
        else check.error(`${path}.targets[${j}] must be a string, got ${jsonExcerpt(t)}; quote it`, `${path}.targets[${j}]`);
      });
      if (!dnsName) {
        check.warn(`${path}.dnsName is missing, so this endpoint names nothing and is skipped; add dnsName: www.example.com`, path, 'dnsendpoint-skipped');
        return;
      }
      if (!recordType || !ANSWERED_RECORD_TYPES.has(recordType)) {
        const what = recordType
          ? `recordType ${jsonExcerpt(recordType)} is not one k8s_gateway answers (A, AAAA, TXT)`
          : 'recordType is missing, and k8s_gateway answers only A, AAAA and TXT';
        check.warn(`${path}.${what}, so ${jsonExcerpt(dnsName)} gets nothing from this endpoint`, `${path}.recordType`, 'dnsendpoint-skipped');
        return;
      }
      const kept: string[] = [];
      targets.forEach((t, j) => {
        if (recordType === 'TXT') {
          kept.push(t);
          return;
        }
        const ip = parseIp(t);
        const at = `${path}.targets[${j}]`;
        if (!ip) {
          check.warn(
            `${at} ${jsonExcerpt(t)} is not an IP address, ` +
              `so this ${recordType} target is skipped (k8s_gateway answers only addresses); write an IPv${recordType === 'A' ? 4 : 6} address`,
            at,
            'dnsendpoint-target-skipped',
          );
          return;
        }
        const own = ip.family === 4 ? 'A' : 'AAAA';
        if (own !== recordType) {
          // k8s_gateway keeps any address and answers it for its own family.
          check.warn(
            `${at} ${jsonExcerpt(t)} is an IPv${ip.family} address in an ${recordType} endpoint; ` +
              `k8s_gateway answers it as ${own}, an external-dns provider would refuse it: move it to an ${own} endpoint`,
            at,
            'dnsendpoint-target-family',
          );
        }
        kept.push(canonicalIp(t)!);
      });
      endpoints.push({ dnsName: lower(dnsName), recordType, targets: kept, ...(typeof ttl === 'number' && ttl > 0 ? { ttl } : {}) });
    });
    if (check.errors > 0) return;
    this.dnsEndpoints.push({ ...meta, endpoints });
  }

  /**
   * Fills statuses the manifests leave out and resolves route attachment. Findings about what
   * a controller would refuse or ignore are warnings at the object's file and line.
   */
}

const DNS1123_LABELS = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Why ValidateIngress refuses an Ingress rule host (validateIngressRules): an IP address; with a
 * `*`, not IsWildcardDNS1123Subdomain (`*.` then a DNS-1123 subdomain); else not
 * IsDNS1123Subdomain (lower case, no trailing dot, 253 characters at most). Undefined: valid.
 */
function ingressHostProblem(h: string): string | undefined {
  if (parseIp(h)) return 'is an IP address; it must be a DNS name';
  if (h.length > 253) return 'is longer than 253 characters';
  if (h.includes('*')) return h.startsWith('*.') && DNS1123_LABELS.test(h.slice(2)) ? undefined : 'is not a wildcard DNS-1123 subdomain (`*.` may only lead)';
  return isDns1123Subdomain(h) ? undefined : 'is not a DNS-1123 subdomain (lower-case letters, digits, - and .)';
}

/** The Gateway API Hostname type (shared_types.go): 1 to 253 characters of its pattern. */
function gatewayHostname(h: string): boolean {
  const name = h.startsWith('*.') ? h.slice(2) : h;
  return h.length <= 253 && name.length > 0 && DNS1123_LABELS.test(name);
}
