// Behaviour of the kubernetes plugin with its default options (zone cluster.local plus the two
// reverse zones), as CoreDNS v1.14.x answers. Every expectation comes from CoreDNS's code and
// tests (`file:line` in CoreDNS's plugin/kubernetes/ unless
// a path is given), not from clusterdns's output. The same table runs in process, through the
// real server with dig over UDP and TCP, and with Node's c-ares resolver.
//
// Fixtures: test/fixtures/k8s/manifests (services, slices, pods) and test/fixtures/k8s/Corefile.main.
import path from 'node:path';
import { repoRoot } from '../../helpers/server.js';
import { runTable, soa, type Case } from '../../helpers/clients.js';
import { reverseName as rev } from '../../helpers/dns-format.js';

const fixtures = path.join(repoRoot, 'test/fixtures/k8s');
const SOA = soa('cluster.local.');
const SOA4 = soa('in-addr.arpa.');
const SOA6 = soa('ip6.arpa.');
const NODATA = { rcode: 'NOERROR', authority: [SOA] } as const;
const NXDOMAIN = { rcode: 'NXDOMAIN', authority: [SOA] } as const;

const cases: Case[] = [
  // ---- ClusterIP services: A/AAAA per clusterIPs family (kubernetes.go:587-600)
  { q: 'svc1.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'] },
  { q: 'svc1.testns.svc.cluster.local. AAAA', ...NODATA, why: 'IPv4-only service: name exists, no AAAA' },
  { q: 'svc6.testns.svc.cluster.local. AAAA', rcode: 'NOERROR', answer: ['svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1'] },
  { q: 'svc6.testns.svc.cluster.local. A', ...NODATA },
  { q: 'dual.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['dual.testns.svc.cluster.local. 5 IN A 10.0.0.3'] },
  { q: 'dual.testns.svc.cluster.local. AAAA', rcode: 'NOERROR', answer: ['dual.testns.svc.cluster.local. 5 IN AAAA fd00:77::3'] },
  {
    q: 'emptysvc.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    answer: ['emptysvc.testns.svc.cluster.local. 5 IN A 10.0.0.9'],
    why: 'no ready endpoint does not matter without ignore empty_service',
  },

  // ---- SRV: service ports for ClusterIP, target svc name, glue A (backend_lookup.go:167-261)
  {
    q: '_http._tcp.svc1.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: ['_http._tcp.svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local.'],
    additional: ['svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'],
  },
  {
    q: 'svc1.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: ['svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local.'],
    additional: ['svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'],
  },
  {
    q: 'multiport.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    why: 'N=2 port matches: weight 50; one glue per (target, address)',
    answer: [
      'multiport.testns.svc.cluster.local. 5 IN SRV 0 50 80 multiport.testns.svc.cluster.local.',
      'multiport.testns.svc.cluster.local. 5 IN SRV 0 50 53 multiport.testns.svc.cluster.local.',
    ],
    additional: ['multiport.testns.svc.cluster.local. 5 IN A 10.0.0.4'],
  },
  {
    q: '_dns._udp.multiport.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: ['_dns._udp.multiport.testns.svc.cluster.local. 5 IN SRV 0 100 53 multiport.testns.svc.cluster.local.'],
    additional: ['multiport.testns.svc.cluster.local. 5 IN A 10.0.0.4'],
  },
  {
    q: 'dual.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    why: 'N=2 (two IPs x one port): weight 50, one SRV per (target, port), glue A+AAAA',
    answer: ['dual.testns.svc.cluster.local. 5 IN SRV 0 50 80 dual.testns.svc.cluster.local.'],
    additional: ['dual.testns.svc.cluster.local. 5 IN A 10.0.0.3', 'dual.testns.svc.cluster.local. 5 IN AAAA fd00:77::3'],
  },
  { q: '_dns._tcp.multiport.testns.svc.cluster.local. SRV', ...NXDOMAIN, why: 'protocol mismatch (kubernetes.go:733-736)' },
  { q: '_https._tcp.svc1.testns.svc.cluster.local. SRV', ...NXDOMAIN, why: 'port name mismatch' },
  {
    q: '_http._tcp.svc1.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    answer: ['_http._tcp.svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'],
    why: 'quirk: SRV-form name answers A',
  },
  { q: 'a.b.c.svc1.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'more than 2 labels left of the service (parse.go:94-126)' },
  { q: '*.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'wildcards removed in 1.9.0' },
  { q: 'any.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'wildcards removed in 1.9.0' },

  // ---- Endpoint names under a ClusterIP service; endpoint SRV uses slice (target) ports
  { q: '172-0-0-1.svc1.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['172-0-0-1.svc1.testns.svc.cluster.local. 5 IN A 172.0.0.1'] },
  {
    q: 'ep2.svc1.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    answer: ['ep2.svc1.testns.svc.cluster.local. 5 IN A 172.0.0.2'],
    why: 'hostname names the endpoint',
  },
  { q: '172-0-0-2.svc1.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'an endpoint with a hostname is not named by its IP' },
  {
    q: '172-0-0-1.svc1.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: ['172-0-0-1.svc1.testns.svc.cluster.local. 5 IN SRV 0 100 8080 172-0-0-1.svc1.testns.svc.cluster.local.'],
    additional: ['172-0-0-1.svc1.testns.svc.cluster.local. 5 IN A 172.0.0.1'],
  },

  // ---- Headless: ready (or readiness-unset) endpoints only (object/endpoint.go:70-147)
  {
    q: 'hdls.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    why: '172.0.1.3 not ready; 172.0.1.2 readiness unset counts',
    answer: [
      'hdls.testns.svc.cluster.local. 5 IN A 172.0.1.1',
      'hdls.testns.svc.cluster.local. 5 IN A 172.0.1.2',
      'hdls.testns.svc.cluster.local. 5 IN A 172.0.1.4',
    ],
  },
  { q: 'hdls.testns.svc.cluster.local. AAAA', ...NODATA },
  {
    q: 'hdls.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    why: 'weight floor(100/3)=33, slice port 8080, glue per endpoint',
    answer: [
      'hdls.testns.svc.cluster.local. 5 IN SRV 0 33 8080 host1.hdls.testns.svc.cluster.local.',
      'hdls.testns.svc.cluster.local. 5 IN SRV 0 33 8080 172-0-1-2.hdls.testns.svc.cluster.local.',
      'hdls.testns.svc.cluster.local. 5 IN SRV 0 33 8080 172-0-1-4.hdls.testns.svc.cluster.local.',
    ],
    additional: [
      'host1.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.1',
      '172-0-1-2.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.2',
      '172-0-1-4.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.4',
    ],
  },
  {
    q: '_http._tcp.hdls.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: [
      '_http._tcp.hdls.testns.svc.cluster.local. 5 IN SRV 0 33 8080 host1.hdls.testns.svc.cluster.local.',
      '_http._tcp.hdls.testns.svc.cluster.local. 5 IN SRV 0 33 8080 172-0-1-2.hdls.testns.svc.cluster.local.',
      '_http._tcp.hdls.testns.svc.cluster.local. 5 IN SRV 0 33 8080 172-0-1-4.hdls.testns.svc.cluster.local.',
    ],
    additional: [
      'host1.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.1',
      '172-0-1-2.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.2',
      '172-0-1-4.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.4',
    ],
  },
  { q: 'host1.hdls.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['host1.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.1'] },
  {
    q: 'host1.hdls.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: ['host1.hdls.testns.svc.cluster.local. 5 IN SRV 0 100 8080 host1.hdls.testns.svc.cluster.local.'],
    additional: ['host1.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.1'],
  },
  { q: '172-0-1-1.hdls.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'named host1, not by IP' },
  { q: '172-0-1-2.hdls.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['172-0-1-2.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.2'] },
  { q: '172-0-1-3.hdls.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'not-ready endpoint' },
  { q: '172-0-1-4.hdls.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['172-0-1-4.hdls.testns.svc.cluster.local. 5 IN A 172.0.1.4'] },
  { q: 'hdls-pod-4.hdls.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'pod names only with endpoint_pod_names' },
  { q: 'hdlsempty.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'headless with no ready endpoints (backend_lookup.go:78-82)' },
  { q: 'hdlsempty.testns.svc.cluster.local. SRV', ...NXDOMAIN },
  {
    q: 'hdls6.testns.svc.cluster.local. AAAA',
    rcode: 'NOERROR',
    answer: ['hdls6.testns.svc.cluster.local. 5 IN AAAA 2001:db8::', 'hdls6.testns.svc.cluster.local. 5 IN AAAA 2001:db8::5'],
  },
  { q: 'hdls6.testns.svc.cluster.local. A', ...NODATA },
  {
    q: '2001-db8--0.hdls6.testns.svc.cluster.local. AAAA',
    rcode: 'NOERROR',
    answer: ['2001-db8--0.hdls6.testns.svc.cluster.local. 5 IN AAAA 2001:db8::'],
    why: 'IPv6 trailing "-" completed by 0',
  },
  { q: '2001-db8--5.hdls6.testns.svc.cluster.local. AAAA', rcode: 'NOERROR', answer: ['2001-db8--5.hdls6.testns.svc.cluster.local. 5 IN AAAA 2001:db8::5'] },
  {
    q: 'hdls6.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    answer: [
      'hdls6.testns.svc.cluster.local. 5 IN SRV 0 50 80 2001-db8--0.hdls6.testns.svc.cluster.local.',
      'hdls6.testns.svc.cluster.local. 5 IN SRV 0 50 80 2001-db8--5.hdls6.testns.svc.cluster.local.',
    ],
    additional: ['2001-db8--0.hdls6.testns.svc.cluster.local. 5 IN AAAA 2001:db8::', '2001-db8--5.hdls6.testns.svc.cluster.local. 5 IN AAAA 2001:db8::5'],
  },
  { q: 'hdlsnp.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['hdlsnp.testns.svc.cluster.local. 5 IN A 172.0.1.30'] },
  { q: 'hdlsnp.testns.svc.cluster.local. SRV', ...NODATA, why: 'portless slice: port -1 entries dropped' },
  { q: 'dup.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['dup.testns.svc.cluster.local. 5 IN A 172.0.6.1'], why: 'deduplicated by address' },
  {
    q: 'dup.testns.svc.cluster.local. SRV',
    rcode: 'NOERROR',
    why: 'weight counts matches before dedup: floor(100/2)=50',
    answer: ['dup.testns.svc.cluster.local. 5 IN SRV 0 50 80 172-0-6-1.dup.testns.svc.cluster.local.'],
    additional: ['172-0-6-1.dup.testns.svc.cluster.local. 5 IN A 172.0.6.1'],
  },
  {
    q: 'legacy.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    answer: ['legacy.testns.svc.cluster.local. 5 IN A 172.0.7.1'],
    why: 'v1 Endpoints mirrored; notReadyAddresses excluded',
  },
  { q: 'old.legacy.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['old.legacy.testns.svc.cluster.local. 5 IN A 172.0.7.1'] },
  { q: 'us-west-2a.pin._zone.zh.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'zonal names need the zonal option' },

  // ---- ExternalName (kubernetes.go:514-528, backend_lookup.go:28-76,329-343)
  { q: 'ext.testns.svc.cluster.local. CNAME', rcode: 'NOERROR', answer: ['ext.testns.svc.cluster.local. 5 IN CNAME example.net.'] },
  {
    q: 'ext.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    answer: ['ext.testns.svc.cluster.local. 5 IN CNAME example.net.'],
    why: 'external target: re-query answers nothing (no forward), CNAME kept',
  },
  { q: 'ext.testns.svc.cluster.local. AAAA', rcode: 'NOERROR', answer: ['ext.testns.svc.cluster.local. 5 IN CNAME example.net.'] },
  { q: 'ext.testns.svc.cluster.local. SRV', ...NODATA },
  { q: 'ext.testns.svc.cluster.local. TXT', ...NODATA },
  { q: 'foo.ext.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'no name below an ExternalName service' },
  {
    q: 'extint.testns.svc.cluster.local. A',
    rcode: 'NOERROR',
    why: 'internal target chased in the plugin',
    answer: ['extint.testns.svc.cluster.local. 5 IN CNAME svc1.testns.svc.cluster.local.', 'svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'],
  },
  { q: 'extint.testns.svc.cluster.local. AAAA', ...NODATA, why: 'internal target without AAAA: CNAME dropped' },
  { q: 'extint.testns.svc.cluster.local. CNAME', rcode: 'NOERROR', answer: ['extint.testns.svc.cluster.local. 5 IN CNAME svc1.testns.svc.cluster.local.'] },
  { q: 'extip.testns.svc.cluster.local. A', ...NXDOMAIN, why: 'IP-literal externalName' },
  { q: 'extip.testns.svc.cluster.local. CNAME', ...NXDOMAIN },

  // ---- PTR (reverse.go:14-55): service IP first, else ready endpoints, target in the primary zone
  { q: `${rev('10.0.0.1')} PTR`, rcode: 'NOERROR', answer: [`${rev('10.0.0.1')} 5 IN PTR svc1.testns.svc.cluster.local.`] },
  { q: `${rev('10.0.0.3')} PTR`, rcode: 'NOERROR', answer: [`${rev('10.0.0.3')} 5 IN PTR dual.testns.svc.cluster.local.`] },
  { q: `${rev('fd00:77::3')} PTR`, rcode: 'NOERROR', answer: [`${rev('fd00:77::3')} 5 IN PTR dual.testns.svc.cluster.local.`] },
  { q: `${rev('1234:abcd::1')} PTR`, rcode: 'NOERROR', answer: [`${rev('1234:abcd::1')} 5 IN PTR svc6.testns.svc.cluster.local.`] },
  { q: `${rev('10.0.0.9')} PTR`, rcode: 'NOERROR', answer: [`${rev('10.0.0.9')} 5 IN PTR emptysvc.testns.svc.cluster.local.`] },
  { q: `${rev('172.0.0.1')} PTR`, rcode: 'NOERROR', answer: [`${rev('172.0.0.1')} 5 IN PTR 172-0-0-1.svc1.testns.svc.cluster.local.`] },
  { q: `${rev('172.0.0.2')} PTR`, rcode: 'NOERROR', answer: [`${rev('172.0.0.2')} 5 IN PTR ep2.svc1.testns.svc.cluster.local.`] },
  { q: `${rev('172.0.1.1')} PTR`, rcode: 'NOERROR', answer: [`${rev('172.0.1.1')} 5 IN PTR host1.hdls.testns.svc.cluster.local.`] },
  {
    q: `${rev('172.0.6.1')} PTR`,
    rcode: 'NOERROR',
    answer: [`${rev('172.0.6.1')} 5 IN PTR 172-0-6-1.dup.testns.svc.cluster.local.`],
    why: 'duplicate targets removed',
  },
  { q: `${rev('2001:db8::5')} PTR`, rcode: 'NOERROR', answer: [`${rev('2001:db8::5')} 5 IN PTR 2001-db8--5.hdls6.testns.svc.cluster.local.`] },
  { q: `${rev('2001:db8::')} PTR`, rcode: 'NOERROR', answer: [`${rev('2001:db8::')} 5 IN PTR 2001-db8--0.hdls6.testns.svc.cluster.local.`] },
  { q: `${rev('172.0.1.3')} PTR`, rcode: 'NXDOMAIN', authority: [SOA4], why: 'not-ready endpoint has no PTR' },
  { q: `${rev('10.0.0.250')} PTR`, rcode: 'NXDOMAIN', authority: [SOA4], why: 'unknown IP in a served reverse zone, no fallthrough' },
  { q: `${rev('fd00::250')} PTR`, rcode: 'NXDOMAIN', authority: [SOA6] },
  { q: '1.0.0.10.in-addr.arpa. A', rcode: 'NXDOMAIN', authority: [SOA4], why: 'A in a reverse zone (parse: label below zone is not svc/pod)' },

  // ---- pods disabled (default; kubernetes.go:399-419)
  { q: '172-0-0-1.testns.pod.cluster.local. A', ...NXDOMAIN },
  { q: 'testns.pod.cluster.local. A', ...NXDOMAIN, why: 'disabled: even ns.pod.zone is NXDOMAIN' },
  { q: 'pod.cluster.local. A', ...NODATA, why: 'parse.go:62-66' },

  // ---- dns-version, apex SOA and NS, ns.dns
  { q: 'dns-version.cluster.local. TXT', rcode: 'NOERROR', answer: ['dns-version.cluster.local. 28800 IN TXT "1.1.0"'] },
  { q: 'dns-version.cluster.local. A', ...NXDOMAIN, why: 'label below zone is not svc/pod' },
  { q: 'cluster.local. SOA', rcode: 'NOERROR', answer: [SOA] },
  // ns.go nsAddrs(): no Service's slice holds one of the server's own IPs, so it falls back to
  // `ns.dns.<zone>` -> k.localIPs, the non-loopback bound addresses (local.go boundIPs). With
  // `bind 127.0.0.1` CoreDNS has none and answers the apex NS with NODATA; a zone always has NS
  // at its apex, so clusterdns names the loopback address it is bound to (ns.ts).
  {
    q: 'cluster.local. NS',
    rcode: 'NOERROR',
    why: 'bind 127.0.0.1, no kube-dns Service: ns.dns.<zone> at the bound address',
    answer: ['cluster.local. 5 IN NS ns.dns.cluster.local.'],
    additional: ['ns.dns.cluster.local. 5 IN A 127.0.0.1'],
  },
  { q: 'ns.dns.cluster.local. A', rcode: 'NOERROR', answer: ['ns.dns.cluster.local. 5 IN A 127.0.0.1'], why: 'the address behind the NS' },
  { q: 'ns.dns.cluster.local. AAAA', ...NODATA, why: 'bound to IPv4 only' },

  // ---- NXDOMAIN vs NODATA (reference section 4)
  { q: 'cluster.local. A', ...NODATA, why: 'apex' },
  { q: 'cluster.local. HINFO', ...NODATA, why: 'apex, other type via fake A (kubernetes_apex_test.go)' },
  { q: 'svc.cluster.local. A', ...NODATA },
  { q: 'testns.svc.cluster.local. A', ...NODATA, why: 'existing namespace' },
  { q: 'emptyns.svc.cluster.local. A', ...NODATA, why: 'existing namespace without services' },
  { q: 'missingns.svc.cluster.local. A', ...NXDOMAIN, why: 'no such namespace' },
  { q: 'svc1.missingns.svc.cluster.local. A', ...NXDOMAIN },
  { q: 'nope.testns.svc.cluster.local. A', ...NXDOMAIN },
  { q: 'foo.cluster.local. A', ...NXDOMAIN, why: 'label below zone is not svc/pod' },
  { q: 'svc1.testns.svc.cluster.local. TXT', ...NODATA, why: 'TXT: name has records' },
  { q: 'nope.testns.svc.cluster.local. TXT', ...NXDOMAIN },
  { q: 'cluster.local. TXT', ...NXDOMAIN, why: 'TXT quirk: apex has no records of its own' },
  { q: 'svc.cluster.local. TXT', ...NXDOMAIN, why: 'TXT quirk' },
  { q: 'testns.svc.cluster.local. TXT', ...NXDOMAIN, why: 'TXT quirk' },
  { q: 'svc1.testns.svc.cluster.local. SOA', ...NODATA, why: 'SOA below apex' },
  { q: 'nope.testns.svc.cluster.local. SOA', ...NODATA, why: 'quirk: SOA below apex is NODATA even for a missing name' },
  { q: 'svc1.testns.svc.cluster.local. NS', ...NODATA },
  { q: 'nope.testns.svc.cluster.local. NS', ...NXDOMAIN },
  { q: 'svc1.testns.svc.cluster.local. MX', ...NODATA },
  { q: 'nope.testns.svc.cluster.local. MX', ...NXDOMAIN },
  { q: 'svc1.testns.svc.cluster.local. CNAME', ...NODATA, why: 'CNAME on a non-ExternalName' },
  { q: 'nope.testns.svc.cluster.local. CNAME', ...NXDOMAIN },
  { q: 'svc1.testns.svc.cluster.local. PTR', ...NODATA, why: 'PTR on a non-reverse name that exists' },
  { q: 'nope.testns.svc.cluster.local. PTR', ...NXDOMAIN },
  { q: 'svc1.testns.svc.cluster.local. CAA', ...NODATA, why: 'other types: fake A lookup' },
  { q: 'nope.testns.svc.cluster.local. CAA', ...NXDOMAIN },

  // ---- ANY (RFC 8482 4.1): one RRset of the name, never an empty answer for a name with data.
  // CoreDNS decides ANY with a fake A lookup (NODATA for every name); clusterdns answers it as
  // its file plugin does.
  { q: 'svc1.testns.svc.cluster.local. ANY', rcode: 'NOERROR', answer: ['svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1'], why: 'the A RRset' },
  {
    q: 'svc6.testns.svc.cluster.local. ANY',
    rcode: 'NOERROR',
    answer: ['svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1'],
    why: 'IPv6-only: the AAAA RRset',
  },
  {
    q: 'ext.testns.svc.cluster.local. ANY',
    rcode: 'NOERROR',
    answer: ['ext.testns.svc.cluster.local. 5 IN CNAME example.net.'],
    why: 'ExternalName: the CNAME, not chased',
  },
  {
    q: '_dns._udp.multiport.testns.svc.cluster.local. ANY',
    rcode: 'NOERROR',
    why: 'a name with addresses answers A first',
    answer: ['_dns._udp.multiport.testns.svc.cluster.local. 5 IN A 10.0.0.4'],
  },
  { q: 'dns-version.cluster.local. ANY', rcode: 'NOERROR', answer: ['dns-version.cluster.local. 28800 IN TXT "1.1.0"'], why: 'TXT only' },
  { q: 'cluster.local. ANY', rcode: 'NOERROR', answer: [SOA], why: 'apex: the SOA' },
  { q: `${rev('10.0.0.1')} ANY`, rcode: 'NOERROR', answer: [`${rev('10.0.0.1')} 5 IN PTR svc1.testns.svc.cluster.local.`], why: 'reverse name: the PTR' },
  { q: 'testns.svc.cluster.local. ANY', ...NODATA, why: 'a namespace has no records of its own' },
  { q: 'nope.testns.svc.cluster.local. ANY', ...NXDOMAIN },
  { q: 'example.com. A', rcode: 'REFUSED', why: 'outside every server block zone (core/dnsserver/server.go:409-410)' },

  // ---- Letter case: owners echo the question; SOA, SRV targets and glue use the zone as spelled
  { q: 'SvC1.TestNS.svc.Cluster.Local. A', rcode: 'NOERROR', answer: ['SvC1.TestNS.svc.Cluster.Local. 5 IN A 10.0.0.1'] },
  { q: 'HOST1.Hdls.testns.svc.cluster.local. A', rcode: 'NOERROR', answer: ['HOST1.Hdls.testns.svc.cluster.local. 5 IN A 172.0.1.1'] },
  { q: 'NoPe.TestNS.svc.Cluster.Local. A', rcode: 'NXDOMAIN', authority: [soa('Cluster.Local.')], why: 'handler.go:21 keeps the query spelling of the zone' },
  { q: 'CLUSTER.LOCAL. SOA', rcode: 'NOERROR', answer: [soa('CLUSTER.LOCAL.')] },
  {
    q: '_HTTP._TCP.svc1.testns.svc.Cluster.Local. SRV',
    rcode: 'NOERROR',
    answer: ['_HTTP._TCP.svc1.testns.svc.Cluster.Local. 5 IN SRV 0 100 80 svc1.testns.svc.Cluster.Local.'],
    additional: ['svc1.testns.svc.Cluster.Local. 5 IN A 10.0.0.1'],
  },
];

runTable('kubernetes (defaults)', {
  conf: path.join(fixtures, 'Corefile.main'),
  manifests: [path.join(fixtures, 'manifests')],
  cases,
});
