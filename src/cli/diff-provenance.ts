// Which manifest object produces a served record, and where it is written: read back from the
// record's owner name (and a PTR record's target) against the cluster model the records came
// from. The names follow the DNS specification for Kubernetes (<svc>.<ns>.svc.<zone>,
// <host>.<svc>.<ns>.svc.<zone>, <ip>.<ns>.pod.<zone>) and the edge plugins' host names, so the
// model is searched by name, never by re-deriving the records.
import type { ClusterModel, SourceRef } from '../cluster/model/model.js';
import type { FindingObject } from './findings-output.js';
import { isSubdomain } from '../pkg/names.js';

/** What a record set is attributed to. */
export interface Origin {
  /** The namespace it is grouped under: the object's, else the one its name carries; '' for none. */
  readonly namespace: string;
  readonly object?: FindingObject;
  readonly source?: SourceRef;
}

interface Found {
  readonly object: FindingObject;
  readonly source?: SourceRef;
}

const NONE: Origin = { namespace: '' };

/** Lowercased, without the trailing dot. */
const bare = (name: string): string => {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
};

/** A pod as provenance reads it. */
interface PodPlace {
  readonly namespace: string;
  readonly name: string;
  readonly source: SourceRef;
  readonly derived?: boolean;
  readonly owner?: { readonly kind: string; readonly name: string };
}

/** A slice as provenance reads it: its endpoints' names and what they point at. */
interface SlicePlace {
  readonly name: string;
  readonly mirrored?: boolean;
  readonly source: SourceRef;
  readonly endpoints: readonly {
    readonly hostname?: string;
    readonly addresses: readonly string[];
    readonly targetRefKind?: string;
    readonly targetRefName?: string;
  }[];
}

/**
 * What Provenance reads of a cluster model, as plain data (maps, strings, numbers): made where the
 * model is (a loader thread) and handed over instead of the model, which is several times larger.
 */
export interface ProvenanceIndex {
  readonly services: Map<string, Found>;
  readonly slices: Map<string, SlicePlace[]>;
  readonly pods: Map<string, PodPlace>;
  /** "namespace|dashed-ip" to the pod's "namespace/name". */
  readonly podsByIp: Map<string, string>;
  readonly workloads: Map<string, Found>;
  /** Edge host names (lowercased, no trailing dot; wildcards as written) to the objects that publish them. */
  readonly hosts: Map<string, Found>;
}

/** The index of `model` (an empty one for none). */
export function provenanceIndex(model: ClusterModel | undefined): ProvenanceIndex {
  const index: ProvenanceIndex = { services: new Map(), slices: new Map(), pods: new Map(), podsByIp: new Map(), workloads: new Map(), hosts: new Map() };
  if (!model) return index;
  for (const s of model.services) {
    index.services.set(`${s.namespace}/${s.name}`, { object: { kind: 'Service', namespace: s.namespace, name: s.name }, source: s.source });
  }
  for (const slice of model.endpointSlices) {
    if (slice.serviceName === undefined) continue;
    const key = `${slice.namespace}/${slice.serviceName}`;
    const place: SlicePlace = {
      name: slice.name,
      source: slice.source,
      ...(slice.mirrored ? { mirrored: true } : {}),
      endpoints: slice.endpoints.map((e) => ({
        addresses: e.addresses,
        ...(e.hostname !== undefined ? { hostname: e.hostname } : {}),
        ...(e.targetRefKind !== undefined ? { targetRefKind: e.targetRefKind } : {}),
        ...(e.targetRefName !== undefined ? { targetRefName: e.targetRefName } : {}),
      })),
    };
    const list = index.slices.get(key);
    if (list) list.push(place);
    else index.slices.set(key, [place]);
  }
  for (const p of model.pods) {
    const key = `${p.namespace}/${p.name}`;
    index.pods.set(key, {
      namespace: p.namespace,
      name: p.name,
      source: p.source,
      ...(p.derived ? { derived: true } : {}),
      ...(p.owner ? { owner: { kind: p.owner.kind, name: p.owner.name } } : {}),
    });
    for (const ip of p.podIPs) if (!p.hostNetwork) index.podsByIp.set(`${p.namespace}|${dashed(ip)}`, key);
  }
  for (const w of model.workloads ?? []) {
    index.workloads.set(`${w.kind}/${w.namespace}/${w.name}`, { object: { kind: w.kind, namespace: w.namespace, name: w.name }, source: w.source });
  }
  const edge = model.edge;
  if (!edge) return index;
  const host = (name: string, found: Found): void => {
    const key = bare(name);
    if (!index.hosts.has(key)) index.hosts.set(key, found);
  };
  const of = (kind: string, o: { namespace: string; name: string; source: SourceRef }): Found => ({
    object: { kind, namespace: o.namespace, name: o.name },
    source: o.source,
  });
  for (const d of edge.dnsEndpoints) for (const e of d.endpoints) host(e.dnsName, of('DNSEndpoint', d));
  for (const i of edge.ingresses) for (const h of i.hosts) host(h, of('Ingress', i));
  for (const r of edge.routeHosts) host(r.host, of(r.route.kind, r.route));
  for (const g of edge.gateways) for (const l of g.listeners) if (l.hostname) host(l.hostname, of('Gateway', g));
  return index;
}

export class Provenance {
  private readonly index: ProvenanceIndex;
  /** Zones of the listing, longest first, to read a PTR target's zone. */
  private readonly zones: string[];

  /** From a model, or from its index made elsewhere (provenanceIndex). */
  constructor(from: ClusterModel | ProvenanceIndex | undefined, zones: readonly string[]) {
    this.zones = [...zones].sort((a, b) => b.length - a.length);
    this.index = from === undefined || 'namespaces' in from ? provenanceIndex(from) : from;
  }

  /** The origin of the record set `name` `type` of `zone` (whose PTR data is `data`). */
  of(zone: string, name: string, type: string, data: readonly string[]): Origin {
    if (type === 'PTR' && (isSubdomain(zone, 'in-addr.arpa.') || isSubdomain(zone, 'ip6.arpa.'))) {
      const target = data[0];
      const targetZone = target !== undefined ? this.zones.find((z) => !isSubdomain(z, 'arpa.') && isSubdomain(target.toLowerCase(), z)) : undefined;
      return target !== undefined && targetZone !== undefined ? this.of(targetZone, target, 'A', []) : NONE;
    }
    const owner = bare(name);
    const apex = bare(zone);
    if (owner === apex || (apex !== '' && !owner.endsWith(`.${apex}`))) return NONE;
    const labels = (apex === '' ? owner : owner.slice(0, -apex.length - 1)).split('.');
    const n = labels.length;
    if (n >= 3 && labels[n - 1] === 'svc') return this.service(labels[n - 2]!, labels[n - 3]!, labels.slice(0, n - 3));
    if (n === 3 && labels[2] === 'pod') return this.podAt(labels[1]!, labels[0]!);
    const edge = this.edgeHost(owner);
    if (edge) return { namespace: edge.object.namespace, ...edge };
    // k8s_external and a k8s_gateway Service without a hostname annotation: <svc>.<ns>.<zone>.
    if (n >= 2) {
      const svc = this.index.services.get(`${labels[n - 1]}/${labels[n - 2]}`);
      if (svc) return { namespace: labels[n - 1]!, ...svc };
    }
    return NONE;
  }

  /** A name under <svc>.<ns>.svc.<zone>: the Service, or the pod (else the slice) of an endpoint's name. */
  private service(ns: string, name: string, rest: readonly string[]): Origin {
    const svc = this.index.services.get(`${ns}/${name}`);
    if (rest.length === 1 && !rest[0]!.startsWith('_')) {
      const endpoint = this.endpoint(ns, name, rest[0]!);
      if (endpoint) return { namespace: ns, ...endpoint };
    }
    return svc ? { namespace: ns, ...svc } : { namespace: ns };
  }

  /** The object behind the endpoint `host` of Service ns/name (its hostname, else its address with dashes). */
  private endpoint(ns: string, name: string, host: string): Found | undefined {
    for (const slice of this.index.slices.get(`${ns}/${name}`) ?? []) {
      for (const e of slice.endpoints) {
        if (e.hostname !== host && !e.addresses.some((a) => dashed(a) === host)) continue;
        if (e.targetRefKind === 'Pod' && e.targetRefName !== undefined) {
          const pod = this.index.pods.get(`${ns}/${e.targetRefName}`);
          if (pod) return this.podOrWorkload(pod);
        }
        const kind = slice.mirrored ? 'Endpoints' : 'EndpointSlice';
        return { object: { kind, namespace: ns, name: slice.name }, source: slice.source };
      }
    }
    return undefined;
  }

  private podAt(ns: string, dashedIp: string): Origin {
    const key = this.index.podsByIp.get(`${ns}|${dashedIp}`);
    const pod = key !== undefined ? this.index.pods.get(key) : undefined;
    return pod ? { namespace: ns, ...this.podOrWorkload(pod) } : { namespace: ns };
  }

  /** A pod written in the manifests, or the workload a derived pod comes from. */
  private podOrWorkload(pod: PodPlace): Found {
    if (pod.derived && pod.owner) {
      const direct = this.index.workloads.get(`${pod.owner.kind}/${pod.namespace}/${pod.owner.name}`);
      if (direct) return direct;
      // A Deployment's pods are owned by its ReplicaSet, <deployment>-<hash>.
      const cut = pod.owner.name.lastIndexOf('-');
      const deployment = cut > 0 ? this.index.workloads.get(`Deployment/${pod.namespace}/${pod.owner.name.slice(0, cut)}`) : undefined;
      if (deployment) return deployment;
    }
    return { object: { kind: 'Pod', namespace: pod.namespace, name: pod.name }, source: pod.source };
  }

  /** The edge object publishing `owner`, or the wildcard host covering it. */
  private edgeHost(owner: string): Found | undefined {
    const exact = this.index.hosts.get(owner);
    if (exact) return exact;
    const dot = owner.indexOf('.');
    return dot > 0 ? this.index.hosts.get(`*${owner.slice(dot)}`) : undefined;
  }
}

/** An address as an endpoint's or pod's DNS label: IPv4 dots and IPv6 colons become dashes. */
function dashed(address: string): string {
  return address.replace(/[.:]/g, '-');
}
