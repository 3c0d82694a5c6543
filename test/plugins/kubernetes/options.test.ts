// Behaviour of the kubernetes plugin's options, as CoreDNS v1.14.x answers: one server block per
// option (test/fixtures/k8s/Corefile.options), each with its own zone, over the same manifests as
// kubernetes.test.ts. Expectations come from CoreDNS (`file:line` in coredns/coredns
// plugin/kubernetes/), not from clusterdns's output.
import path from 'node:path';
import { repoRoot } from '../../helpers/server.js';
import { runTable, soa, type Case } from '../../helpers/clients.js';
import { reverseName as rev } from '../../helpers/dns-format.js';

const fixtures = path.join(repoRoot, 'test/fixtures/k8s');
const nodata = (zone: string, ttl = 5): Pick<Case, 'rcode' | 'authority'> => ({ rcode: 'NOERROR', authority: [soa(zone, ttl)] });
const nx = (zone: string, ttl = 5): Pick<Case, 'rcode' | 'authority'> => ({ rcode: 'NXDOMAIN', authority: [soa(zone, ttl)] });

const cases: Case[] = [
  // ---- pods insecure (kubernetes.go:420-440): the IP comes from the name; namespace must exist
  { q: '172-0-0-1.testns.pod.insecure.local. A', rcode: 'NOERROR', answer: ['172-0-0-1.testns.pod.insecure.local. 5 IN A 172.0.0.1'], why: 'no pod check' },
  { q: '172-0-0-1.testns.pod.insecure.local. AAAA', ...nodata('insecure.local.') },
  {
    q: 'fd00--1.testns.pod.insecure.local. AAAA',
    rcode: 'NOERROR',
    answer: ['fd00--1.testns.pod.insecure.local. 5 IN AAAA fd00::1'],
    why: 'not 3 dashes: dashes -> colons',
  },
  {
    q: 'x.172-0-0-1.testns.pod.insecure.local. A',
    rcode: 'NOERROR',
    answer: ['x.172-0-0-1.testns.pod.insecure.local. 5 IN A 172.0.0.1'],
    why: 'quirk: one extra label ignored',
  },
  { q: '1-2-3-4.missingns.pod.insecure.local. A', ...nx('insecure.local.'), why: 'namespace must exist' },
  { q: 'notanip.testns.pod.insecure.local. A', ...nx('insecure.local.'), why: 'must parse as an IP' },
  { q: 'testns.pod.insecure.local. A', ...nodata('insecure.local.') },

  // ---- pods verified (kubernetes.go:441-456, object/pod.go, controller.go:269-275)
  { q: '172-0-3-1.testns.pod.verified.local. A', rcode: 'NOERROR', answer: ['172-0-3-1.testns.pod.verified.local. 5 IN A 172.0.3.1'] },
  { q: '172-0-3-2.testns.pod.verified.local. A', ...nx('verified.local.'), why: 'Succeeded pod not indexed' },
  { q: '172-0-3-3.testns.pod.verified.local. A', ...nx('verified.local.'), why: 'pod is in another namespace' },
  { q: '172-0-3-3.other.pod.verified.local. A', rcode: 'NOERROR', answer: ['172-0-3-3.other.pod.verified.local. 5 IN A 172.0.3.3'] },
  { q: '172-0-0-1.testns.pod.verified.local. A', ...nx('verified.local.'), why: 'no pod has that IP' },
  { q: 'testns.pod.verified.local. A', ...nodata('verified.local.') },

  // ---- endpoint_pod_names (kubernetes.go:379-397): hostname > pod name (<64 chars) > dashed IP
  { q: 'hdls-pod-4.hdls.testns.svc.podnames.local. A', rcode: 'NOERROR', answer: ['hdls-pod-4.hdls.testns.svc.podnames.local. 5 IN A 172.0.1.4'] },
  { q: '172-0-1-4.hdls.testns.svc.podnames.local. A', ...nx('podnames.local.'), why: 'named by its pod now' },
  {
    q: 'host1.hdls.testns.svc.podnames.local. A',
    rcode: 'NOERROR',
    answer: ['host1.hdls.testns.svc.podnames.local. 5 IN A 172.0.1.1'],
    why: 'hostname beats pod name',
  },
  { q: 'hdls-pod-1.hdls.testns.svc.podnames.local. A', ...nx('podnames.local.') },
  {
    q: '172-0-1-2.hdls.testns.svc.podnames.local. A',
    rcode: 'NOERROR',
    answer: ['172-0-1-2.hdls.testns.svc.podnames.local. 5 IN A 172.0.1.2'],
    why: 'no targetRef: dashed IP',
  },
  {
    q: '172-0-1-9.hdlslong.testns.svc.podnames.local. A',
    rcode: 'NOERROR',
    answer: ['172-0-1-9.hdlslong.testns.svc.podnames.local. 5 IN A 172.0.1.9'],
    why: '64-char pod name too long',
  },
  {
    q: 'hdls.testns.svc.podnames.local. SRV',
    rcode: 'NOERROR',
    answer: [
      'hdls.testns.svc.podnames.local. 5 IN SRV 0 33 8080 host1.hdls.testns.svc.podnames.local.',
      'hdls.testns.svc.podnames.local. 5 IN SRV 0 33 8080 172-0-1-2.hdls.testns.svc.podnames.local.',
      'hdls.testns.svc.podnames.local. 5 IN SRV 0 33 8080 hdls-pod-4.hdls.testns.svc.podnames.local.',
    ],
    additional: [
      'host1.hdls.testns.svc.podnames.local. 5 IN A 172.0.1.1',
      '172-0-1-2.hdls.testns.svc.podnames.local. 5 IN A 172.0.1.2',
      'hdls-pod-4.hdls.testns.svc.podnames.local. 5 IN A 172.0.1.4',
    ],
  },

  // ---- ttl 600: records 600, SOA TTL min(600,300)=300, SOA minimum 600; dns-version stays 28800
  { q: 'svc1.testns.svc.ttl.local. A', rcode: 'NOERROR', answer: ['svc1.testns.svc.ttl.local. 600 IN A 10.0.0.1'] },
  { q: 'nope.testns.svc.ttl.local. A', ...nx('ttl.local.', 600) },
  { q: 'ttl.local. SOA', rcode: 'NOERROR', answer: [soa('ttl.local.', 600)] },
  { q: 'dns-version.ttl.local. TXT', rcode: 'NOERROR', answer: ['dns-version.ttl.local. 28800 IN TXT "1.1.0"'] },
  {
    q: '_http._tcp.svc1.testns.svc.ttl.local. SRV',
    rcode: 'NOERROR',
    answer: ['_http._tcp.svc1.testns.svc.ttl.local. 600 IN SRV 0 100 80 svc1.testns.svc.ttl.local.'],
    additional: ['svc1.testns.svc.ttl.local. 600 IN A 10.0.0.1'],
  },

  // ---- namespaces other (namespace.go:14-24; PTR filtered only with this option, reverse.go:33,42)
  { q: 'web.other.svc.nsonly.local. A', rcode: 'NOERROR', answer: ['web.other.svc.nsonly.local. 5 IN A 10.0.2.1'] },
  { q: 'svc1.testns.svc.nsonly.local. A', ...nx('nsonly.local.'), why: 'namespace not exposed' },
  { q: 'testns.svc.nsonly.local. A', ...nx('nsonly.local.') },
  { q: 'other.svc.nsonly.local. A', ...nodata('nsonly.local.') },
  { q: `${rev('10.0.2.1')} PTR`, rcode: 'NOERROR', answer: [`${rev('10.0.2.1')} 5 IN PTR web.other.svc.nsonly.local.`], why: 'PTR target in the primary zone' },
  { q: `${rev('10.0.0.1')} PTR`, ...nx('in-addr.arpa.'), why: 'service in a namespace not exposed' },

  // ---- namespace_labels team=blue (controller.go:201-213): other namespaces do not exist
  { q: 'web.other.svc.nslabels.local. A', rcode: 'NOERROR', answer: ['web.other.svc.nslabels.local. 5 IN A 10.0.2.1'] },
  { q: 'svc1.testns.svc.nslabels.local. A', ...nx('nslabels.local.') },
  { q: 'testns.svc.nslabels.local. A', ...nx('nslabels.local.') },
  { q: 'other.svc.nslabels.local. A', ...nodata('nslabels.local.') },

  // ---- labels app=web (controller.go:147-195): services, pods and slices filtered; not namespaces
  { q: 'web.other.svc.labels.local. A', rcode: 'NOERROR', answer: ['web.other.svc.labels.local. 5 IN A 10.0.2.1'] },
  { q: 'svc1.testns.svc.labels.local. A', ...nx('labels.local.'), why: 'unlabelled service' },
  { q: 'webh.testns.svc.labels.local. A', ...nx('labels.local.'), why: 'labelled headless service whose slice lacks the label' },
  { q: 'testns.svc.labels.local. A', ...nodata('labels.local.') },

  // ---- noendpoints (controller.go:196-199)
  { q: 'svc1.testns.svc.noep.local. A', rcode: 'NOERROR', answer: ['svc1.testns.svc.noep.local. 5 IN A 10.0.0.1'] },
  {
    q: '_http._tcp.svc1.testns.svc.noep.local. SRV',
    rcode: 'NOERROR',
    answer: ['_http._tcp.svc1.testns.svc.noep.local. 5 IN SRV 0 100 80 svc1.testns.svc.noep.local.'],
    additional: ['svc1.testns.svc.noep.local. 5 IN A 10.0.0.1'],
  },
  { q: '172-0-0-1.svc1.testns.svc.noep.local. A', ...nx('noep.local.'), why: 'no endpoint names' },
  { q: 'hdls.testns.svc.noep.local. A', ...nx('noep.local.'), why: 'headless has no endpoints' },
  { q: 'ext.testns.svc.noep.local. CNAME', rcode: 'NOERROR', answer: ['ext.testns.svc.noep.local. 5 IN CNAME example.net.'] },

  // ---- fallthrough fall2.local (handler.go:65-68, fall/fall.go): only NXDOMAIN, only listed zones.
  // Nothing follows kubernetes in the block, so the fallen-through query reaches
  // plugin.NextOrFailure (plugin/plugin.go), which returns SERVFAIL, written by the server
  // (core/dnsserver/server.go errorFunc) without AA and without records.
  { q: 'nope.testns.svc.fall.local. A', ...nx('fall.local.'), why: 'fall.local not listed for fallthrough' },
  { q: 'nope.testns.svc.fall2.local. A', rcode: 'SERVFAIL', why: 'NXDOMAIN falls through to no next plugin' },
  { q: 'testns.svc.fall2.local. A', ...nodata('fall2.local.'), why: 'NODATA never falls through' },
  { q: 'svc1.testns.svc.fall2.local. A', rcode: 'NOERROR', answer: ['svc1.testns.svc.fall2.local. 5 IN A 10.0.0.1'] },
  { q: `${rev('fd00::250')} PTR`, rcode: 'SERVFAIL', why: 'unknown IP in a reverse zone listed for fallthrough' },
  {
    q: `${rev('1234:abcd::1')} PTR`,
    rcode: 'NOERROR',
    answer: [`${rev('1234:abcd::1')} 5 IN PTR svc6.testns.svc.fall.local.`],
    why: 'known IP answered; target in the primary (first) zone',
  },

  // ---- ignore empty_service (kubernetes.go:492-505): ClusterIP without ready addresses skipped
  { q: 'emptysvc.testns.svc.empty.local. A', ...nx('empty.local.'), why: 'only a not-ready endpoint' },
  { q: '_http._tcp.emptysvc.testns.svc.empty.local. SRV', ...nx('empty.local.') },
  { q: 'svc6.testns.svc.empty.local. AAAA', ...nx('empty.local.'), why: 'no slices at all' },
  { q: 'svc1.testns.svc.empty.local. A', rcode: 'NOERROR', answer: ['svc1.testns.svc.empty.local. 5 IN A 10.0.0.1'] },
  { q: 'ext.testns.svc.empty.local. CNAME', rcode: 'NOERROR', answer: ['ext.testns.svc.empty.local. 5 IN CNAME example.net.'], why: 'ExternalName exempt' },
  { q: 'legacy.testns.svc.empty.local. A', rcode: 'NOERROR', answer: ['legacy.testns.svc.empty.local. 5 IN A 172.0.7.1'], why: 'headless exempt' },

  // ---- multicluster clusterset.local (kubernetes.go:606-707, parse.go:100-107)
  {
    q: 'mcsvc.testns.svc.clusterset.local. A',
    rcode: 'NOERROR',
    answer: ['mcsvc.testns.svc.clusterset.local. 5 IN A 10.1.0.1'],
    why: 'ServiceImport ClusterSetIP',
  },
  {
    q: '_http._tcp.mcsvc.testns.svc.clusterset.local. SRV',
    rcode: 'NOERROR',
    answer: ['_http._tcp.mcsvc.testns.svc.clusterset.local. 5 IN SRV 0 100 80 mcsvc.testns.svc.clusterset.local.'],
    additional: ['mcsvc.testns.svc.clusterset.local. 5 IN A 10.1.0.1'],
  },
  {
    q: 'mchdls.testns.svc.clusterset.local. A',
    rcode: 'NOERROR',
    answer: ['mchdls.testns.svc.clusterset.local. 5 IN A 10.1.1.1', 'mchdls.testns.svc.clusterset.local. 5 IN A 10.1.1.2'],
  },
  {
    q: 'mchdls.testns.svc.clusterset.local. SRV',
    rcode: 'NOERROR',
    why: 'endpoint targets carry the cluster id',
    answer: [
      'mchdls.testns.svc.clusterset.local. 5 IN SRV 0 50 8080 a.cluster1.mchdls.testns.svc.clusterset.local.',
      'mchdls.testns.svc.clusterset.local. 5 IN SRV 0 50 8080 10-1-1-2.cluster1.mchdls.testns.svc.clusterset.local.',
    ],
    additional: ['a.cluster1.mchdls.testns.svc.clusterset.local. 5 IN A 10.1.1.1', '10-1-1-2.cluster1.mchdls.testns.svc.clusterset.local. 5 IN A 10.1.1.2'],
  },
  { q: 'a.cluster1.mchdls.testns.svc.clusterset.local. A', rcode: 'NOERROR', answer: ['a.cluster1.mchdls.testns.svc.clusterset.local. 5 IN A 10.1.1.1'] },
  {
    q: '10-1-1-2.cluster1.mchdls.testns.svc.clusterset.local. A',
    rcode: 'NOERROR',
    answer: ['10-1-1-2.cluster1.mchdls.testns.svc.clusterset.local. 5 IN A 10.1.1.2'],
  },
  { q: 'a.mchdls.testns.svc.clusterset.local. A', ...nx('clusterset.local.'), why: 'bare endpoint name without cluster id' },
  { q: 'a.cluster2.mchdls.testns.svc.clusterset.local. A', ...nx('clusterset.local.') },
  { q: 'svc1.testns.svc.clusterset.local. A', ...nx('clusterset.local.'), why: 'a Service is not a ServiceImport' },
  { q: 'svc1.testns.svc.mc.local. A', rcode: 'NOERROR', answer: ['svc1.testns.svc.mc.local. 5 IN A 10.0.0.1'] },
  { q: 'mcsvc.testns.svc.mc.local. A', ...nx('mc.local.'), why: 'ServiceImports only in multicluster zones' },

  // ---- zonal (parse.go:109-126, kubernetes.go:530-583; coredns zonal_test.go)
  {
    q: 'zh.testns.svc.zonal.local. A',
    rcode: 'NOERROR',
    answer: ['zh.testns.svc.zonal.local. 5 IN A 172.0.5.1', 'zh.testns.svc.zonal.local. 5 IN A 172.0.5.2', 'zh.testns.svc.zonal.local. 5 IN A 172.0.5.3'],
  },
  {
    q: 'us-west-2a.pin._zone.zh.testns.svc.zonal.local. A',
    rcode: 'NOERROR',
    answer: ['us-west-2a.pin._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.1'],
    why: 'not-ready 172.0.5.4 excluded',
  },
  {
    q: 'us-west-2b.pin._zone.zh.testns.svc.zonal.local. A',
    rcode: 'NOERROR',
    why: 'slice zone compared lowercased',
    answer: ['us-west-2b.pin._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.2', 'us-west-2b.pin._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.3'],
  },
  { q: 'us-west-2c.pin._zone.zh.testns.svc.zonal.local. A', ...nodata('zonal.local.'), why: 'pin to an empty zone' },
  {
    q: 'us-west-2a.prefer._zone.zh.testns.svc.zonal.local. A',
    rcode: 'NOERROR',
    answer: ['us-west-2a.prefer._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.1'],
  },
  {
    q: 'us-west-2c.prefer._zone.zh.testns.svc.zonal.local. A',
    rcode: 'NOERROR',
    why: 'prefer falls back to all endpoints',
    answer: [
      'us-west-2c.prefer._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.1',
      'us-west-2c.prefer._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.2',
      'us-west-2c.prefer._zone.zh.testns.svc.zonal.local. 5 IN A 172.0.5.3',
    ],
  },
  { q: 'us-west-2a.florp._zone.zh.testns.svc.zonal.local. A', ...nx('zonal.local.'), why: 'unknown directive' },
  { q: 'us-west-2a.pin._zone.svc1.testns.svc.zonal.local. A', ...nx('zonal.local.'), why: 'headless only' },
  { q: 'us-west-2a.pin._zone.ghost.testns.svc.zonal.local. A', ...nx('zonal.local.') },
  { q: 'us-west-2c.pin._zone.zh.testns.svc.zonal.local. TXT', ...nodata('zonal.local.') },
  {
    q: 'us-west-2b.pin._zone.zh.testns.svc.zonal.local. SRV',
    rcode: 'NOERROR',
    answer: [
      'us-west-2b.pin._zone.zh.testns.svc.zonal.local. 5 IN SRV 0 50 80 172-0-5-2.zh.testns.svc.zonal.local.',
      'us-west-2b.pin._zone.zh.testns.svc.zonal.local. 5 IN SRV 0 50 80 172-0-5-3.zh.testns.svc.zonal.local.',
    ],
    additional: ['172-0-5-2.zh.testns.svc.zonal.local. 5 IN A 172.0.5.2', '172-0-5-3.zh.testns.svc.zonal.local. 5 IN A 172.0.5.3'],
  },
];

runTable('kubernetes (options)', {
  conf: path.join(fixtures, 'Corefile.options'),
  manifests: [path.join(fixtures, 'manifests')],
  cases,
});
