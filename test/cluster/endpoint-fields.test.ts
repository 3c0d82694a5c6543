// Endpoints are built as one object literal when they have what the EndpointSlice controller
// writes, and field by field otherwise; either way a field absent from the manifest is absent
// from the model (not undefined), and the fields come in the model's order.
import { describe, expect, it } from 'vitest';
import { buildModel } from '../../src/cluster/load.js';

const ORDER = ['addresses', 'ready', 'hostname', 'targetRefName', 'targetRefKind', 'zone', 'nodeName'];

describe('endpoint fields', () => {
  it('keeps every combination of written fields, in order, and nothing else', () => {
    const optional = [
      ['conditions', { ready: false }, 'ready', false],
      ['hostname', 'h', 'hostname', 'h'],
      ['targetRef', { kind: 'Pod', name: 'p' }, 'targetRefName', 'p'],
      ['zone', 'zone-a', 'zone', 'zone-a'],
      ['nodeName', 'kind-worker', 'nodeName', 'kind-worker'],
    ] as const;
    const endpoints: object[] = [];
    const expected: Record<string, unknown>[] = [];
    for (let mask = 0; mask < 1 << optional.length; mask++) {
      const e: Record<string, unknown> = { addresses: [`10.1.0.${mask + 1}`] };
      const want: Record<string, unknown> = { addresses: [`10.1.0.${mask + 1}`] };
      optional.forEach(([key, value, field, read], i) => {
        if (!(mask & (1 << i))) return;
        e[key] = value;
        want[field] = read;
        if (field === 'targetRefName') want['targetRefKind'] = 'Pod';
      });
      endpoints.push(e);
      expected.push(Object.fromEntries(ORDER.filter((k) => k in want).map((k) => [k, want[k]])));
    }
    const items = [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' }, spec: { ports: [{ port: 80 }] } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 's-1', namespace: 'n', labels: { 'kubernetes.io/service-name': 's' } },
        addressType: 'IPv4',
        ports: [{ port: 80 }],
        endpoints,
      },
    ];
    const { model } = buildModel([{ file: 'l.json', text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) }]);
    const got = model.endpointSlices[0]!.endpoints;
    expect(got.map((e) => Object.keys(e))).toEqual(expected.map((e) => Object.keys(e)));
    expect(got).toEqual(expected);
  });
});
