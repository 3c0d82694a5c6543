// Node ports, as the API server validates and allocates them: NodePort and LoadBalancer Services
// get one per port from the node-port range when the manifest leaves it out (or writes 0); a
// nodePort outside the range, used by two Services, or on a type that has none is an error (a
// Service dumped from a cluster, with server-set metadata, keeps one outside the range: a warning).
// Allocation is a hash of "namespace/name/port index" with linear probing, after every written
// port is reserved, so results do not depend on file order.
import { createHash } from 'node:crypto';
import type { Finding } from '../model/finding.js';
import type { Service, ServicePort } from '../model/model.js';
import type { ServiceDraft } from '../admit/services.js';
import { FreeOffsets } from './free-offsets.js';
import { admittedServices } from './allocate.js';
import type { Checker } from '../admit/validate.js';

const DEFAULT_NODE_PORT_RANGE = '30000-32767';

function parsePortRange(text: string): { lo: number; hi: number } | undefined {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  if (!m) return undefined;
  const lo = Number(m[1]);
  const hi = Number(m[2]);
  return lo >= 1 && hi <= 65535 && lo <= hi ? { lo, hi } : undefined;
}

const hasNodePorts = (s: Service): boolean => s.type === 'NodePort' || s.type === 'LoadBalancer';

export function assignNodePorts(
  services: readonly Service[],
  rangeText: string | undefined,
  findings: Finding[],
  /** Line of a field of a Service, when the reader kept field positions. */
  lineOf: (svc: Service, path: string) => number = (svc) => svc.source.line,
  /** LoadBalancer Services with spec.allocateLoadBalancerNodePorts: false get none allocated. */
  withoutNodePorts: ReadonlySet<string> = new Set(),
): Service[] {
  const range = parsePortRange(rangeText ?? DEFAULT_NODE_PORT_RANGE);
  if (!range) {
    findings.push({
      file: '<options>',
      line: 0,
      severity: 'error',
      message: `node port range "${rangeText}" is not valid; write LOW-HIGH such as 30000-32767 (--service-node-port-range)`,
    });
    return [...services];
  }
  const owner = new Map<number, Service>();
  // Only Services that write a node port have anything to check (most have none).
  const bySource = services
    .filter((s) => s.ports.some((p) => p.nodePort !== undefined))
    .sort((a, b) => (a.source.file < b.source.file ? -1 : a.source.file > b.source.file ? 1 : a.source.line - b.source.line));
  for (const svc of bySource) {
    const where = `Service "${svc.namespace}/${svc.name}"`;
    const seenHere = new Map<number, string>();
    svc.ports.forEach((p, i) => {
      if (p.nodePort === undefined) return;
      // Through the Service's checker when there is one (it counts the object's errors: an
      // object with any is rejected); the finding is the same either way.
      const checker = (lineOf as NodePortLines).checkerOf?.(svc);
      const err = (message: string, code?: string): void => {
        const path = `spec.ports[${i}].nodePort`;
        if (checker) checker.error(`${path} ${p.nodePort}: ${message}`, path, code);
        else
          findings.push({
            file: svc.source.file,
            line: lineOf(svc, path),
            severity: 'error',
            message: `${where}: ${path} ${p.nodePort}: ${message}`,
            ...(code !== undefined ? { code } : {}),
          });
      };
      if (!hasNodePorts(svc)) {
        // ValidateService: "may not be used when `type` is 'ClusterIP'".
        err(`may not be used when type is ${svc.type} (the API server rejects it); remove it or set spec.type: NodePort`, 'node-port-type');
        return;
      }
      if (p.nodePort < range.lo || p.nodePort > range.hi) {
        const lo = Math.min(range.lo, p.nodePort);
        const hi = Math.max(range.hi, p.nodePort);
        if (admittedServices.has(svc)) {
          // A dump of a cluster: its API server allocated this port from that cluster's range.
          const path = `spec.ports[${i}].nodePort`;
          const message = `${path} ${p.nodePort}: is outside the node port range ${range.lo}-${range.hi}, but the object was read from a cluster (it has server-set metadata), so it is kept; configure --service-node-port-range ${lo}-${hi}`;
          if (checker) checker.warn(message, path, 'node-port-out-of-range');
          else
            findings.push({
              file: svc.source.file,
              line: lineOf(svc, path),
              severity: 'warning',
              code: 'node-port-out-of-range',
              message: `${where}: ${message}`,
            });
        } else {
          // The node port allocator (pkg/registry/core/service/portallocator) rejects a port
          // outside the range: "provided port is not in the valid range".
          err(
            `is not in the valid node port range ${range.lo}-${range.hi}: the API server rejects it; pick a port in the range, omit it to have one allocated, or configure --service-node-port-range ${lo}-${hi}`,
            'node-port-out-of-range',
          );
          return;
        }
      }
      // One Service may use a node port once per protocol (TCP and UDP on 53, say).
      const prevProto = seenHere.get(p.nodePort);
      if (prevProto !== undefined) {
        // ValidateService: no duplicate (protocol, nodePort) pair.
        if (prevProto === p.protocol) err(`is used twice in this Service for ${p.protocol}; each port needs its own nodePort`, 'duplicate-node-port');
        return;
      }
      seenHere.set(p.nodePort, p.protocol);
      const prev = owner.get(p.nodePort);
      if (prev) {
        err(
          `is already allocated to Service "${prev.namespace}/${prev.name}" (${prev.source.file}:${prev.source.line}); node ports are unique across the cluster, pick another or omit it`,
        );
        return;
      }
      owner.set(p.nodePort, svc);
    });
  }
  const size = range.hi - range.lo + 1;
  // Linear probing past taken ports, in amortised constant time however full the range is.
  const free = new FreeOffsets(size);
  for (const port of owner.keys()) if (port >= range.lo && port <= range.hi) free.take(port - range.lo);
  return services.map((svc) => {
    if (!hasNodePorts(svc) || svc.ports.every((p) => p.nodePort !== undefined)) return svc;
    if (svc.type === 'LoadBalancer' && withoutNodePorts.has(`${svc.namespace}/${svc.name}`)) return svc;
    const ports: ServicePort[] = svc.ports.map((p, i) => {
      if (p.nodePort !== undefined) return p;
      const off = free.firstFreeFrom(createHash('sha256').update(`${svc.namespace}/${svc.name}/${i}`).digest().readUInt32BE(0) % size);
      if (off !== undefined) {
        free.take(off);
        return { ...p, nodePort: range.lo + off };
      }
      findings.push({
        ...svc.source,
        severity: 'error',
        message: `Service "${svc.namespace}/${svc.name}": no node port left in ${range.lo}-${range.hi} for spec.ports[${i}]; widen --service-node-port-range`,
      });
      return p;
    });
    return { ...svc, ports };
  });
}

/** Field lines of Services' manifests and, when known, the checker each Service was read with. */
export type NodePortLines = ((svc: Service, path: string) => number) & { checkerOf?: (svc: Service) => Checker | undefined };

/** Field lines of the Services' manifests, and their checkers, from their drafts. */
export function nodePortLines(drafts: readonly ServiceDraft[]): NodePortLines {
  // Built on the first finding: a load without node port findings never needs it.
  let byKey: Map<string, Checker> | undefined;
  const checkerOf = (svc: Service): Checker | undefined => {
    byKey ??= new Map(drafts.map((d) => [`${d.meta.namespace}/${d.meta.name}`, d.check]));
    return byKey.get(`${svc.namespace}/${svc.name}`);
  };
  return Object.assign((svc: Service, path: string): number => checkerOf(svc)?.lineOf(path) ?? svc.source.line, { checkerOf });
}
