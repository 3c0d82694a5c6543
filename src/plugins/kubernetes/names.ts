// Splits a query name below a cluster zone into the parts of the Kubernetes DNS schema, the way
// CoreDNS's plugin/kubernetes/parse.go does (kept shape-for-shape so its quirks carry over).

export interface RecordRequest {
  /** 'svc' or 'pod'; '' for the apex, `svc.<zone>` and `pod.<zone>`. */
  podOrSvc: '' | 'svc' | 'pod';
  namespace: string;
  service: string;
  endpoint: string;
  /** Named port and protocol of `_port._proto.svc...`, underscores stripped. */
  port: string;
  protocol: string;
  /** Cluster id of `ep.cluster.svc...` in multicluster zones. */
  cluster: string;
  /** Topology zone and directive of `Z.pin._zone.svc...` names (zonal option). */
  topologyZone?: string;
  zonalMode?: 'pin' | 'prefer';
}

export const INVALID = 'invalid' as const;

const ZONE_LABEL = '_zone';

function stripUnderscore(s: string): string {
  return s.startsWith('_') ? s.slice(1) : s;
}

/**
 * The lowercased part of `qname` left of `zone`, without the dot between them ('' for the apex):
 * what CoreDNS splits into labels, kept as one string so a query builds no array of them.
 */
export function belowZone(qname: string, zone: string): string {
  if (qname.length <= zone.length) return '';
  return zone === '.' ? qname.slice(0, -1) : qname.slice(0, qname.length - zone.length - 1);
}

/**
 * Where the label ending at `end` (exclusive) starts, less one: the dot before it, or -1. A loop,
 * not lastIndexOf, which V8 runs as a call into C++ (a few per query on the miss path).
 */
function dotBefore(rel: string, end: number): number {
  let i = end - 1;
  while (i >= 0 && rel.charCodeAt(i) !== 46) i--;
  return i;
}

/** True when rel[0, end) holds at least `n` dots. */
function atLeastDots(rel: string, end: number, n: number): boolean {
  for (let at = end; n > 0; n--) {
    at = dotBefore(rel, at);
    if (at < 0) return false;
  }
  return true;
}

/**
 * `rel` is the lowercased name left of the zone (belowZone), its labels split at every dot as
 * CoreDNS's dns.SplitDomainName would. They are read from the right, each only when the schema
 * needs it, so a name the schema rejects (most of a pod's search walk) costs a few index scans.
 */
export function parseRequest(rel: string, multicluster: boolean, zonal: boolean): RecordRequest | typeof INVALID {
  if (rel === '' || rel === 'svc' || rel === 'pod') return { podOrSvc: '', namespace: '', service: '', endpoint: '', port: '', protocol: '', cluster: '' };
  let dot = dotBefore(rel, rel.length);
  const kind = rel.length - dot === 4 ? (rel.endsWith('svc') ? 'svc' : rel.endsWith('pod') ? 'pod' : undefined) : undefined;
  if (kind === undefined) return INVALID;
  // Six labels or more are invalid unless zonal: most of a pod's search walk ends here.
  if (!(zonal && !multicluster && kind === 'svc') && atLeastDots(rel, dot, 4)) return INVALID;
  const r: RecordRequest = { podOrSvc: kind, namespace: '', service: '', endpoint: '', port: '', protocol: '', cluster: '' };
  if (dot < 0) return r;
  let end = dot;
  dot = dotBefore(rel, end);
  r.namespace = rel.slice(dot + 1, end);
  if (dot < 0) return r;
  end = dot;
  dot = dotBefore(rel, end);
  r.service = rel.slice(dot + 1, end);
  if (dot < 0) return r;
  // Left of the service: one label (endpoint), two (port and protocol, or endpoint and
  // cluster), or a zonal name; anything longer is invalid.
  end = dot;
  const d1 = dotBefore(rel, end);
  const d2 = d1 < 0 ? -1 : dotBefore(rel, d1);
  // Zonal names carry the topology zone (which may itself contain dots) left of a directive.
  if (zonal && !multicluster && kind === 'svc' && rel.slice(d1 + 1, end) === ZONE_LABEL) {
    if (d2 < 0) return INVALID;
    const mode = rel.slice(d2 + 1, d1);
    if (mode !== 'pin' && mode !== 'prefer') return INVALID;
    r.zonalMode = mode;
    r.topologyZone = rel.slice(0, d2);
    return r;
  }
  if (d1 < 0) {
    r.endpoint = rel.slice(0, end);
    return r;
  }
  if (d2 >= 0) return INVALID;
  const left = rel.slice(0, d1);
  const right = rel.slice(d1 + 1, end);
  if (!multicluster || right.startsWith('_') || left.startsWith('_')) {
    r.protocol = stripUnderscore(right);
    r.port = stripUnderscore(left);
  } else {
    r.cluster = right;
    r.endpoint = left;
  }
  return r;
}
