import { describe, it, expect } from 'vitest';
import { loadCluster } from 'clusterdns';

describe('service discovery from a pod', () => {
  it('from pod web-0, db resolves to the db service IP', async () => {
    const cluster = await loadCluster({ manifests: ['examples/manifests'] });
    const db = cluster.model!.services.find((s) => s.namespace === 'apps' && s.name === 'db')!;

    const trace = await cluster.resolve('db', { from: 'apps/web-0' });

    expect(trace.result.status).toBe('ok');
    expect(trace.result.answers).toEqual(db.clusterIPs);
    expect(trace.queries.map((q) => `${q.name} ${q.type}`)).toEqual(['db.apps.svc.cluster.local. A', 'db.apps.svc.cluster.local. AAAA']);
    await cluster.close();
  });

  it('a real server for the same cluster answers on a loopback port', async () => {
    const cluster = await loadCluster({ manifests: ['examples/manifests'], corefile: 'cluster.local {\n  bind 127.0.0.1\n  kubernetes\n}\n' });
    const server = await cluster.serve({ port: 0 });
    const { Resolver } = await import('node:dns/promises');
    const resolver = new Resolver();
    resolver.setServers([`127.0.0.1:${server.port}`]);
    expect(await resolver.resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
    await server.close();
    await cluster.close();
  });
});
