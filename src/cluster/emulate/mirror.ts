// Endpoints -> EndpointSlice mirroring, as the endpointslicemirroring controller does it:
// one slice per subset and address type, labelled kubernetes.io/service-name and managed-by,
// addresses ready=true and notReadyAddresses ready=false, keeping hostname, nodeName and targetRef.
//
// Differences from the controller, because there is no live cluster:
// - Endpoints are mirrored whenever no explicit EndpointSlice claims the same Service; the real
//   controller skips Services with a selector (the EndpointSlice controller derives their slices
//   from Pods). Here Endpoints written in the manifests win over that derivation (endpoints.ts
//   generates slices only for selector Services with neither EndpointSlices nor Endpoints);
// - Endpoints whose Service does not exist are not mirrored (as in the controller), with a warning;
// - Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true are not mirrored (as in the controller).
// Slice names are deterministic ("<endpoints>-<5 hex>") instead of random generateName suffixes.

import { createHash } from 'node:crypto';
import type { Endpoint, EndpointSlice } from '../model/model.js';
import type { EndpointsAddress, EndpointsDraft } from '../admit/endpoints.js';
import { familyOf } from '../admit/services.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
const MIRROR_CONTROLLER = 'endpointslicemirroring-controller.k8s.io';
const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';

function toEndpoint(a: EndpointsAddress, ready: boolean): Endpoint {
  return {
    addresses: [a.ip],
    ready,
    ...(a.hostname !== undefined ? { hostname: a.hostname } : {}),
    ...(a.targetRefName !== undefined ? { targetRefName: a.targetRefName } : {}),
    ...(a.targetRefKind !== undefined ? { targetRefKind: a.targetRefKind } : {}),
    ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}),
  };
}

/**
 * @param explicitServices "namespace/service" keys claimed by explicit EndpointSlices.
 * @param services "namespace/name" keys of existing Services.
 */
export function mirrorEndpoints(endpoints: readonly EndpointsDraft[], explicitServices: ReadonlySet<string>, services: ReadonlySet<string>): EndpointSlice[] {
  const out: EndpointSlice[] = [];
  for (const ep of endpoints) {
    const key = `${ep.meta.namespace}/${ep.meta.name}`;
    if (explicitServices.has(key)) continue;
    if (ep.meta.labels[SKIP_MIRROR_LABEL] === 'true') continue;
    if (!services.has(key)) {
      ep.check.warn(
        `has no Service "${key}", so it is not mirrored into an EndpointSlice (the mirroring controller needs the Service); add the Service or drop the Endpoints`,
      );
      continue;
    }
    ep.subsets.forEach((subset, i) => {
      for (const addressType of ['IPv4', 'IPv6'] as const) {
        const endpointsOut: Endpoint[] = [];
        for (const a of subset.ready) if (familyOf(a.ip) === addressType) endpointsOut.push(toEndpoint(a, true));
        for (const a of subset.notReady) if (familyOf(a.ip) === addressType) endpointsOut.push(toEndpoint(a, false));
        if (endpointsOut.length === 0) continue;
        const suffix = createHash('sha256').update(`${key}/${i}/${addressType}`).digest('hex').slice(0, 5);
        const labels: Record<string, string> = {};
        for (const [k, v] of Object.entries(ep.meta.labels)) {
          // The controller drops the last-applied annotation and never copies these labels.
          if (k !== SERVICE_NAME_LABEL && k !== MANAGED_BY_LABEL) labels[k] = v;
        }
        labels[SERVICE_NAME_LABEL] = ep.meta.name;
        labels[MANAGED_BY_LABEL] = MIRROR_CONTROLLER;
        out.push({
          name: `${ep.meta.name}-${suffix}`,
          namespace: ep.meta.namespace,
          labels,
          annotations: {},
          source: ep.meta.source,
          serviceName: ep.meta.name,
          addressType,
          ports: subset.ports,
          endpoints: endpointsOut,
          mirrored: true,
        });
      }
    });
  }
  return out;
}
