// The edge objects' status, completed the way the controllers a user runs would fill it: the
// LoadBalancer pool (MetalLB or a cloud), the ingress controller publishing its Service's
// address, the Gateway controller; and route attachment. Status written in a manifest always
// wins, and so does a pending one: the simulation fills only status that is absent (a dump's
// `loadBalancer: {}` stays pending). The objects are read and admitted by admit/edge.ts.
import type {
  ClusterOptions,
  EdgeModel,
  EdgeStatus,
  GatewayClassInfo,
  GatewayInfo,
  IngressClassInfo,
  IngressInfo,
  LbAddress,
  NamespaceObject,
  RouteHost,
  RouteInfo,
  Service,
  SourceRef,
} from '../model/model.js';
import type { Finding } from '../model/finding.js';
import { matchesSelector } from '../model/selector.js';
import { EdgeReader, GATEWAY_GROUP, lower, type RawServiceStatus } from '../admit/edge.js';
import { DEFAULT_LB_CIDRS, LoadBalancerPool } from './loadbalancer.js';

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

/** Fills the status of the edge objects an EdgeReader read, as their controllers would. */
export class EdgeCollector extends EdgeReader {
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
   * Each Ingress's address: written (an empty `loadBalancer: {}` is pending: status is data),
   * else the address its class's controller Service publishes (none while that Service is
   * pending), else one pool address per class that every Ingress of the class shares.
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
      const where = `Ingress "${ing.meta.namespace}/${ing.meta.name}"`;
      let status: EdgeStatus;
      if (ing.addresses.length > 0) status = { addresses: ing.addresses, origin: 'manifest' };
      else if (ing.statusWritten) {
        // A dump of an Ingress no controller has published an address for holds
        // `status: {loadBalancer: {}}`: the cluster it came from gave it none.
        status = { addresses: [], origin: 'pending', reason: 'status.loadBalancer is written without an address' };
      } else {
        const cls = className !== undefined ? classes.find((c) => c.name === className) : undefined;
        const cacheKey = className ?? '';
        let shared = classAddress.get(cacheKey);
        if (!shared) {
          const published = cls ? controllerService(cls, sortedServices, serviceStatus) : undefined;
          if (published?.status.origin === 'pending') {
            const reason = `its controller's Service "${published.key}" is pending, so the controller publishes no address`;
            shared = { addresses: [], origin: 'pending', reason };
          } else if (published && published.status.addresses.length > 0) shared = { addresses: published.status.addresses, origin: 'controller' };
          else {
            const ip = pool.allocate(`IngressClass/${cacheKey}`, pool.families()[0] ?? 4);
            shared = { addresses: ip ? [{ ip }] : [], origin: ip ? 'pool' : 'none' };
          }
          classAddress.set(cacheKey, shared);
        }
        status = shared;
        const poolText = standIn(status, 'no address is filled in');
        const note = (severity: Finding['severity'], code: string, message: string): void =>
          void findings.push({ ...ing.meta.source, severity, code, message: `${where}: ${message}` });
        if (className === undefined) {
          note(
            'warning',
            'ingress-no-controller',
            'has no ingress class (spec.ingressClassName) and no IngressClass is marked default, ' +
              `so no controller would serve it; set spec.ingressClassName (${poolText})`,
          );
        } else if (!cls) {
          // Normal for an application's chart: the controller's own chart installs the class.
          note('info', 'ingress-class-missing', `IngressClass "${className}" is not in the manifests (its controller's chart installs it); ${poolText}`);
        } else if (!cls.controller) {
          note(
            'warning',
            'ingress-no-controller',
            `its IngressClass "${className}" names no controller (spec.controller), ` + `so no ingress controller would give it an address; ${poolText}`,
          );
        }
      }
      ingresses.push({ ...ing.meta, ...(className !== undefined ? { className } : {}), hosts: ing.hosts, status });
    }
    return ingresses;
  }

  /**
   * Each Gateway's address: written; else pending when the status is written without one (below);
   * else what spec.addresses requests; else one from the pool. A dump of a Gateway always holds a
   * status (the CRD's default writes Accepted and Programmed "Pending" on create, a controller
   * replaces them) and never `addresses: []` (omitempty), so a written status without addresses
   * is one without an address in that cluster, whoever left it so: the Gateway stays pending.
   * Hand-written Gateways carry no status, and get what their controller would assign.
   */
  private gatewayStatuses(gwClasses: readonly GatewayClassInfo[], pool: LoadBalancerPool, findings: Finding[]): GatewayInfo[] {
    const gateways: GatewayInfo[] = [];
    for (const g of [...this.gateways].sort((a, b) => byKey(a.meta, b.meta))) {
      let status: EdgeStatus;
      if (g.status.length > 0) status = { addresses: g.status, origin: 'manifest' };
      else if (g.statusWritten) status = { addresses: [], origin: 'pending', reason: 'its status is written without addresses' };
      else if (g.refused) status = { addresses: [], origin: 'pending', reason: `${g.refused}, so its controller assigns none` };
      else if (g.requested.length > 0) status = { addresses: g.requested.map((ip) => ({ ip })), origin: 'controller' };
      else {
        const ip = pool.allocate(`Gateway/${g.meta.namespace}/${g.meta.name}`, pool.families()[0] ?? 4);
        status = { addresses: ip ? [{ ip }] : [], origin: ip ? 'pool' : 'none' };
      }
      if (g.className !== '' && !gwClasses.some((c) => c.name === g.className) && status.origin !== 'manifest' && status.origin !== 'pending') {
        // As for IngressClass: the Gateway controller's chart installs the class.
        const message =
          `Gateway "${g.meta.namespace}/${g.meta.name}": GatewayClass "${g.className}" is not in the manifests ` +
          `(its controller's chart installs it); ${standIn(status, 'its spec.addresses are used')}`;
        findings.push({ ...g.meta.source, severity: 'info', code: 'gateway-class-missing', message });
      }
      gateways.push({ ...g.meta, className: g.className, listeners: g.listeners, status });
    }
    return gateways;
  }
}

/**
 * Each Service's LoadBalancer status: written (status.loadBalancer written without ingress is a
 * pending load balancer, as `kubectl get -o yaml` shows one: it stays without an address), else
 * requested (spec.loadBalancerIP, MetalLB's annotation), else one pool address per IP family;
 * other types have none.
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
    if (raw?.written) {
      serviceStatus.set(key, { addresses: [], origin: 'pending', reason: 'status.loadBalancer is written without ingress' });
      continue;
    }
    if (raw?.refused) {
      serviceStatus.set(key, { addresses: [], origin: 'pending', reason: raw.refused });
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

/** What an info about a missing class says of the address: the pool's, or `otherwise`. */
function standIn(status: EdgeStatus, otherwise: string): string {
  return status.origin === 'pool' ? `the LoadBalancer pool address ${status.addresses.map((a) => a.ip).join(', ')} stands in for its controller's` : otherwise;
}

/** What an ingress controller publishes: its Service ("namespace/name") and that Service's status. */
interface Published {
  readonly key: string;
  readonly status: EdgeStatus;
}

/**
 * The Service an ingress controller publishes its address from (ingress-nginx's
 * --publish-service): named by the IngressClass annotation `clusterdns.io/publish-service:
 * NS/NAME`, else the LoadBalancer Service carrying the IngressClass's app.kubernetes.io/name
 * and instance labels (as the controllers' Helm charts label both), else one whose
 * app.kubernetes.io/name is the last segment of the controller name (k8s.io/ingress-nginx).
 * Its status is what the controller publishes: a pending Service publishes nothing.
 */
function controllerService(c: IngressClassInfo, services: readonly Service[], status: ReadonlyMap<string, EdgeStatus>): Published | undefined {
  const pick = (svc: Service | undefined): Published | undefined => {
    if (!svc) return undefined;
    const key = `${svc.namespace}/${svc.name}`;
    const st = status.get(key);
    if (st && (st.addresses.length > 0 || st.origin === 'pending')) return { key, status: st };
    return svc.externalIPs.length > 0 ? { key, status: { addresses: svc.externalIPs.map((ip) => ({ ip })), origin: 'controller' } } : undefined;
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
      (s) =>
        s.labels['app.kubernetes.io/name'] === appName &&
        (inst === undefined || s.labels['app.kubernetes.io/instance'] === inst) &&
        (s.labels['app.kubernetes.io/component'] ?? 'controller') === 'controller',
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
function attachRoutes(
  routes: readonly RouteInfo[],
  gateways: readonly GatewayInfo[],
  namespaces: ReadonlyMap<string, NamespaceObject>,
  findings: Finding[],
): RouteHost[] {
  const out: RouteHost[] = [];
  const gwByKey = new Map(gateways.map((g) => [`${g.namespace}/${g.name}`, g]));
  // (host, gateway) pairs already served for the route in hand: a per-route set keeps the
  // attachment linear in the route host names (a search of `out` per name was quadratic).
  const served = new Map<GatewayInfo, Set<string>>();
  for (const route of routes) {
    served.clear();
    const where = `${route.kind} "${route.namespace}/${route.name}"`;
    const warn = (code: string, message: string): void => void findings.push({ ...route.source, severity: 'warning', code, message: `${where}: ${message}` });
    if (route.parentRefs.length === 0)
      warn('route-no-parent', 'has no spec.parentRefs, so it is attached to no Gateway and serves nothing; add a parentRef naming your Gateway');
    for (const ref of route.parentRefs) {
      if (ref.group !== GATEWAY_GROUP || ref.kind !== 'Gateway') continue;
      const gw = gwByKey.get(`${ref.namespace}/${ref.name}`);
      if (!gw) {
        warn('route-parent-missing', `parentRef Gateway "${ref.namespace}/${ref.name}" is not in the manifests; its hostnames resolve to nothing`);
        continue;
      }
      const candidates = gw.listeners.filter(
        (l) => (ref.sectionName === undefined || l.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port),
      );
      if (candidates.length === 0) {
        warn(
          'route-parent-rejects',
          `Gateway "${gw.namespace}/${gw.name}" has no listener${ref.sectionName ? ` named "${ref.sectionName}"` : ''}${ref.port ? ` on port ${ref.port}` : ''}; fix sectionName/port`,
        );
        continue;
      }
      let accepted = 0;
      const nsLabels = namespaces.get(route.namespace)?.labels ?? { 'kubernetes.io/metadata.name': route.namespace };
      for (const l of candidates) {
        const nsOk =
          l.from === 'All' ||
          (l.from === 'Same' && route.namespace === gw.namespace) ||
          (l.from === 'Selector' && l.selector !== undefined && matchesSelector(l.selector, nsLabels));
        const kindOk = (l.kinds ?? defaultKinds(l.protocol)).includes(route.kind);
        if (!nsOk || !kindOk) continue;
        const hosts = route.hostnames.length > 0 ? route.hostnames : l.hostname ? [l.hostname] : [];
        let matched = false;
        let seen = served.get(gw);
        if (!seen) served.set(gw, (seen = new Set()));
        for (const h of hosts) {
          const host = intersectHost(l.hostname, h);
          if (host === undefined) continue;
          matched = true;
          if (seen.has(host)) continue;
          seen.add(host);
          out.push({ host, route, gateway: gw });
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
    findings.push({
      ...source,
      severity: 'warning',
      code: 'host-claimed-twice',
      message: `${what}: host "${host}" is also claimed by ${prev.what} (${prev.source.file}:${prev.source.line}); DNS answers with the addresses of both, the controllers will route only one`,
    });
  };
  for (const i of ingresses) for (const h of i.hosts) claim(h, `Ingress "${i.namespace}/${i.name}"`, i.source);
  for (const r of routeHosts) claim(r.host, `${r.route.kind} "${r.route.namespace}/${r.route.name}"`, r.route.source);
}

/** One line of `clusterdns check` about a status: the object's file and line, and what to say. */
export interface StatusNote {
  readonly source: SourceRef;
  readonly text: string;
}

/**
 * One note per status clusterdns filled in (absent from the manifests), for `check`'s
 * `status-filled` info lines: "Kind "ns/name": field addresses (who filled it)". Services in
 * `services` order, then Ingresses, then Gateways (each by namespace/name).
 */
export function filledStatuses(edge: EdgeModel | undefined, services: readonly Service[]): StatusNote[] {
  if (!edge) return [];
  const out: StatusNote[] = [];
  const filled = (st: EdgeStatus | undefined): st is EdgeStatus => (st?.origin === 'pool' || st?.origin === 'controller') && st.addresses.length > 0;
  const show = (st: EdgeStatus, controller = 'ingress controller'): string =>
    `${st.addresses.map((a) => a.ip ?? a.hostname).join(', ')} (${st.origin === 'pool' ? 'LoadBalancer pool' : controller})`;
  for (const svc of services) {
    const st = edge.serviceStatus.get(`${svc.namespace}/${svc.name}`);
    if (filled(st)) out.push({ source: svc.source, text: `Service "${svc.namespace}/${svc.name}": status.loadBalancer ${show(st)}` });
  }
  for (const i of edge.ingresses) {
    const text = `Ingress "${i.namespace}/${i.name}" (${i.hosts.join(', ')}): status.loadBalancer ${show(i.status)}`;
    if (filled(i.status)) out.push({ source: i.source, text });
  }
  for (const g of edge.gateways) {
    const text = `Gateway "${g.namespace}/${g.name}": status.addresses ${show(g.status, 'Gateway spec.addresses')}`;
    if (filled(g.status)) out.push({ source: g.source, text });
  }
  return out;
}

/**
 * One note per object that stays without an address because its status says so (written
 * without one, as a dump of a pending object holds it) or its controller would refuse it, for
 * `check`'s `status-pending` info lines: "Kind "ns/name": no address: why; DNS answers nothing
 * for it". Same order as filledStatuses.
 */
export function pendingStatuses(edge: EdgeModel | undefined, services: readonly Service[]): StatusNote[] {
  if (!edge) return [];
  const out: StatusNote[] = [];
  const say = (what: string, st: EdgeStatus, names: string): string =>
    `${what}: pending, no address (${st.reason ?? 'none assigned'}); ${names} resolve to nothing`;
  for (const svc of services) {
    const st = edge.serviceStatus.get(`${svc.namespace}/${svc.name}`);
    if (st?.origin !== 'pending') continue;
    out.push({ source: svc.source, text: say(`Service "${svc.namespace}/${svc.name}"`, st, 'its k8s_external and k8s_gateway names') });
  }
  for (const i of edge.ingresses) {
    const hosts = i.hosts.length > 0 ? `its hosts (${i.hosts.join(', ')})` : 'its hosts';
    if (i.status.origin === 'pending') out.push({ source: i.source, text: say(`Ingress "${i.namespace}/${i.name}"`, i.status, hosts) });
  }
  for (const g of edge.gateways) {
    if (g.status.origin !== 'pending') continue;
    out.push({ source: g.source, text: say(`Gateway "${g.namespace}/${g.name}"`, g.status, 'the hostnames of its routes') });
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
