// k8s_gateway through the real server with dig: the articles' Ingresses behind an ingress-nginx
// controller, LoadBalancer Services and their hostname annotations, HTTPRoutes through Gateway
// attachment, DNSEndpoints, wildcards, the ignore label, apex SOA/NS and NODATA/NXDOMAIN rules.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../../helpers/clients.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const dir = path.join(repoRoot, 'test/fixtures/edge/gateway');
const soa = (zone: string): string => `${zone}. 60 IN SOA dns1.kube-system.${zone}. hostmaster.dns1.kube-system.${zone}. 12345 7200 1800 86400 60`;
const NGINX = 'NGINX'; // the ingress controller's pool address, found at run time

type Row = [name: string, type: string, rcode: string, answer: string[], authority?: string[], additional?: string[]];

const rows: Row[] = [
  // The articles' Ingresses get the address ingress-nginx publishes (its LoadBalancer Service's).
  ['www.ttomcat.com', 'A', 'NOERROR', [`www.ttomcat.com. 30 IN A ${NGINX}`]],
  ['ingress.demo.com', 'A', 'NOERROR', [`ingress.demo.com. 30 IN A ${NGINX}`]],
  // Another family of an existing name: NODATA (RFC 4074); other types NODATA; TXT NXDOMAIN (the plugin's code).
  ['ingress.demo.com', 'AAAA', 'NOERROR', [], [soa('demo.com')]],
  ['ingress.demo.com', 'MX', 'NOERROR', [], [soa('demo.com')]],
  ['ingress.demo.com', 'TXT', 'NXDOMAIN', [], [soa('demo.com')]],
  ['nope.demo.com', 'A', 'NXDOMAIN', [], [soa('demo.com')]],
  // HTTPRoute: the parent Gateway's status address, only where the listener accepts the route
  // (shop.example.com is also an Ingress host; HTTPRoute comes first in `resources`).
  ['shop.example.com', 'A', 'NOERROR', ['shop.example.com. 60 IN A 198.51.100.20']],
  ['sneaky.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  // GRPCRoute on an HTTP listener; a host also claimed by an Ingress answers with the first kind in `resources`.
  ['grpc.example.com', 'A', 'NOERROR', ['grpc.example.com. 60 IN A 198.51.100.20']],
  ['orphan.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  // Ingress wildcard host: one label, exact names first.
  ['foo.wild.example.com', 'A', 'NOERROR', [`foo.wild.example.com. 60 IN A ${NGINX}`]],
  ['exact.wild.example.com', 'A', 'NOERROR', [`exact.wild.example.com. 60 IN A ${NGINX}`]],
  ['a.b.wild.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  // k8s-gateway.dns/ignore: "true"
  ['hidden.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  // Status written in the manifest wins over the controller.
  ['written.example.com', 'A', 'NOERROR', ['written.example.com. 60 IN A 203.0.113.99']],
  // Service: the hostname annotation replaces name.namespace; loadBalancerIP is what MetalLB assigns.
  ['api.example.com', 'A', 'NOERROR', ['api.example.com. 60 IN A 203.0.113.10']],
  ['api2.example.com', 'AAAA', 'NOERROR', ['api2.example.com. 60 IN AAAA 2001:db8::10']],
  ['api.apps.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  ['web.apps.example.com', 'A', 'NOERROR', ['web.apps.example.com. 60 IN A 203.0.113.11']],
  // DNSEndpoint: A, AAAA and TXT.
  ['txt.example.com', 'TXT', 'NOERROR', ['txt.example.com. 60 IN TXT "hello world"']],
  ['rec.example.com', 'A', 'NOERROR', ['rec.example.com. 60 IN A 192.0.2.1', 'rec.example.com. 60 IN A 192.0.2.2']],
  ['rec6.example.com', 'A', 'NOERROR', [], [soa('example.com')]],
  // Apex: SOA, NS to the apex name with the dns1 Service's address as glue.
  ['example.com', 'SOA', 'NOERROR', [soa('example.com')]],
  ['example.com', 'NS', 'NOERROR', ['example.com. 60 IN NS dns1.kube-system.example.com.'], [], ['dns1.kube-system.example.com. 60 IN A 192.0.2.53']],
  ['example.com', 'A', 'NOERROR', [], [soa('example.com')]],
  ['dns1.kube-system.example.com', 'A', 'NOERROR', ['dns1.kube-system.example.com. 60 IN A 192.0.2.53']],
  ['x.dns1.kube-system.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  ['nope.example.com', 'A', 'NXDOMAIN', [], [soa('example.com')]],
  ['nope.example.com', 'MX', 'NOERROR', [], [soa('example.com')]],
];

describeNeeding(['dig'], 'k8s_gateway through the real server (dig)', () => {
  let server: RunningServer;
  let nginx = '';
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests')]);
    const { loadManifests } = await import('../../../src/cluster/load.js');
    const { model } = loadManifests([path.join(dir, 'manifests')]);
    nginx = model.edge!.serviceStatus.get('ingress-nginx/ingress-nginx-controller')!.addresses[0]!.ip!;
  });
  afterAll(async () => server?.stop());

  it('the ingress controller Service got a pool address', () => {
    expect(nginx).toMatch(/^172\.18\.255\.\d+$/);
  });

  it.each(rows)('%s %s -> %s', async (name, type, rcode, answer, authority = [], additional = []) => {
    const obs = await digQuery(dig!, server.port, name, type, false);
    const fill = (xs: string[]): string[] => xs.map((x) => x.replace(NGINX, nginx).split(/\s+/).join(' '));
    const norm = (xs: string[]): string[] => xs.map((x) => x.split(/\s+/).join(' '));
    expect(obs.rcode).toBe(rcode);
    expect(obs.flags).toContain('aa');
    expect(norm(obs.answer)).toEqual(fill(answer));
    expect(norm(obs.authority)).toEqual(fill(authority));
    expect(norm(obs.additional)).toEqual(fill(additional));
  });

  it('the pool gives a Gateway without status an address that does not change between runs', async () => {
    const a = await digQuery(dig!, server.port, 'pooled.example.com', 'A', false);
    expect(a.answer).toHaveLength(1);
    const again = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests')]);
    try {
      const b = await digQuery(dig!, again.port, 'pooled.example.com', 'A', true);
      expect(b.answer).toEqual(a.answer);
    } finally {
      await again.stop();
    }
  });

  it('a route hostname outside the listener hostname is not served, even in a zone the plugin answers', async () => {
    const { loadManifests } = await import('../../../src/cluster/load.js');
    const { model } = loadManifests([path.join(dir, 'manifests')]);
    const shop = model.edge!.routeHosts.filter((h) => h.route.name === 'shop').map((h) => h.host);
    expect(shop).toEqual(['shop.example.com']);
  });
});
