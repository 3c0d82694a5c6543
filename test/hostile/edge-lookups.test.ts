// k8s_external: a Service whose load balancer is a host name answered A with
// one CNAME and one upstream lookup per port (1,000 ports: 1,002 upstream queries and seconds per
// client query). Each distinct host name is now chased once per answer, and at most `max_lookups`
// of them. A counting upstream on loopback (the forward plugin's target for lb.test) shows it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { TestDns, udpQuery } from '../fixtures/forward/upstreams.js';

const PORTS = 300;
const HOSTNAMES = 40;

function service(name: string, ports: number, hostnames: readonly string[]): string {
  const portLines = Array.from({ length: ports }, (_, i) => `    - name: p${i}\n      port: ${1000 + i}\n`).join('');
  const ingress = hostnames.map((h) => `      - hostname: ${h}\n`).join('');
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: default
spec:
  type: LoadBalancer
  ports:
${portLines}status:
  loadBalancer:
    ingress:
${ingress}`;
}

describe('k8s_external chases each load balancer host name once per answer', () => {
  let dir: string;
  let upstream: TestDns;
  let server: RunningServer;

  beforeAll(async () => {
    upstream = await new TestDns(({ name }) => ({ answers: [{ name, type: 'A', ttl: 5, data: '192.0.2.10' }] })).start();
    dir = mkdtempSync(path.join(tmpdir(), 'edge-lookups-'));
    const manifests = path.join(dir, 'services.yaml');
    writeFileSync(
      manifests,
      [
        service('wide', PORTS, ['elb-1.lb.test']),
        service(
          'many',
          2,
          Array.from({ length: HOSTNAMES }, (_, i) => `elb-${i}.many.lb.test`),
        ),
      ].join('---\n'),
    );
    const corefile = path.join(dir, 'Corefile');
    writeFileSync(
      corefile,
      `. {\n  bind 127.0.0.1\n  kubernetes cluster.local\n  k8s_external example.org {\n    max_lookups 4\n  }\n}\n` +
        `lb.test {\n  bind 127.0.0.1\n  forward . 127.0.0.1:${upstream.port}\n}\n`,
    );
    server = await startServer(['--conf', corefile, '--manifests', manifests]);
  });
  afterAll(async () => {
    await server?.stop();
    await upstream?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`one host name behind ${PORTS} ports: one upstream query per client query`, async () => {
    const before = upstream.count();
    const { packet } = await udpQuery(server.port, 'wide.default.example.org', 'A', { do: false, timeoutMs: 10_000 });
    expect(packet.rcode).toBe('NOERROR');
    // Before: one lookup per port (300), and the CNAME and its answer as many times.
    expect(upstream.count() - before).toBe(1);
    const answer = packet.answers.map((a) => `${a.name} ${a.type} ${String(a.data)}`);
    expect(answer).toEqual(['wide.default.example.org CNAME elb-1.lb.test', 'elb-1.lb.test A 192.0.2.10']);
  });

  it('SRV over the same Service: the target looked up once per family', async () => {
    const before = upstream.count();
    const { packet } = await udpQuery(server.port, 'wide.default.example.org', 'SRV', { do: false, timeoutMs: 10_000 });
    expect(packet.rcode).toBe('NOERROR');
    expect(upstream.count() - before).toBeLessThanOrEqual(2);
  });

  it(`${HOSTNAMES} host names: at most max_lookups (4) chased, every CNAME listed`, async () => {
    const before = upstream.count();
    const { packet } = await udpQuery(server.port, 'many.default.example.org', 'A', { do: false, timeoutMs: 10_000 });
    expect(packet.rcode).toBe('NOERROR');
    expect(upstream.count() - before).toBeLessThanOrEqual(4);
    expect(packet.answers.filter((a) => a.type === 'A')).toHaveLength(4);
    // The server still answers others at once.
    const { packet: plain } = await udpQuery(server.port, 'wide.default.svc.cluster.local', 'A', { timeoutMs: 2000 });
    expect(plain.rcode).toBe('NOERROR');
  });
});
