// Manifests that change under a running server: queries keep being answered, the new data shows
// up within two watch intervals (a change must be stable across two polls), and a broken edit keeps the last good data.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { waitForLines, waitUntil } from '../helpers/wait.js';

const service = (ip: string): string => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  clusterIP: ${ip}
  ports: [{name: http, port: 80}]
`;

describe('manifest reload', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-reload-'));
    fs.mkdirSync(path.join(dir, 'manifests'));
    fs.writeFileSync(path.join(dir, 'manifests/web.yaml'), service('10.96.1.1'));
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests manifests\n        watch 200ms\n    }\n}\n',
    );
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  }, 30000);
  afterAll(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (): Promise<string[]> => {
    const r = await dnsQuery(server.port, 'web.default.svc.cluster.local', 'A', 2000);
    expect(r.rcode).toBe('NOERROR');
    return r.answers.map((a) => String(a.data));
  };

  it('serves the edited manifest without failing a query in between', async () => {
    expect(await ask()).toEqual(['10.96.1.1']);
    fs.writeFileSync(path.join(dir, 'manifests/web.yaml'), service('10.96.2.2'));
    const seen = new Set<string>();
    // Asked every 5 ms: a change applies after two quiet polls (2 x 200 ms).
    await waitUntil(
      () => `the edited address (answered so far: ${[...seen].join(' ')})`,
      async () => {
        const [ip] = await ask();
        seen.add(ip!);
        return ip === '10.96.2.2';
      },
      5000,
      5,
    );
    expect([...seen].every((ip) => ip === '10.96.1.1' || ip === '10.96.2.2')).toBe(true);
    expect(seen.has('10.96.2.2')).toBe(true);
    expect(server.logs.some((l) => l.includes('kubernetes data reloaded'))).toBe(true);
  });

  it('keeps the last good data when an edit breaks the manifests, and names file and line', async () => {
    expect(await ask()).toEqual(['10.96.2.2']);
    fs.writeFileSync(path.join(dir, 'manifests/web.yaml'), service('10.96.3.3') + 'spec: [broken\n');
    // The broken document is not served (an error at its file and line), and the version the
    // previous load admitted keeps serving, as a failed apply leaves the cluster as it was.
    const rejected = (l: string): boolean => l.includes('"level":50') && l.includes('not served:');
    await waitForLines(server.logs, rejected, 'the broken document to be refused', { timeoutMs: 3000, everyMs: 100 });
    const failure = server.logs.find(rejected);
    expect(failure).toBeDefined();
    expect(failure).toMatch(/"file":"[^"]*web\.yaml","line":\d+/);
    expect(await ask()).toEqual(['10.96.2.2']);
  });
});
