// k8s_gateway through the real server with dig, on objects the API server admits although part
// of them is useless to DNS (a DNSEndpoint's non-IP targets, a route's IP "hostname"), statuses a
// dump writes pending (no answer), TLSRoute at v1 and its alpha versions, and
// serviceLabelSelectors (the Services a selector leaves out are not exposed).
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../../helpers/clients.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const dir = path.join(repoRoot, 'test/fixtures/edge/admitted');
const soa = (zone: string): string => `${zone}. 60 IN SOA dns1.kube-system.${zone}. hostmaster.dns1.kube-system.${zone}. 12345 7200 1800 86400 60`;

type Row = [name: string, type: string, rcode: string, answer: string[], authority?: string[]];

const rows: Row[] = [
  // DNSEndpoint: the valid target answers, `not-an-ip` is skipped; an IPv6 target of an A
  // endpoint answers AAAA (k8s_gateway keeps any address); CNAME endpoints answer nothing.
  ['mixed.example.net', 'A', 'NOERROR', ['mixed.example.net. 60 IN A 192.0.2.10']],
  ['mixed.example.net', 'AAAA', 'NOERROR', ['mixed.example.net. 60 IN AAAA 2001:db8::10']],
  ['alias.example.net', 'A', 'NXDOMAIN', [], [soa('example.net')]],
  ['alias.example.net', 'CNAME', 'NOERROR', [], [soa('example.net')]],
  ['note.example.net', 'TXT', 'NOERROR', ['note.example.net. 60 IN TXT "not-an-ip either"']],
  // status.loadBalancer: {} written: pending, no address; without status: filled.
  ['pending-lb.default.example.net', 'A', 'NXDOMAIN', [], [soa('example.net')]],
  ['fresh-lb.default.example.net', 'A', 'NOERROR', ['fresh-lb.default.example.net. 60 IN A 198.51.100.30']],
  ['pending.example.net', 'A', 'NXDOMAIN', [], [soa('example.net')]],
  // A Gateway whose status holds only the CRD's "Pending" conditions has no address.
  ['waiting.example.net', 'A', 'NXDOMAIN', [], [soa('example.net')]],
  // An IP in a route's hostnames is skipped; the other hostname is served.
  ['web.example.net', 'A', 'NOERROR', ['web.example.net. 60 IN A 203.0.113.40']],
  // TLSRoute at v1, v1alpha3 and v1alpha2.
  ['db.example.net', 'A', 'NOERROR', ['db.example.net. 60 IN A 203.0.113.40']],
  ['alpha3.example.net', 'A', 'NOERROR', ['alpha3.example.net. 60 IN A 203.0.113.40']],
  ['legacy.example.net', 'A', 'NOERROR', ['legacy.example.net. 60 IN A 203.0.113.40']],
  // serviceLabelSelectors "tier in (web,api)" "team=edge,!internal": a Service matching either.
  ['fresh-lb.default.selected.test', 'A', 'NOERROR', ['fresh-lb.default.selected.test. 60 IN A 198.51.100.30']],
  ['edge-lb.default.selected.test', 'A', 'NOERROR', ['edge-lb.default.selected.test. 60 IN A 198.51.100.31']],
  ['internal-lb.default.selected.test', 'A', 'NXDOMAIN', [], [soa('selected.test')]],
  ['other-lb.default.selected.test', 'A', 'NXDOMAIN', [], [soa('selected.test')]],
  // Without selectors every LoadBalancer Service is exposed.
  ['other-lb.default.example.net', 'A', 'NOERROR', ['other-lb.default.example.net. 60 IN A 198.51.100.33']],
];

describeNeeding(['dig'], 'k8s_gateway on admitted objects and written statuses (dig)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests.yaml')]);
  });
  afterAll(async () => server?.stop());

  it.each(rows)('%s %s -> %s', async (name, type, rcode, answer, authority = []) => {
    const obs = await digQuery(dig!, server.port, name, type, false);
    const norm = (xs: string[]): string[] => xs.map((x) => x.split(/\s+/).join(' '));
    expect(obs.rcode).toBe(rcode);
    expect(obs.flags).toContain('aa');
    expect(norm(obs.answer)).toEqual(answer);
    expect(norm(obs.authority)).toEqual(authority);
  });
});
