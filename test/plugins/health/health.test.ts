// health: /health from the real server, and lameduck on shutdown.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { logMessages, startOps, udpQuery, type OpsServer } from '../../fixtures/ops/client.js';
import { waitUntil } from '../../helpers/wait.js';

describe('health through the real server', () => {
  let srv: OpsServer;
  beforeAll(async () => {
    srv = await startOps();
  }, 30000);
  afterAll(async () => srv?.stop());

  it('answers 200 OK on /health', async () => {
    const res = await fetch(srv.url(srv.healthPort, '/health'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('OK');
  });

  it('answers 404 elsewhere', async () => {
    expect((await fetch(srv.url(srv.healthPort, '/'))).status).toBe(404);
  });

  it('keeps answering OK for the lameduck period after SIGTERM while /ready says Shutting down, then exits', async () => {
    const exited = new Promise<void>((resolve) => srv.proc.once('exit', () => resolve()));
    const t0 = Date.now();
    srv.proc.kill('SIGTERM');
    // /ready turns 503 once the shutdown has begun; /health must still say OK then.
    await waitUntil('/ready to fail after SIGTERM', async () => (await fetch(srv.url(srv.readyPort, '/ready'))).status === 503);
    const health = await fetch(srv.url(srv.healthPort, '/health'));
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('OK');
    const ready = await fetch(srv.url(srv.readyPort, '/ready'));
    expect(ready.status).toBe(503);
    expect(await ready.text()).toBe('Shutting down');
    await exited;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(logMessages(srv.logs, { plugin: 'health' })).toContain('Going into lameduck mode for 1s');
    await expect(fetch(srv.url(srv.healthPort, '/health'))).rejects.toThrow();
    await expect(udpQuery(srv.port, 'kubernetes.default.svc.cluster.local', 'A')).rejects.toThrow(/no UDP reply/);
  }, 15000);
});

describe('health setup', () => {
  const corefile = (line: string, block = '') => `example.test {\n  ${line}${block ? ` {\n    ${block}\n  }` : ''}\n}\n`;
  it('takes one address', async () => {
    await expect(buildApp({ corefileText: corefile('health :8080 :8081') })).rejects.toThrow(
      /Corefile:2: health: wrong number of arguments: 2 given, at most 1 expected; usage `health \[ADDRESS\]`/,
    );
    await expect(buildApp({ corefileText: corefile('health 8080') })).rejects.toThrow(/Corefile:2: health: "8080" has no port/);
    await expect(buildApp({ corefileText: corefile('health [::1]:99999') })).rejects.toThrow(/port "99999" is not a number/);
  });
  it('parses lameduck durations', async () => {
    await expect(buildApp({ corefileText: corefile('health :8080', 'lameduck soon') })).rejects.toThrow(
      /Corefile:3: health lameduck: "soon" is not a duration/,
    );
    await expect(buildApp({ corefileText: corefile('health :8080', 'lameduck') })).rejects.toThrow(
      /Corefile:3: health lameduck: wrong number of arguments: 0 given, 1 expected; usage `lameduck DURATION`/,
    );
    await expect(buildApp({ corefileText: corefile('health :8080', 'grace 5s') })).rejects.toThrow(/Corefile:3: unknown health option "grace"/);
    const app = await buildApp({ corefileText: corefile('health 127.0.0.1:0', 'lameduck 1m30s') });
    const health = app.chains[0]!.plugins.find((p) => p.name === 'health') as unknown as { lameduckMs: number };
    expect(health.lameduckMs).toBe(90000);
  });
});
