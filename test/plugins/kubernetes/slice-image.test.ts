// The kubernetes store's slice image (slice-image.ts): a model with IPv4 and IPv6 endpoints, an
// IP held by endpoints of several slices and services, hostnames, pod names, zones, named and
// unnamed ports, not-ready endpoints and empty slices reads back as the object form the store
// gave before the image (written out below), whichever way the image was made: from the model,
// from parts, or handed over with its buffers transferred as the loader thread does.
import { describe, expect, it } from 'vitest';
import type { ClusterModel, EndpointSlice } from '../../../src/cluster/model/model.js';
import { parseKubernetes } from '../../../src/plugins/kubernetes/config.js';
import { imageBuffers, ipv4Number, SliceImageBuilder, SliceView } from '../../../src/plugins/kubernetes/slice-image.js';
import { KubernetesStore, StoreAssembler, storeImage } from '../../../src/plugins/kubernetes/store.js';
import { serviceImageBuffers } from '../../../src/plugins/kubernetes/service-table.js';

const source = { file: 'test.yaml', line: 1 };
const http = { name: 'http', protocol: 'TCP', port: 8080 };
const dns = { name: '', protocol: 'UDP', port: 53 };

function slice(
  namespace: string,
  name: string,
  serviceName: string | undefined,
  ports: EndpointSlice['ports'],
  endpoints: EndpointSlice['endpoints'],
  addressType: EndpointSlice['addressType'] = 'IPv4',
): EndpointSlice {
  const labels: Record<string, string> = serviceName ? { 'kubernetes.io/service-name': serviceName } : {};
  return { name, namespace, labels, annotations: {}, source, ...(serviceName ? { serviceName } : {}), addressType, ports, endpoints, mirrored: false };
}

const model: ClusterModel = {
  namespaces: new Map([
    ['shop', { name: 'shop', labels: {} }],
    ['other', { name: 'other', labels: {} }],
  ]),
  services: [],
  endpointSlices: [
    slice(
      'shop',
      'web-a',
      'web',
      [http, dns],
      [
        { addresses: ['10.0.0.1'], ready: true, targetRefName: 'web-0', zone: 'Zone-A' },
        { addresses: ['10.0.0.2'], ready: false, targetRefName: 'web-1' },
        { addresses: ['10.0.0.3'], hostname: 'h3' },
        { addresses: ['10.0.0.9'], targetRefName: 'x'.repeat(64) },
        { addresses: ['10.0.0.5', '10.0.0.6'], targetRefName: 'web-2' },
      ],
    ),
    slice(
      'other',
      'db-x',
      'db',
      [{ name: 'pg', protocol: 'TCP', port: 5432 }],
      [{ addresses: ['fd00::1'], targetRefName: 'db-0' }, { addresses: ['FD00:0:0::2'] }, { addresses: ['fd00::'], ready: true, zone: 'zone-c' }],
      'IPv6',
    ),
    slice('shop', 'web-b', 'web', [], []),
    // The same ports as web-a in another list: stored once, read back equal.
    slice(
      'shop',
      'api-a',
      'api',
      [{ ...http }, { ...dns }],
      [
        { addresses: ['10.0.0.1'], targetRefName: 'api-0' },
        { addresses: ['10.0.0.3'], hostname: 'h3b', zone: 'zone-b' },
      ],
    ),
    // web's slices are stored together, but 10.0.0.1's holders stay in model order: web, api, web.
    slice('shop', 'web-c', 'web', [http], [{ addresses: ['10.0.0.1'], targetRefName: 'web-0b' }]),
    slice('other', 'orphan', undefined, [http], [{ addresses: ['10.0.0.7'], targetRefName: 'o' }]),
    slice('shop', 'web-d', 'web', [http], [{ addresses: ['10.0.0.8'], ready: false }]),
  ],
  pods: [],
  serviceImports: [],
  objectCount: 7,
};

const zones = ['cluster.local.', 'in-addr.arpa.', 'ip6.arpa.'];
const directive = (block: { name: string; args: string[] }[]) => ({
  name: 'kubernetes',
  args: ['cluster.local', 'in-addr.arpa', 'ip6.arpa'],
  file: 'Corefile',
  line: 1,
  block: block.map((b) => ({ ...b, file: 'Corefile', line: 2 })),
});
const podNames = parseKubernetes(directive([{ name: 'endpoint_pod_names', args: [] }]), zones);
const plain = parseKubernetes(directive([]), zones);
const shopOnly = parseKubernetes(directive([{ name: 'namespaces', args: ['shop'] }]), zones);

const webWithPodNames = [
  {
    ports: [http, dns],
    addresses: [
      { ip: '10.0.0.1', name: 'web-0', zone: 'zone-a' },
      { ip: '10.0.0.3', name: 'h3' },
      { ip: '10.0.0.9', name: '10-0-0-9' },
      { ip: '10.0.0.5', name: 'web-2' },
      { ip: '10.0.0.6', name: 'web-2' },
    ],
    order: 1,
  },
  { ports: [], addresses: [], order: 3 },
  { ports: [http], addresses: [{ ip: '10.0.0.1', name: 'web-0b' }], order: 5 },
  { ports: [http], addresses: [], order: 7 },
];
const dbSlices = [
  {
    ports: [{ name: 'pg', protocol: 'TCP', port: 5432 }],
    addresses: [
      { ip: 'fd00::1', name: 'db-0' },
      { ip: 'FD00:0:0::2', name: 'FD00-0-0--2' },
      { ip: 'fd00::', name: 'fd00--0', zone: 'zone-c' },
    ],
    order: 2,
  },
];
const apiSlices = [
  {
    ports: [http, dns],
    addresses: [
      { ip: '10.0.0.1', name: 'api-0' },
      { ip: '10.0.0.3', name: 'h3b', zone: 'zone-b' },
    ],
    order: 4,
  },
];

/** The three ways a store gets its slices. */
function stores(cfg: typeof plain): [string, KubernetesStore][] {
  const fromModel = KubernetesStore.fromModel(model, cfg, { retainModel: false });
  const { parts, image, services } = storeImage(model, cfg);
  // As the loader thread posts it: the buffers moved, the copy read in place.
  const moved = structuredClone(image, { transfer: imageBuffers(image) });
  const a = new StoreAssembler(cfg);
  a.add(parts);
  a.addServices(structuredClone(services, { transfer: serviceImageBuffers(services) }));
  a.addImage(moved);
  return [
    ['fromModel', fromModel],
    ['transferred', a.finish()],
    ['fromParts', KubernetesStore.fromParts(fromModel.parts(), cfg)],
  ];
}

describe('kubernetes slice image', () => {
  for (const [how, store] of stores(podNames)) {
    it(`${how}: slicesOf reads back every slice of a service in model order`, () => {
      expect(store.slicesOf('shop', 'web')).toEqual(webWithPodNames);
      expect(store.slicesOf('other', 'db')).toEqual(dbSlices);
      expect(store.slicesOf('shop', 'api')).toEqual(apiSlices);
      expect(store.slicesOf('shop', 'nothing')).toEqual([]);
      expect(store.slicesOf('other', 'web')).toEqual([]);
      expect(store.slicesOf('shop', 'web')[0]).not.toHaveProperty('cluster');
      // Decoded once per store: the same array again.
      expect(store.slicesOf('shop', 'web')).toBe(store.slicesOf('shop', 'web'));
    });

    it(`${how}: reverse lists every endpoint holding an IP, in model order`, () => {
      const table: [string, string[]][] = [
        ['10.0.0.1', ['web-0.web.shop.svc', 'api-0.api.shop.svc', 'web-0b.web.shop.svc']],
        ['10.0.0.3', ['h3.web.shop.svc', 'h3b.api.shop.svc']],
        ['10.0.0.9', ['10-0-0-9.web.shop.svc']],
        ['10.0.0.5', ['web-2.web.shop.svc']],
        ['10.0.0.6', ['web-2.web.shop.svc']],
        ['fd00::1', ['db-0.db.other.svc']],
        // Keyed by the canonical form of the IP as written.
        ['fd00::2', ['FD00-0-0--2.db.other.svc']],
        ['FD00:0:0::2', []],
        ['fd00::', ['fd00--0.db.other.svc']],
        // Not ready, no service, absent, or not the canonical form.
        ['10.0.0.2', []],
        ['10.0.0.8', []],
        ['10.0.0.7', []],
        ['10.0.0.4', []],
        ['010.0.0.1', []],
        ['10.0.0.1 ', []],
        ['', []],
      ];
      for (const [ip, want] of table) expect([ip, store.reverse(ip)]).toEqual([ip, want]);
    });

    it(`${how}: parts() gives the slices back grouped by service, services in order of first slice`, () => {
      expect(store.parts().slices).toEqual([
        ['web.shop', webWithPodNames],
        ['db.other', dbSlices],
        ['api.shop', apiSlices],
      ]);
    });
  }

  it('names endpoints by dashed IP without endpoint_pod_names', () => {
    for (const [, store] of stores(plain)) {
      expect(store.slicesOf('shop', 'web')[0]!.addresses.map((a) => a.name)).toEqual(['10-0-0-1', 'h3', '10-0-0-9', '10-0-0-5', '10-0-0-6']);
      expect(store.slicesOf('other', 'db')[0]!.addresses.map((a) => a.name)).toEqual(['fd00--1', 'FD00-0-0--2', 'fd00--0']);
      expect(store.reverse('10.0.0.1')).toEqual(['10-0-0-1.web.shop.svc', '10-0-0-1.api.shop.svc', '10-0-0-1.web.shop.svc']);
    }
  });

  it('answers reverse only for exposed namespaces under `namespaces`', () => {
    for (const [, store] of stores(shopOnly)) {
      expect(store.reverse('10.0.0.1')).toEqual(['10-0-0-1.web.shop.svc', '10-0-0-1.api.shop.svc', '10-0-0-1.web.shop.svc']);
      expect(store.reverse('fd00::1')).toEqual([]);
    }
  });

  it('keeps the order of slices parts give without an order', () => {
    const a = new StoreAssembler(plain);
    a.add({
      slices: [
        ['b.ns', [{ ports: [http], addresses: [{ ip: '10.1.0.1', name: 'one' }] }]],
        [
          'a.ns',
          [
            {
              ports: [],
              addresses: [
                { ip: '10.1.0.1', name: 'two' },
                { ip: '10.1.0.1', name: 'three' },
              ],
            },
          ],
        ],
      ],
    });
    const store = a.finish();
    expect(store.slicesOf('ns', 'b')).toEqual([{ ports: [http], addresses: [{ ip: '10.1.0.1', name: 'one' }] }]);
    expect(store.slicesOf('ns', 'b')[0]).not.toHaveProperty('order');
    // Slices without an order keep the order they were given in.
    expect(store.reverse('10.1.0.1')).toEqual(['one.b.ns.svc', 'two.a.ns.svc', 'three.a.ns.svc']);
  });

  it('is empty for a store with no data', () => {
    const store = KubernetesStore.empty(plain);
    expect(store.slicesOf('shop', 'web')).toEqual([]);
    expect(store.reverse('10.0.0.1')).toEqual([]);
    expect(store.parts().slices).toEqual([]);
    expect(new SliceView(new SliceImageBuilder().finish()).groups).toBe(0);
  });

  it('reads only the canonical dotted quad as an IPv4 number', () => {
    const table: [string, number][] = [
      ['0.0.0.0', 0],
      ['10.0.0.1', 0x0a000001],
      ['255.255.255.255', 0xffffffff],
      ['1.2.3.4', 0x01020304],
      ['01.2.3.4', -1],
      ['1.2.3.04', -1],
      ['256.1.1.1', -1],
      ['1.2.3', -1],
      ['1.2.3.4.5', -1],
      ['1..3.4', -1],
      ['1.2.3.', -1],
      ['.1.2.3', -1],
      ['+1.2.3.4', -1],
      ['1.2.3.4 ', -1],
      ['::ffff:1.2.3.4', -1],
      ['1000.2.3.4', -1],
    ];
    for (const [s, n] of table) expect([s, ipv4Number(s)]).toEqual([s, n]);
  });
});

describe('the SOA serial of a store', () => {
  const serial = (m: ClusterModel, cfg = plain): number => storeImage(m, cfg).parts.serial;
  const withEndpoint = (ip: string, ready: boolean): ClusterModel => ({
    ...model,
    endpointSlices: [...model.endpointSlices, slice('shop', 'web-e', 'web', [http], [{ addresses: [ip], ready }])],
  });

  it('is the same for the same data, and a positive 31-bit number', () => {
    expect(serial(model)).toBe(serial({ ...model, endpointSlices: [...model.endpointSlices] }));
    expect(serial(model)).toBeGreaterThan(0);
    expect(serial(model)).toBeLessThan(2 ** 31);
  });

  it('changes when what the store serves changes', () => {
    expect(serial(withEndpoint('10.0.0.20', true))).not.toBe(serial(model));
    expect(serial(withEndpoint('10.0.0.20', true))).not.toBe(serial(withEndpoint('10.0.0.21', true)));
    expect(serial(model, podNames)).not.toBe(serial(model));
    expect(serial({ ...model, namespaces: new Map([...model.namespaces, ['third', { name: 'third', labels: {} }]]) })).not.toBe(serial(model));
  });

  it('stays when only what DNS cannot see changes (the address of a not-ready endpoint)', () => {
    const moved = model.endpointSlices.map((s) => (s.name === 'web-d' ? { ...s, endpoints: [{ addresses: ['10.0.0.18'], ready: false }] } : s));
    expect(serial({ ...model, endpointSlices: moved })).toBe(serial(model));
    const ready = model.endpointSlices.map((s) => (s.name === 'web-d' ? { ...s, endpoints: [{ addresses: ['10.0.0.18'], ready: true }] } : s));
    expect(serial({ ...model, endpointSlices: ready })).not.toBe(serial(model));
  });
});
