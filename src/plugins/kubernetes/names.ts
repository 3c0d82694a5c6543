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

/** `labels` are the lowercased labels left of the zone, leftmost first. */
export function parseRequest(labels: readonly string[], multicluster: boolean, zonal: boolean): RecordRequest | typeof INVALID {
  const r: RecordRequest = { podOrSvc: '', namespace: '', service: '', endpoint: '', port: '', protocol: '', cluster: '' };
  const base = labels.join('.');
  if (base === '' || base === 'svc' || base === 'pod') return r;
  let last = labels.length - 1;
  const kind = labels[last]!;
  if (kind !== 'svc' && kind !== 'pod') return INVALID;
  r.podOrSvc = kind;
  if (--last < 0) return r;
  r.namespace = labels[last]!;
  if (--last < 0) return r;
  r.service = labels[last]!;
  if (--last < 0) return r;
  // Zonal names carry the topology zone (which may itself contain dots) left of a directive.
  if (zonal && !multicluster && kind === 'svc' && labels[last] === ZONE_LABEL) {
    if (last < 2) return INVALID;
    const mode = labels[last - 1];
    if (mode !== 'pin' && mode !== 'prefer') return INVALID;
    r.zonalMode = mode;
    r.topologyZone = labels.slice(0, last - 1).join('.');
    return r;
  }
  switch (last) {
    case 0:
      r.endpoint = labels[0]!;
      return r;
    case 1: {
      const left = labels[0]!;
      const right = labels[1]!;
      if (!multicluster || right.startsWith('_') || left.startsWith('_')) {
        r.protocol = stripUnderscore(right);
        r.port = stripUnderscore(left);
      } else {
        r.cluster = right;
        r.endpoint = left;
      }
      return r;
    }
    default:
      return INVALID;
  }
}
