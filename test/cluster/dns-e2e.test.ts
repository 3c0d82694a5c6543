// Real-looking manifest sets (a rendered StatefulSet chart, a Deployment with named target ports,
// a dual-stack Service, a `kubectl get -o yaml` dump) served by the real server and asked with dig.
import { it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { startServer, which, type RunningServer } from '../helpers/server.js';
import { cidrContains } from '../../src/pkg/ip.js';
import { describeNeeding } from '../helpers/tools.js';

const dig = which('dig');

const manifests = ['test/fixtures/manifests/helm', 'test/fixtures/manifests/dump', 'test/fixtures/manifests/e2e'];

describeNeeding(['dig'], 'derived cluster state through the real server (dig)', () => {
  let server: RunningServer;
  const ask = (name: string, type = 'A', extra: string[] = []): string[] =>
    execFileSync(dig!, ['@127.0.0.1', '-p', String(server.port), '+norec', '+short', ...extra, name, type], { encoding: 'utf8', timeout: 10000 })
      .split('\n')
      .filter((l) => l !== '')
      .sort();
  const status = (name: string, type = 'A'): string =>
    /status: (\w+)/.exec(execFileSync(dig!, ['@127.0.0.1', '-p', String(server.port), '+norec', name, type], { encoding: 'utf8', timeout: 10000 }))?.[1] ?? '';

  beforeAll(async () => {
    server = await startServer(['--conf', 'examples/Corefile', ...manifests.flatMap((m) => ['--manifests', m])]);
  }, 30000);
  afterAll(async () => server?.stop());

  it('StatefulSet pods answer by hostname under the headless service, each with its own IP', () => {
    const all = ask('nginx.default.svc.cluster.local');
    expect(all).toHaveLength(3);
    const each = ['web-0', 'web-1', 'web-2'].map((p) => ask(`${p}.nginx.default.svc.cluster.local`));
    for (const ips of each) expect(ips).toHaveLength(1);
    expect(each.flat().sort()).toEqual(all);
    for (const ip of all) expect(cidrContains('10.244.0.0/16', ip)).toBe(true);
  });

  it('headless SRV targets the pods by hostname on the resolved target port', () => {
    const srv = ask('_http._tcp.nginx.default.svc.cluster.local', 'SRV');
    expect(srv).toEqual([
      '0 33 8080 web-0.nginx.default.svc.cluster.local.',
      '0 33 8080 web-1.nginx.default.svc.cluster.local.',
      '0 33 8080 web-2.nginx.default.svc.cluster.local.',
    ]);
  });

  it('a Deployment behind a ClusterIP service: allocated IP, service-port SRV, endpoints on named target ports', () => {
    const [ip] = ask('api.store.svc.cluster.local');
    expect(cidrContains('10.96.0.0/12', ip!)).toBe(true);
    expect(ask('_http._tcp.api.store.svc.cluster.local', 'SRV')).toEqual(['0 100 80 api.store.svc.cluster.local.']);
    expect(ask('_grpc._tcp.api.store.svc.cluster.local', 'SRV')).toEqual(['0 100 9000 api.store.svc.cluster.local.']);
    // Each pod is an endpoint named by its dashed IP; its SRV carries the container ports.
    const endpointNames = execFileSync(
      process.execPath,
      ['bin/clusterdns.js', 'records', '--conf', 'examples/Corefile', ...manifests.flatMap((m) => ['--manifests', m])],
      { encoding: 'utf8' },
    )
      .split('\n')
      .filter((l) => /^10-244-\d+-\d+\.api\.store\.svc\.cluster\.local\.\t/.test(l))
      .map((l) => l.split('\t')[0]!);
    expect(endpointNames).toHaveLength(3);
    for (const name of endpointNames) {
      const [a] = ask(name);
      expect(name.startsWith(a!.replaceAll('.', '-') + '.')).toBe(true);
      expect(ask(name, 'SRV')).toEqual([`0 50 8080 ${name}`, `0 50 9090 ${name}`]);
      expect(execFileSync(dig!, ['@127.0.0.1', '-p', String(server.port), '+short', '-x', a!], { encoding: 'utf8' }).trim()).toBe(name);
    }
  });

  it('a RequireDualStack service with IPv6 first has both families, and IPv6 pods endpoints', () => {
    const v4 = ask('edge.store.svc.cluster.local', 'A');
    const v6 = ask('edge.store.svc.cluster.local', 'AAAA');
    expect(v4).toHaveLength(1);
    expect(v6).toHaveLength(1);
    expect(cidrContains('fd00:10:96::/112', v6[0]!)).toBe(true);
    expect(ask('_https._tcp.edge.store.svc.cluster.local', 'SRV')).toEqual(['0 50 443 edge.store.svc.cluster.local.']);
  });

  it('a kubectl dump keeps its own IPs and pods: no derived pods for owned workloads', () => {
    expect(ask('cart.shop.svc.cluster.local')).toEqual(['10.96.50.50']);
    expect(ask('db-0.db.shop.svc.cluster.local')).toEqual(['10.244.1.20']);
    expect(ask('db.shop.svc.cluster.local', 'SRV')).toEqual(['0 100 5432 db-0.db.shop.svc.cluster.local.']);
  });

  it('names that do not exist are NXDOMAIN, existing namespaces NODATA', () => {
    expect(status('web-9.nginx.default.svc.cluster.local')).toBe('NXDOMAIN');
    expect(status('store.svc.cluster.local')).toBe('NOERROR');
    expect(status('nope.svc.cluster.local')).toBe('NXDOMAIN');
  });

  it('serves the same IPs on every start (deterministic allocation)', async () => {
    const before = ask('api.store.svc.cluster.local').concat(ask('nginx.default.svc.cluster.local'));
    const again = await startServer([
      '--conf',
      'examples/Corefile',
      ...manifests
        .slice()
        .reverse()
        .flatMap((m) => ['--manifests', m]),
    ]);
    try {
      const after = execFileSync(dig!, ['@127.0.0.1', '-p', String(again.port), '+short', 'api.store.svc.cluster.local'], { encoding: 'utf8' })
        .concat(execFileSync(dig!, ['@127.0.0.1', '-p', String(again.port), '+short', 'nginx.default.svc.cluster.local'], { encoding: 'utf8' }))
        .split('\n')
        .filter((l) => l !== '');
      expect(after.slice(0, 1)).toEqual(before.slice(0, 1));
      expect(after.slice(1).sort()).toEqual(before.slice(1).sort());
    } finally {
      await again.stop();
    }
  });
});
