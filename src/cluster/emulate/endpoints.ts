// The EndpointSlice controller (pkg/controller/endpointslice, k8s.io/endpointslice reconciler),
// for Services with a non-empty selector and no EndpointSlices/Endpoints in the manifests:
// - pods of the Service's namespace whose labels match the selector (every key equal), skipping
//   terminal pods (Succeeded/Failed) and pods without an IP (ShouldPodBeInEndpoints; terminating
//   pods are kept, with ready=false unless publishNotReadyAddresses, as the controller does);
// - one group of slices per address type in service.ipFamilies; endpoints with the pod's IPs of
//   that family, conditions.ready = publishNotReadyAddresses || (pod ready && not terminating),
//   hostname = pod.spec.hostname when pod.spec.subdomain is the Service name, targetRef Pod,
//   nodeName and the node's topology.kubernetes.io/zone;
// - ports per pod (getEndpointPorts/FindPort): one per Service port with the Service port's name
//   and protocol; targetPort a number as is (default: the port), a name looked up in the pod's
//   container ports by name and protocol; a pod lacking that name is left out of that port only,
//   so pods with different port sets land in different slices, as the reconciler groups by port map;
// - at most 100 endpoints per slice; labels: the Service's labels, kubernetes.io/service-name,
//   endpointslice.kubernetes.io/managed-by and, for headless Services, service.kubernetes.io/headless.
// Slice names are `<service>-<5 chars>` derived from a hash instead of generateName's random suffix.
// Differences: no placeholder slice without endpoints is created (it serves no DNS record).

import type { ClusterNode, Endpoint, EndpointPort, EndpointSlice, Pod, Service } from '../model/model.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './mirror.js';
import { generatedName } from './workloads.js';
import { tight } from '../admit/objects.js';

const ENDPOINTSLICE_CONTROLLER = 'endpointslice-controller.k8s.io';
const HEADLESS_LABEL = 'service.kubernetes.io/headless';
const MAX_ENDPOINTS_PER_SLICE = 100;

/** Index of pods per namespace and label pair, for selector lookups at scale. */
export class PodIndex {
  private readonly byNs = new Map<string, { all: Pod[]; byLabel: Map<string, Pod[]> }>();

  /**
   * @param labelKeys when given, only labels with these keys are indexed: select() must then be
   * asked only for selectors whose keys are all among them (forServices).
   */
  constructor(pods: readonly Pod[], labelKeys?: ReadonlySet<string>) {
    // The pods of a workload share one labels object: its "k=v" keys are built once for all.
    const keysOf = new Map<Readonly<Record<string, string>>, string[]>();
    for (let i = 0; i < pods.length; i++) {
      const p = pods[i]!; // indexed: once over 100k pods, an unoptimised for-of allocates per pod
      let e = this.byNs.get(p.namespace);
      if (!e) this.byNs.set(p.namespace, (e = { all: [], byLabel: new Map() }));
      e.all.push(p);
      let keys = keysOf.get(p.labels);
      if (!keys) {
        keys = [];
        for (const k in p.labels) if (!labelKeys || labelKeys.has(k)) keys.push(`${k}=${p.labels[k]}`);
        keysOf.set(p.labels, keys);
      }
      for (const key of keys) {
        const l = e.byLabel.get(key);
        if (l) l.push(p);
        else e.byLabel.set(key, [p]);
      }
    }
  }

  /**
   * The index the endpoints controller needs for these Services: only the label keys their
   * selectors name (a StatefulSet pod's own pod-name and pod-index labels, a Deployment's
   * pod-template-hash, are not looked up and not indexed).
   */
  static forServices(pods: readonly Pod[], services: readonly Service[]): PodIndex {
    const keys = new Set<string>();
    for (const s of services) if (hasControllerSelector(s)) for (const k in s.selector) keys.add(k);
    return new PodIndex(pods, keys);
  }

  /** Pods of the namespace whose labels carry every key/value of the selector (in input order). */
  select(namespace: string, selector: Readonly<Record<string, string>>): Pod[] {
    const e = this.byNs.get(namespace);
    if (!e) return [];
    const pairs = Object.entries(selector);
    if (pairs.length === 0) return [...e.all];
    let best: Pod[] | undefined;
    for (const [k, v] of pairs) {
      const l = e.byLabel.get(`${k}=${v}`);
      if (!l) return [];
      if (!best || l.length < best.length) best = l;
    }
    return best!.filter((p) => pairs.every(([k, v]) => p.labels[k] === v));
  }
}

/** Whether the endpoints controller manages this Service's slices (when none are in the manifests). */
export function hasControllerSelector(s: Service): boolean {
  if (s.type === 'ExternalName' || s.selector === undefined) return false;
  for (const _ in s.selector) return true; // a key, without a list of them (every Service, every load)
  return false;
}

export const isTerminal = (p: Pod): boolean => p.phase === 'Succeeded' || p.phase === 'Failed';

/** podutil.FindPort: the container port for a Service port, or undefined when the pod has none by that name. */
export function findPort(pod: Pod, port: Service['ports'][number]): number | undefined {
  const tp = port.targetPort ?? port.port;
  if (typeof tp === 'number') return tp;
  const cp = (pod.containerPorts ?? []).find((c) => c.name === tp && c.protocol === port.protocol);
  return cp?.containerPort;
}

/**
 * familyOf for the IPs of pods being built into a model, without parsing them: every one is
 * valid (a manifest's passed check.ip, an assigned one was made from a pod CIDR, a host-network
 * pod's is a node address assignPodIPs kept by familyOf), and familyOf reads a valid text with
 * ':' as IPv6 and any other as IPv4.
 */
const podIpFamily = (ip: string): 'IPv4' | 'IPv6' => (ip.includes(':') ? 'IPv6' : 'IPv4');

/**
 * The addresses of the family: the pod's own array when all are (single-stack), else a copy of
 * exactly their number (filter's array keeps room for 17, ~130 bytes more per endpoint).
 */
function addressesOf(ips: readonly string[], family: 'IPv4' | 'IPv6'): readonly string[] {
  let n = 0;
  for (const ip of ips) if (podIpFamily(ip) === family) n++;
  if (n === ips.length) return ips;
  if (n === 0) return [];
  if (n === 1) return [ips.find((ip) => podIpFamily(ip) === family)!]; // a dual-stack pod's one
  return tight(ips.filter((ip) => podIpFamily(ip) === family));
}

/**
 * A pod's endpoint, each shape one literal with its keys in the order endpoints have always had
 * (JSON): an object given its optional keys one by one keeps them in a separate property array,
 * some 60 bytes more for each of 100k endpoints.
 */
function podEndpoint(
  addresses: readonly string[],
  ready: boolean,
  hostname: string | undefined,
  targetRefName: string,
  nodeName: string | undefined,
  nodes: ReadonlyMap<string, ClusterNode>,
): Endpoint {
  const targetRefKind = 'Pod';
  if (nodeName === undefined) {
    return hostname === undefined ? { addresses, ready, targetRefName, targetRefKind } : { addresses, ready, hostname, targetRefName, targetRefKind };
  }
  const zone = nodes.get(nodeName)?.zone;
  if (zone === undefined) {
    return hostname === undefined
      ? { addresses, ready, targetRefName, targetRefKind, nodeName }
      : { addresses, ready, hostname, targetRefName, targetRefKind, nodeName };
  }
  return hostname === undefined
    ? { addresses, ready, targetRefName, targetRefKind, zone, nodeName }
    : { addresses, ready, hostname, targetRefName, targetRefKind, zone, nodeName };
}

function endpointPorts(svc: Service, pod: Pod): EndpointPort[] {
  const out: EndpointPort[] = [];
  for (const sp of svc.ports) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    out.push({ name: sp.name, protocol: sp.protocol, port });
  }
  return out;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The pods a Service's slices are made of: selected, not terminal, with an address, by name. */
export function slicePods(index: PodIndex, svc: Service): Pod[] {
  return index
    .select(svc.namespace, svc.selector!)
    .filter((p) => !isTerminal(p) && p.podIPs.length > 0)
    .sort((a, b) => cmp(a.name, b.name));
}

/**
 * One managed Service's slices from its pods (slicePods), appended to `out`. Names avoid
 * `takenNames` ("namespace/name"), which gets each; `tried`, when given, gets per slice every
 * name tried, the last the one it got (emulate-cache.ts checks a kept slice's name with them).
 */
export function serviceSlices(
  svc: Service,
  pods: readonly Pod[],
  nodes: ReadonlyMap<string, ClusterNode>,
  takenNames: Set<string>,
  out: EndpointSlice[],
  tried?: string[][],
): void {
  if (pods.length === 0) return;
  const key = `${svc.namespace}/${svc.name}`;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(svc.labels)) if (k !== SERVICE_NAME_LABEL && k !== MANAGED_BY_LABEL) labels[k] = v;
  labels[SERVICE_NAME_LABEL] = svc.name;
  labels[MANAGED_BY_LABEL] = ENDPOINTSLICE_CONTROLLER;
  if (svc.headless) labels[HEADLESS_LABEL] = '';
  // A pod's ports depend only on its container ports, which the pods of a template share:
  // one port list (and its group key) per distinct container-port list.
  const portsOf = new Map<Pod['containerPorts'], { ports: EndpointPort[]; pk: string }>();
  for (const family of svc.ipFamilies) {
    const groups = new Map<string, { ports: EndpointPort[]; endpoints: Endpoint[] }>();
    for (const pod of pods) {
      const addresses = addressesOf(pod.podIPs, family);
      if (addresses.length === 0) continue;
      let pp = portsOf.get(pod.containerPorts);
      if (!pp) {
        const ports = endpointPorts(svc, pod);
        portsOf.set(pod.containerPorts, (pp = { ports, pk: JSON.stringify(ports) }));
      }
      let g = groups.get(pp.pk);
      if (!g) groups.set(pp.pk, (g = { ports: pp.ports, endpoints: [] }));
      const ready = svc.publishNotReadyAddresses || ((pod.ready ?? true) && !pod.deleting);
      const hostname = pod.subdomain === svc.name ? pod.hostname : undefined;
      g.endpoints.push(podEndpoint(addresses, ready, hostname, pod.name, pod.nodeName, nodes));
    }
    const ordered = [...groups.entries()].sort((a, b) => cmp(a[0], b[0]));
    for (const [pk, g] of ordered) {
      for (let i = 0; i < g.endpoints.length; i += MAX_ENDPOINTS_PER_SLICE) {
        const seed = `${key}/${family}/${pk}/${i / MAX_ENDPOINTS_PER_SLICE}`;
        let name = generatedName(`${svc.name}-`, seed);
        const names = tried ? [name] : undefined;
        for (let attempt = 1; takenNames.has(`${svc.namespace}/${name}`); attempt++) {
          name = generatedName(`${svc.name}-`, `${seed}#${attempt}`);
          names?.push(name);
        }
        takenNames.add(`${svc.namespace}/${name}`);
        if (names) tried!.push(names);
        out.push({
          name,
          namespace: svc.namespace,
          labels,
          annotations: {},
          source: svc.source,
          serviceName: svc.name,
          addressType: family,
          ports: g.ports,
          endpoints: g.endpoints.length <= MAX_ENDPOINTS_PER_SLICE ? g.endpoints : g.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE),
          mirrored: false,
        });
      }
    }
  }
}

/**
 * Generates the EndpointSlices of the Services the controller manages.
 * @param claimed "namespace/name" of Services with EndpointSlices or Endpoints in the manifests.
 * @param takenNames "namespace/name" of existing EndpointSlices (generated names avoid them).
 */
export function generateEndpointSlices(
  services: readonly Service[],
  index: PodIndex,
  nodes: ReadonlyMap<string, ClusterNode>,
  claimed: ReadonlySet<string>,
  takenNames: Set<string>,
): { slices: EndpointSlice[]; managed: Set<string> } {
  const slices: EndpointSlice[] = [];
  const managed = new Set<string>();
  for (const svc of services) {
    const key = `${svc.namespace}/${svc.name}`;
    if (!hasControllerSelector(svc) || claimed.has(key)) continue;
    managed.add(key);
    serviceSlices(svc, slicePods(index, svc), nodes, takenNames, slices);
  }
  return { slices, managed };
}
