// A Corefile reload (SIGHUP) that leaves a kubernetes block and its manifest files as they were
// keeps serving the data already loaded instead of loading it again; a file that changed (its
// size or modification time) is loaded again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { waitUntil } from '../helpers/wait.js';

const service = (ip: string): string =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  clusterIP: ${ip}\n  ports: [{name: http, port: 80}]\n`;

describe('reload with unchanged manifests', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-reuse-'));
    fs.mkdirSync(path.join(dir, 'manifests'));
    fs.writeFileSync(path.join(dir, 'manifests/web.yaml'), service('10.96.1.1'));
    // watch 0: only the SIGHUPs below load anything.
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests manifests\n        watch 0\n    }\n}\n',
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  }, 30000);
  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (): Promise<string> => {
    const r = await dnsQuery(server.port, 'web.default.svc.cluster.local', 'A', 2000);
    return String((r.answers[0] as { data?: unknown } | undefined)?.data);
  };
  const count = (text: string): number => server.logs.filter((l) => l.includes(text)).length;
  const reloaded = (n: number): Promise<void> =>
    waitUntil(
      () => `reload ${n} to be logged; server output:\n${server.logs.slice(-12).join('\n')}\n${server.stderr.join('')}`,
      () => count('configuration reloaded') === n,
      5000,
      50,
    );

  it('serves the data already loaded when nothing changed', async () => {
    expect(count('"kubernetes data loaded"')).toBe(1);
    server.proc.kill('SIGHUP');
    await reloaded(1);
    expect(count('configuration reloaded')).toBe(1);
    expect(count('serving the data already loaded')).toBe(1);
    expect(count('"kubernetes data loaded"')).toBe(1);
    expect(await ask()).toBe('10.96.1.1');
  });

  it('loads again when a manifest changed', async () => {
    fs.writeFileSync(path.join(dir, 'manifests/web.yaml'), service('10.96.2.2'));
    server.proc.kill('SIGHUP');
    await reloaded(2);
    expect(count('configuration reloaded')).toBe(2);
    expect(count('"kubernetes data loaded"')).toBe(2);
    expect(await ask()).toBe('10.96.2.2');
  });

  it('loads again when the kubernetes block changed, though the files did not', async () => {
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests manifests\n        watch 0\n        ttl 7\n    }\n}\n',
    );
    server.proc.kill('SIGHUP');
    await reloaded(3);
    expect(count('configuration reloaded')).toBe(3);
    expect(count('"kubernetes data loaded"')).toBe(3);
    const r = await dnsQuery(server.port, 'web.default.svc.cluster.local', 'A', 2000);
    expect((r.answers[0] as { ttl?: number }).ttl).toBe(7);
  });
});
