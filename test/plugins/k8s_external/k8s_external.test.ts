// k8s_external through the real server with dig: CoreDNS's plugin/k8s_external table
// (external_test.go, apex_test.go) on manifests, plus LoadBalancer status, the pool, headless and
// zone transfer.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digQuery } from '../../helpers/clients.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const dir = path.join(repoRoot, 'test/fixtures/edge/external');
const SOA = 'example.org. 5 IN SOA ns1.dns.example.org. hostmaster.dns.example.org. * 7200 1800 86400 5';

type Row = [name: string, type: string, rcode: string, answer: string[], authority?: string[], additional?: string[]];

// Expected lines are "owner ttl IN type rdata"; '*' matches one token (the content serial).
const rows: Row[] = [
  ['svc1.testns.example.org', 'A', 'NOERROR', ['svc1.testns.example.org. 5 IN A 1.2.3.4']],
  // SRV records carry the kubernetes plugin's ttl (7 here), the glue k8s_external's (5).
  [
    'svc1.testns.example.org',
    'SRV',
    'NOERROR',
    ['svc1.testns.example.org. 7 IN SRV 0 100 80 svc1.testns.example.org.'],
    [],
    ['svc1.testns.example.org. 5 IN A 1.2.3.4'],
  ],
  [
    '_http._tcp.svc1.testns.example.org',
    'SRV',
    'NOERROR',
    ['_http._tcp.svc1.testns.example.org. 7 IN SRV 0 100 80 svc1.testns.example.org.'],
    [],
    ['svc1.testns.example.org. 5 IN A 1.2.3.4'],
  ],
  ['*._not-udp-or-tcp.svc1.testns.example.org', 'SRV', 'NXDOMAIN', [], [SOA]],
  ['svc1.testns.example.org', 'AAAA', 'NOERROR', [], [SOA]],
  ['svc1.testns.example.org', 'MX', 'NOERROR', [], [SOA]],
  ['svc0.testns.example.org', 'A', 'NXDOMAIN', [], [SOA]],
  ['svc0.svc-nons.example.org', 'A', 'NXDOMAIN', [], [SOA]],
  ['svc6.testns.example.org', 'AAAA', 'NOERROR', ['svc6.testns.example.org. 5 IN AAAA 1:2::5']],
  [
    '_http._tcp.svc6.testns.example.org',
    'SRV',
    'NOERROR',
    ['_http._tcp.svc6.testns.example.org. 7 IN SRV 0 100 80 svc6.testns.example.org.'],
    [],
    ['svc6.testns.example.org. 5 IN AAAA 1:2::5'],
  ],
  ['testns.example.org', 'A', 'NOERROR', [], [SOA]],
  ['testns.example.org', 'SOA', 'NOERROR', [], [SOA]],
  // A service without external addresses does not exist outside.
  ['internal.testns.example.org', 'A', 'NXDOMAIN', [], [SOA]],
  // status.loadBalancer.ingress: an ip is an address, a hostname a CNAME chased through the server.
  ['lb.testns.example.org', 'A', 'NOERROR', ['lb.testns.example.org. 5 IN A 203.0.113.7']],
  ['elb.testns.example.org', 'A', 'NOERROR', ['elb.testns.example.org. 7 IN CNAME svc1.testns.example.org.', 'svc1.testns.example.org. 5 IN A 1.2.3.4']],
  // headless: the endpoints answer, by service and endpoint name.
  ['hdls.testns.example.org', 'A', 'NOERROR', ['hdls.testns.example.org. 5 IN A 10.244.1.10']],
  ['hdls-0.hdls.testns.example.org', 'A', 'NOERROR', ['hdls-0.hdls.testns.example.org. 5 IN A 10.244.1.10']],
  [
    '_http._tcp.hdls.testns.example.org',
    'SRV',
    'NOERROR',
    ['_http._tcp.hdls.testns.example.org. 7 IN SRV 0 100 80 hdls-0.hdls.testns.example.org.'],
    [],
    ['hdls-0.hdls.testns.example.org. 5 IN A 10.244.1.10'],
  ],
  // A Service (here a headless one) without ports: its endpoints answer A, SRV is NODATA, as
  // CoreDNS gives it one port -1 (object.ToService, EndpointSliceToEndpoints) that srv() skips.
  ['hdls-np.testns.example.org', 'A', 'NOERROR', ['hdls-np.testns.example.org. 5 IN A 10.244.1.11']],
  ['hdls-np.testns.example.org', 'SRV', 'NOERROR', [], [SOA]],
  ['hdls-np-0.hdls-np.testns.example.org', 'SRV', 'NOERROR', [], [SOA]],
  ['_http._tcp.hdls-np.testns.example.org', 'SRV', 'NXDOMAIN', [], [SOA]],
  // A LoadBalancer Service whose dump writes `status: {loadBalancer: {}}` is pending: no address.
  ['pending.testns.example.org', 'A', 'NXDOMAIN', [], [SOA]],
  ['pending.testns.example.org', 'SRV', 'NXDOMAIN', [], [SOA]],
  // PTR of an external address, in the reverse zone k8s_external also serves.
  ['4.3.2.1.in-addr.arpa', 'PTR', 'NOERROR', ['4.3.2.1.in-addr.arpa. 5 IN PTR svc1.testns.example.org.']],
  ['svc1.testns.example.org', 'PTR', 'NOERROR', [], [SOA]],
  ['not-existing.testns.example.org', 'PTR', 'NXDOMAIN', [], [SOA]],
  // apex: SOA, NS ns1.dns.ZONE with the kube-dns Service's external address as glue.
  ['example.org', 'SOA', 'NOERROR', [SOA]],
  ['example.org', 'NS', 'NOERROR', ['example.org. 5 IN NS ns1.dns.example.org.'], [], ['ns1.dns.example.org. 5 IN A 192.0.2.53']],
  ['example.org', 'A', 'NOERROR', [], [SOA]],
  ['ns1.dns.example.org', 'A', 'NOERROR', ['ns1.dns.example.org. 5 IN A 192.0.2.53']],
  ['ns1.dns.example.org', 'AAAA', 'NOERROR', [], [SOA]],
  ['dns.example.org', 'A', 'NOERROR', [], [SOA]],
  ['ns2.dns.example.org', 'A', 'NXDOMAIN', [], [SOA]],
  ['a.ns1.dns.example.org', 'A', 'NXDOMAIN', [], [SOA]],
];

function match(expected: string[], actual: string[]): void {
  expect(actual.length, `${actual.join('\n')}`).toBe(expected.length);
  expected.forEach((e, i) => {
    const et = e.split(/\s+/);
    const at = actual[i]!.split(/\s+/);
    expect(at.map((t, j) => (et[j] === '*' ? '*' : t)).join(' ')).toBe(et.join(' '));
  });
}

describeNeeding(['dig'], 'k8s_external through the real server (dig)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests.yaml')]);
  });
  afterAll(async () => server?.stop());

  it.each(rows)('%s %s -> %s', async (name, type, rcode, answer, authority = [], additional = []) => {
    const obs = await digQuery(dig!, server.port, name, type, false);
    expect(obs.rcode).toBe(rcode);
    expect(obs.flags).toContain('aa');
    match(answer, obs.answer);
    match(authority, obs.authority);
    match(additional, obs.additional);
  });

  it('a LoadBalancer Service without status gets a pool address, the same on every run', async () => {
    const obs = await digQuery(dig!, server.port, 'pooled.testns.example.org', 'A', false);
    expect(obs.answer).toHaveLength(1);
    const ip = obs.answer[0]!.split(/\s+/)[4]!;
    expect(ip).toMatch(/^172\.18\.255\.\d+$/);
    const again = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests.yaml')]);
    try {
      const obs2 = await digQuery(dig!, again.port, 'pooled.testns.example.org', 'A', true);
      expect(obs2.answer[0]!.split(/\s+/)[4]).toBe(ip);
    } finally {
      await again.stop();
    }
  });

  it('AXFR through the transfer plugin: SOA, NS, glue, services by name, headless addresses and SRV records, SOA', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        dig!,
        ['@127.0.0.1', '-p', String(server.port), '+time=5', '+tries=1', '+noall', '+answer', 'AXFR', 'example.org'],
        { timeout: 15000 },
        (err, stdout) => (err && !stdout ? reject(err) : resolve(stdout)),
      ),
    );
    const lines = out
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith(';'))
      .map((l) =>
        l
          .split(/\s+/)
          .filter((_, i) => i !== 1 && i !== 2)
          .join(' '),
      );
    expect(lines[0]).toMatch(/^example\.org\. SOA ns1\.dns\.example\.org\. hostmaster\.dns\.example\.org\. \d+ 7200 1800 86400 5$/);
    expect(lines.slice(1, -1)).toEqual([
      'example.org. NS ns1.dns.example.org.',
      'ns1.dns.example.org. A 192.0.2.53',
      'elb.testns.example.org. CNAME svc1.testns.example.org.',
      'elb.testns.example.org. SRV 0 100 443 svc1.testns.example.org.',
      '_._tcp.elb.testns.example.org. SRV 0 100 443 svc1.testns.example.org.',
      'kube-dns.kube-system.example.org. A 192.0.2.53',
      'kube-dns.kube-system.example.org. SRV 0 100 53 kube-dns.kube-system.example.org.',
      '_dns._udp.kube-dns.kube-system.example.org. SRV 0 100 53 kube-dns.kube-system.example.org.',
      'lb.testns.example.org. A 203.0.113.7',
      'lb.testns.example.org. SRV 0 100 443 lb.testns.example.org.',
      '_https._tcp.lb.testns.example.org. SRV 0 100 443 lb.testns.example.org.',
      expect.stringMatching(/^pooled\.testns\.example\.org\. A 172\.18\.255\.\d+$/),
      'pooled.testns.example.org. SRV 0 100 8080 pooled.testns.example.org.',
      '_http._tcp.pooled.testns.example.org. SRV 0 100 8080 pooled.testns.example.org.',
      'svc1.testns.example.org. A 1.2.3.4',
      'svc1.testns.example.org. SRV 0 100 80 svc1.testns.example.org.',
      '_http._tcp.svc1.testns.example.org. SRV 0 100 80 svc1.testns.example.org.',
      'svc6.testns.example.org. AAAA 1:2::5',
      'svc6.testns.example.org. SRV 0 100 80 svc6.testns.example.org.',
      '_http._tcp.svc6.testns.example.org. SRV 0 100 80 svc6.testns.example.org.',
      // transfer.go's headless groups: the Service's addresses and bare SRV records to its
      // endpoints, each endpoint's address and SRV, then the named ports' SRV records.
      'hdls.testns.example.org. A 10.244.1.10',
      'hdls.testns.example.org. SRV 0 100 80 hdls-0.hdls.testns.example.org.',
      'hdls-0.hdls.testns.example.org. A 10.244.1.10',
      'hdls-0.hdls.testns.example.org. SRV 0 100 80 hdls-0.hdls.testns.example.org.',
      '_http._tcp.hdls.testns.example.org. SRV 0 100 80 hdls-0.hdls.testns.example.org.',
      // No ports: addresses only.
      'hdls-np.testns.example.org. A 10.244.1.11',
      'hdls-np-0.hdls-np.testns.example.org. A 10.244.1.11',
    ]);
    expect(lines.at(-1)).toBe(lines[0]);
  });

  it('AXFR of a headless StatefulSet: the SRV weights split as the SRV answer splits them, one group per named port', async () => {
    const os = await import('node:os');
    const fs = await import('node:fs');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-external-axfr-'));
    const corefile = '. {\n  bind 127.0.0.1\n  transfer example.org {\n    to *\n  }\n  kubernetes cluster.local\n';
    fs.writeFileSync(path.join(tmp, 'Corefile'), `${corefile}  k8s_external example.org {\n    headless\n  }\n}\n`);
    fs.writeFileSync(
      path.join(tmp, 'm.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: ns}\nspec:\n  clusterIP: None\n  selector: {app: db}\n' +
        '  ports: [{name: pg, port: 5432}, {name: repl, port: 7000}]\n---\n' +
        'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: ns}\nspec:\n  serviceName: db\n  replicas: 2\n' +
        '  selector: {matchLabels: {app: db}}\n' +
        '  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c, image: postgres}]}\n',
    );
    const srv = await startServer(['--conf', path.join(tmp, 'Corefile'), '--manifests', path.join(tmp, 'm.yaml')]);
    try {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          dig!,
          ['@127.0.0.1', '-p', String(srv.port), '+time=5', '+tries=1', '+noall', '+answer', 'AXFR', 'example.org'],
          { timeout: 15000 },
          (err, stdout) => (err && !stdout ? reject(err) : resolve(stdout)),
        ),
      );
      const lines = out
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) =>
          l
            .split(/\s+/)
            .filter((_, i) => i !== 1 && i !== 2)
            .join(' '),
        );
      const ip = /^10\.244\.\d+\.\d+$/;
      expect(lines.slice(2, -1).map((l) => l.replace(/ A 10\.244\.\d+\.\d+$/, ' A IP'))).toEqual([
        'db.ns.example.org. A IP',
        'db.ns.example.org. A IP',
        // Four (endpoint, port) items: weight floor(100 / 4), as the SRV answer gives.
        'db.ns.example.org. SRV 0 25 5432 db-0.db.ns.example.org.',
        'db.ns.example.org. SRV 0 25 7000 db-0.db.ns.example.org.',
        'db.ns.example.org. SRV 0 25 5432 db-1.db.ns.example.org.',
        'db.ns.example.org. SRV 0 25 7000 db-1.db.ns.example.org.',
        'db-0.db.ns.example.org. A IP',
        'db-0.db.ns.example.org. SRV 0 100 5432 db-0.db.ns.example.org.',
        'db-0.db.ns.example.org. SRV 0 100 7000 db-0.db.ns.example.org.',
        'db-1.db.ns.example.org. A IP',
        'db-1.db.ns.example.org. SRV 0 100 5432 db-1.db.ns.example.org.',
        'db-1.db.ns.example.org. SRV 0 100 7000 db-1.db.ns.example.org.',
        // One group per named port (the API server requires names on a Service of several ports),
        // each split over its two items.
        '_pg._tcp.db.ns.example.org. SRV 0 50 5432 db-0.db.ns.example.org.',
        '_pg._tcp.db.ns.example.org. SRV 0 50 5432 db-1.db.ns.example.org.',
        '_repl._tcp.db.ns.example.org. SRV 0 50 7000 db-0.db.ns.example.org.',
        '_repl._tcp.db.ns.example.org. SRV 0 50 7000 db-1.db.ns.example.org.',
      ]);
      expect(lines.filter((l) => / A /.test(l)).every((l) => ip.test(l.split(' ').at(-1)!))).toBe(true);
      const answer = await digQuery(dig!, srv.port, 'db.ns.example.org', 'SRV', false);
      expect(answer.answer.map((l) => l.split(/\s+/).slice(4).join(' '))).toEqual(lines.slice(4, 8).map((l) => l.split(' ').slice(2).join(' ')));
    } finally {
      await srv.stop();
      fs.rmSync(tmp, { recursive: true });
    }
  });

  it('without a kubernetes plugin in the block, the server refuses to start and names the line', async () => {
    const { buildApp } = await import('../../../src/app.js');
    const os = await import('node:os');
    const fs = await import('node:fs');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-external-'));
    const conf = path.join(tmp, 'Corefile');
    fs.writeFileSync(conf, 'example.org {\n  bind 127.0.0.1\n  k8s_external\n}\n');
    await expect(buildApp({ conf, manifests: [path.join(dir, 'manifests.yaml')], port: 0 })).rejects.toThrow(/Corefile:3.*kubernetes plugin not loaded/s);
    fs.rmSync(tmp, { recursive: true });
  });
});

describe('Corefile errors of the edge plugins name the line', () => {
  it.each([
    ['k8s_external example.org {\n    ttl 4000\n  }', /Corefile:4.*ttl must be in range \[0, 3600\]: 4000/s],
    ['k8s_external example.org {\n    apex\n  }', /Corefile:4.*k8s_external apex: wrong number of arguments/s],
    ['k8s_external example.org {\n    bogus\n  }', /Corefile:4.*unknown k8s_external option "bogus"/s],
    ['k8s_gateway example.org {\n    resources Ingress Widget\n  }', /Corefile:4.*unknown resource "Widget"/s],
    ['k8s_gateway example.org {\n    ttl x\n  }', /Corefile:4.*ttl "x" is not an integer/s],
    ['k8s_gateway example.org {\n    nope 1\n  }', /Corefile:4.*unknown k8s_gateway option "nope"/s],
  ])('%s', async (directive, re) => {
    const { buildApp } = await import('../../../src/app.js');
    const os = await import('node:os');
    const fs = await import('node:fs');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'edge-corefile-'));
    const conf = path.join(tmp, 'Corefile');
    fs.writeFileSync(conf, `. {\n  kubernetes cluster.local\n  ${directive}\n}\n`);
    try {
      await expect(buildApp({ conf, manifests: [path.join(dir, 'manifests.yaml')], port: 0 })).rejects.toThrow(re);
    } finally {
      fs.rmSync(tmp, { recursive: true });
    }
  });
});
