// Reading EndpointSlices and Endpoints as the API server admits them, kept compact: a cluster
// holds many more endpoints than anything else (emulate/mirror.ts turns Endpoints into slices).
import type { Endpoint, EndpointPort, EndpointSlice, ObjectMeta } from '../model/model.js';
import { formatIp, parseIp } from '../../pkg/ip.js';
import { type Checker, isDns1123Label, isDns1123Subdomain, isObj, type Obj, specialIpProblem } from './validate.js';
import { jsonExcerpt } from '../model/finding.js';
import { tight } from './objects.js';

export interface EndpointsAddress {
  readonly ip: string;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly targetRefName?: string;
  readonly targetRefKind?: string;
}

export interface EndpointsSubset {
  readonly ready: EndpointsAddress[];
  readonly notReady: EndpointsAddress[];
  readonly ports: EndpointPort[];
}

/** A v1 Endpoints object, to be mirrored into EndpointSlices. */
export interface EndpointsDraft {
  readonly meta: ObjectMeta;
  readonly subsets: EndpointsSubset[];
  readonly check: Checker;
}

/** At most 20000 ports in an EndpointSlice (pkg/apis/discovery/validation maxPorts; older releases had 100). */
const SLICE_MAX_PORTS = 20000;

/** At most 1000 endpoints in an EndpointSlice (maxEndpoints), 100 addresses each (maxAddresses). */
const SLICE_MAX_ENDPOINTS = 1000;

const SLICE_MAX_ADDRESSES = 100;

/**
 * Ports of an EndpointSlice ('slice': discovery validatePorts), of a v1 Endpoints subset
 * ('endpoints': validateEndpointPort, from validateEndpointSubsets) or of a ServiceImport ('none').
 */
export function readEndpointPorts(parent: Obj, check: Checker, path: string, rules: 'slice' | 'endpoints' | 'none'): EndpointPort[] {
  const out: EndpointPort[] = [];
  const raw = check.arr(parent, 'ports', path);
  if (rules === 'slice' && raw.length > SLICE_MAX_PORTS) {
    check.error(`${path} lists ${raw.length} ports; an EndpointSlice holds at most ${SLICE_MAX_PORTS} (validatePorts), split it`, path, 'too-many-ports');
  }
  // validatePorts: names are unique, the empty name included (it defaults to "").
  const names = rules === 'slice' ? new Map<string, number>() : undefined;
  raw.forEach((p, i) => {
    const pp = `${path}[${i}]`;
    if (!isObj(p)) {
      check.error(`${pp} must be a mapping`, pp);
      return;
    }
    const name = check.str(p, 'name', `${pp}.name`) ?? '';
    if (rules !== 'none') {
      if (name !== '' && !isDns1123Label(name)) {
        check.error(
          `${pp}.name ${jsonExcerpt(name)} is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', such as "http"`,
          `${pp}.name`,
          'invalid-port-name',
        );
      } else if (rules === 'endpoints' && name === '' && raw.length > 1) {
        check.error(`${pp}.name is missing; a subset with more than one port must name every port (validateEndpointPort)`, pp, 'unnamed-port');
      }
      const prev = names?.get(name);
      if (prev !== undefined) {
        check.error(
          `${pp}.name ${jsonExcerpt(name)} is also the name of ${path}[${prev}]; port names must be unique in a slice (validatePorts), rename one`,
          check.written(`${pp}.name`, pp),
          'duplicate-port-name',
        );
      } else names?.set(name, i);
    }
    const protocol = check.protocol(p, 'protocol', `${pp}.protocol`);
    const port = check.port(p, 'port', `${pp}.port`);
    if (port === undefined) {
      if (p['port'] === undefined || p['port'] === null) {
        // validateEndpointPort: a v1 Endpoints port is a required number (IsValidPortNum). A slice
        // port without a number means all ports, which DNS cannot publish.
        if (rules === 'endpoints') check.error(`${pp}.port is missing; every Endpoints port needs a port number (1-65535)`, pp, 'port-required');
        else check.warn(`${pp} has no port number and is ignored`, pp);
      }
      return;
    }
    out.push({ name, protocol, port });
  });
  return tight(out);
}

function targetRef(o: Obj, check: Checker, path: string): { targetRefName?: string; targetRefKind?: string } {
  const t = o['targetRef'];
  if (isObj(t)) {
    // The usual case, without building the field paths the checker needs only for a finding.
    const name = t['name'];
    const kind = t['kind'];
    if ((name === undefined || typeof name === 'string') && (kind === undefined || typeof kind === 'string')) {
      return { ...(name ? { targetRefName: name } : {}), ...(kind ? { targetRefKind: kind } : {}) };
    }
  }
  const tr = check.obj(o, 'targetRef', `${path}.targetRef`);
  const name = check.str(tr, 'name', `${path}.targetRef.name`);
  const kind = check.str(tr, 'kind', `${path}.targetRef.kind`);
  return { ...(name ? { targetRefName: name } : {}), ...(kind ? { targetRefKind: kind } : {}) };
}

/** Whether a dotted name has a label over 63 characters (IsFullyQualifiedDomainName tests each label). */
function longLabel(name: string): boolean {
  let start = 0;
  for (let i = 0; i <= name.length; i++) {
    if (i === name.length || name.charCodeAt(i) === 46) {
      if (i - start > 63) return true;
      start = i + 1;
    }
  }
  return false;
}

function hostnameOf(o: Obj, check: Checker, path: string): string | undefined {
  const h = check.str(o, 'hostname', path);
  if (h === undefined || h === '') return undefined;
  if (!isDns1123Label(h)) {
    // ValidateEndpointSlice (validateEndpoints) and validateEndpointAddress: ValidateDNS1123Label.
    check.error(`${path} ${jsonExcerpt(h)} is not a valid DNS-1123 label; use lower-case letters, digits and '-', at most 63`, path, 'invalid-hostname');
  }
  return h;
}

export function toEndpointSlice(o: Obj, meta: ObjectMeta, check: Checker, apiVersion: string, intern: (s: string) => string = (s) => s): EndpointSlice {
  const addressTypeText = check.str(o, 'addressType', 'addressType');
  let addressType: EndpointSlice['addressType'] = 'IPv4';
  if (addressTypeText === 'IPv4' || addressTypeText === 'IPv6' || addressTypeText === 'FQDN') addressType = addressTypeText;
  // ValidateEndpointSlice (validateAddressType): required, one of IPv4, IPv6, FQDN.
  else if (addressTypeText === undefined) check.error('addressType is missing; set it to IPv4, IPv6 or FQDN', undefined, 'address-type-required');
  else check.error(`addressType ${jsonExcerpt(addressTypeText)} is not valid; use IPv4, IPv6 or FQDN`, 'addressType', 'address-type-required');
  const beta = apiVersion.endsWith('/v1beta1');
  const endpoints: Endpoint[] = [];
  // Slices hold most of a large cluster's objects: a field of the expected type is read directly,
  // and only one that is not goes through the checker (same findings), so the field paths of
  // messages are built only for a finding. The admission checks below read what was read
  // anyway (the parsed address bytes, the node name) and allocate nothing per endpoint.
  const rawEndpoints = check.arr(o, 'endpoints', 'endpoints');
  if (rawEndpoints.length > SLICE_MAX_ENDPOINTS) {
    check.error(
      `endpoints lists ${rawEndpoints.length} endpoints; an EndpointSlice holds at most ${SLICE_MAX_ENDPOINTS} (validateEndpoints), split it`,
      'endpoints',
      'too-many-endpoints',
    );
  }
  // The last node name found valid: a slice's endpoints mostly share a few nodes.
  let validNode: string | undefined;
  rawEndpoints.forEach((e, i) => {
    if (!isObj(e)) {
      check.error(`endpoints[${i}] must be a mapping with "addresses"`, `endpoints[${i}]`);
      return;
    }
    const addresses: string[] = [];
    const addrs = e['addresses'];
    const rawAddrs = Array.isArray(addrs) ? addrs : check.arr(e, 'addresses', `endpoints[${i}].addresses`);
    // validateEndpoints: at least 1 address, at most 100.
    if (rawAddrs.length === 0) check.error(`endpoints[${i}].addresses is empty; list the endpoint's address`, `endpoints[${i}]`, 'addresses-required');
    else if (rawAddrs.length > SLICE_MAX_ADDRESSES) {
      check.error(
        `endpoints[${i}].addresses lists ${rawAddrs.length} addresses; an endpoint has at most ${SLICE_MAX_ADDRESSES} (validateEndpoints)`,
        `endpoints[${i}].addresses`,
        'too-many-addresses',
      );
    }
    rawAddrs.forEach((a, j) => {
      if (addressType === 'FQDN') {
        // validateEndpoints: IsFullyQualifiedDomainName (one trailing dot allowed, a DNS-1123
        // subdomain of at least two labels).
        const name = typeof a === 'string' && a.endsWith('.') ? a.slice(0, -1) : a;
        if (typeof name !== 'string' || !isDns1123Subdomain(name) || !name.includes('.') || longLabel(name)) {
          const ap = `endpoints[${i}].addresses[${j}]`;
          check.error(
            `${ap} ${jsonExcerpt(a)} is not a fully qualified DNS name; use a lower-case name of at least two labels such as db.example.com`,
            ap,
            'invalid-address',
          );
        } else addresses.push(a as string);
        return;
      }
      const p = typeof a === 'string' ? parseIp(a) : undefined;
      if (p === undefined) {
        check.ip(a, `endpoints[${i}].addresses[${j}]`); // the finding
        return;
      }
      const ip = formatIp(p);
      // The family from the canonical text: ':' only in IPv6. Searching it also flattens the
      // text, which formatIp builds from pieces: the model keeps one flat string per address.
      if ((ip.includes(':') ? 'IPv6' : 'IPv4') !== addressType) {
        const ap = `endpoints[${i}].addresses[${j}]`;
        check.error(
          `${ap} ${jsonExcerpt(a)} is not an ${addressType} address but the slice has addressType ${addressType}; put it in a slice of the right addressType`,
          ap,
          'invalid-address',
        );
        return;
      }
      // validateEndpoints: ValidateEndpointIP (once ValidateNonSpecialIP).
      const special = specialIpProblem(p.bytes);
      if (special !== undefined) {
        const ap = `endpoints[${i}].addresses[${j}]`;
        check.error(`${ap} ${ip} ${special}, which the API server rejects for an endpoint; use the pod's or node's address`, ap, 'special-ip');
        return;
      }
      addresses.push(ip);
    });
    const c = e['conditions'];
    const cond = isObj(c) ? c : check.obj(e, 'conditions', `endpoints[${i}].conditions`);
    const r = cond['ready'];
    const ready = typeof r === 'boolean' ? r : check.bool(cond, 'ready', `endpoints[${i}].conditions.ready`);
    const hostname = e['hostname'] === undefined ? undefined : hostnameOf(e, check, `endpoints[${i}].hostname`);
    // v1beta1 validateEndpoints: topology is checked as labels (ValidateLabels).
    const topology = beta ? check.labels(e, 'topology', `endpoints[${i}].topology`) : {};
    const z = e['zone'];
    const zone = (typeof z === 'string' ? z : check.str(e, 'zone', `endpoints[${i}].zone`)) ?? topology['topology.kubernetes.io/zone'];
    const nn = e['nodeName'];
    const nodeName = (typeof nn === 'string' ? nn : check.str(e, 'nodeName', `endpoints[${i}].nodeName`)) ?? topology['kubernetes.io/hostname'];
    if (typeof nn === 'string' && nn !== validNode) {
      // validateEndpoints: ValidateNodeName (a DNS-1123 subdomain).
      if (isDns1123Subdomain(nn)) validNode = nn;
      else
        check.error(
          `endpoints[${i}].nodeName ${jsonExcerpt(nn)} is not a valid node name (DNS-1123 subdomain); use the Node's name`,
          `endpoints[${i}].nodeName`,
          'invalid-node-name',
        );
    }
    const t = e['targetRef'];
    const ref = t === undefined || t === null ? {} : targetRef(e, check, `endpoints[${i}]`);
    const kind = ref.targetRefKind && intern(ref.targetRefKind);
    endpoints.push(
      endpointOf(tight(addresses), ready, hostname, ref.targetRefName, kind, zone ? intern(zone) : undefined, nodeName ? intern(nodeName) : undefined),
    );
  });
  const serviceName = meta.labels['kubernetes.io/service-name'] ?? meta.labels['multicluster.kubernetes.io/service-name'];
  if (serviceName === undefined) {
    check.warn('has no kubernetes.io/service-name label, so no Service owns it; add the label with the Service name', 'metadata.labels');
  }
  return {
    ...meta,
    ...(serviceName !== undefined ? { serviceName } : {}),
    addressType,
    ports: readEndpointPorts(o, check, 'ports', 'slice'),
    endpoints: tight(endpoints),
    mirrored: false,
  };
}

/**
 * One endpoint, its fields in the model's order. The usual ones (what the EndpointSlice
 * controller writes) are one object literal, all fields in the object itself; others are built
 * field by field. Values that are absent stay absent.
 */
function endpointOf(
  addresses: readonly string[],
  ready: boolean | undefined,
  hostname: string | undefined,
  targetRefName: string | undefined,
  targetRefKind: string | undefined,
  zone: string | undefined,
  nodeName: string | undefined,
): Endpoint {
  if (ready !== undefined && hostname === undefined && targetRefName !== undefined && targetRefKind !== undefined && nodeName !== undefined) {
    return zone !== undefined
      ? { addresses, ready, targetRefName, targetRefKind, zone, nodeName }
      : { addresses, ready, targetRefName, targetRefKind, nodeName };
  }
  return {
    addresses,
    ...(ready !== undefined ? { ready } : {}),
    ...(hostname !== undefined ? { hostname } : {}),
    ...(targetRefName ? { targetRefName } : {}),
    ...(targetRefKind ? { targetRefKind } : {}),
    ...(zone ? { zone } : {}),
    ...(nodeName ? { nodeName } : {}),
  };
}

export function toEndpoints(o: Obj, meta: ObjectMeta, check: Checker): EndpointsDraft {
  const subsets: EndpointsSubset[] = [];
  check.arr(o, 'subsets', 'subsets').forEach((s, i) => {
    const path = `subsets[${i}]`;
    if (!isObj(s)) {
      check.error(`${path} must be a mapping`, path);
      return;
    }
    const readAddrs = (key: string): EndpointsAddress[] => {
      const out: EndpointsAddress[] = [];
      check.arr(s, key, `${path}.${key}`).forEach((a, j) => {
        const ap = `${path}.${key}[${j}]`;
        if (!isObj(a)) {
          check.error(`${ap} must be a mapping with "ip"`, ap);
          return;
        }
        const ip = check.ip(a['ip'], `${ap}.ip`);
        if (ip === undefined) return;
        // validateEndpointAddress: ValidateEndpointIP (once ValidateNonSpecialIP), and nodeName
        // by ValidateNodeName.
        const special = specialIpProblem(parseIp(ip)!.bytes);
        if (special !== undefined) {
          check.error(`${ap}.ip ${ip} ${special}, which the API server rejects for an endpoint; use the pod's or node's address`, `${ap}.ip`, 'special-ip');
          return;
        }
        const hostname = hostnameOf(a, check, `${ap}.hostname`);
        const nodeName = check.str(a, 'nodeName', `${ap}.nodeName`);
        if (nodeName !== undefined && nodeName !== '' && !isDns1123Subdomain(nodeName)) {
          check.error(
            `${ap}.nodeName ${jsonExcerpt(nodeName)} is not a valid node name (DNS-1123 subdomain); use the Node's name`,
            `${ap}.nodeName`,
            'invalid-node-name',
          );
        }
        out.push({ ip, ...(hostname ? { hostname } : {}), ...(nodeName ? { nodeName } : {}), ...targetRef(a, check, ap) });
      });
      return out;
    };
    // validateEndpointSubsets: a subset lists addresses or notReadyAddresses.
    const none = (k: string): boolean => !Array.isArray(s[k]) || (s[k] as unknown[]).length === 0;
    if (none('addresses') && none('notReadyAddresses')) {
      check.error(`${path} lists no addresses; give it addresses or notReadyAddresses, or remove it`, path, 'addresses-required');
    }
    subsets.push({ ready: readAddrs('addresses'), notReady: readAddrs('notReadyAddresses'), ports: readEndpointPorts(s, check, `${path}.ports`, 'endpoints') });
  });
  return { meta, subsets, check };
}
