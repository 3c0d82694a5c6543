// examples/Corefile.loopback is the README's locked-down Corefile for use outside a cluster:
// every socket the server opens (DNS over UDP and TCP, health, ready, metrics) is bound to a
// loopback address, and each still works there.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, repoRoot, startServer, which, type RunningServer } from '../helpers/server.js';
import { expectStillServing } from '../server/raw.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';

const ss = which('ss');
let server: RunningServer;
let dir: string;
const ports = { health: 0, ready: 0, metrics: 0 };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-exposure-'));
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  // The shipped file, with free HTTP ports and an upstream where nothing listens, so the test
  // neither collides with other tests nor forwards anything off the machine.
  const text = readFileSync(path.join(repoRoot, 'examples/Corefile.loopback'), 'utf8')
    .replace('127.0.0.1:8080', `127.0.0.1:${ports.health}`)
    .replace('127.0.0.1:8181', `127.0.0.1:${ports.ready}`)
    .replace('127.0.0.1:9153', `127.0.0.1:${ports.metrics}`)
    .replace('/etc/resolv.conf', path.join(repoRoot, 'test/fixtures/no-upstream.resolv.conf'));
  writeFileSync(path.join(dir, 'Corefile'), text);
  server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', path.join(repoRoot, 'test/fixtures/protocol/manifests')]);
}, 30_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the locked-down Corefile (examples/Corefile.loopback)', () => {
  it('answers DNS over UDP and TCP on 127.0.0.1', async () => {
    await expectStillServing({ host: '127.0.0.1', port: server.port });
  });

  it('serves health, ready and metrics on 127.0.0.1', async () => {
    const health = await fetch(`http://127.0.0.1:${ports.health}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${ports.ready}/ready`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
    expect(metrics).toContain('coredns_dns_requests_total');
  });

  it.skipIf(skipOrFailInCI(missingTools('ss'), 'loopback-only sockets (ss)'))('binds every socket it opens to a loopback address (ss)', () => {
    const out = execFileSync(ss!, ['-H', '-l', '-n', '-t', '-u', '-p'], { encoding: 'utf8' });
    const mine = out.split('\n').filter((l) => l.includes(`pid=${server.proc.pid},`));
    // DNS on UDP and TCP for 127.0.0.1 and ::1, plus the three HTTP listeners.
    expect(mine.length, out).toBeGreaterThanOrEqual(7);
    for (const line of mine) {
      const local = line.trim().split(/\s+/)[4] ?? '';
      expect(local, line).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+$/);
    }
  });
});
