// Load balancer host names that resolve back to themselves (an Ingress whose status hostname is
// its own host, a k8s_gateway host and a k8s_external name pointing at each other): each query
// is answered within bounded time and nesting, and the server keeps answering.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../helpers/clients.js';
import { repoRoot, startServer, which, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';

const dig = which('dig');
const dir = path.join(repoRoot, 'test/fixtures/edge/loops');

describeNeeding(['dig'], 'edge host name loops', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(dir, 'manifests.yaml')]);
  });
  afterAll(async () => server?.stop());

  it.each([
    ['self.example.com', 'A'],
    ['ping.example.com', 'A'],
    ['pong.default.example.org', 'A'],
    ['pong.default.example.org', 'AAAA'],
  ])('%s %s is answered (no address), quickly, over UDP and TCP', async (name, type) => {
    for (const tcp of [false, true]) {
      const started = Date.now();
      const obs = await digQuery(dig!, server.port, name, type, tcp);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(['NOERROR', 'NXDOMAIN']).toContain(obs.rcode);
      expect(obs.answer.filter((l) => / IN (A|AAAA) /.test(l))).toEqual([]);
      // Nesting is bounded: a handful of CNAMEs at most, not one per loop turn forever.
      expect(obs.answer.length).toBeLessThanOrEqual(16);
    }
  });

  it('still answers a plain name after the loops', async () => {
    const obs = await digQuery(dig!, server.port, 'pong.default.svc.cluster.local', 'A', false);
    expect(obs.rcode).toBe('NOERROR');
    expect(obs.answer).toHaveLength(1);
  });
});
