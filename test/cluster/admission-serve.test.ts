// Admission through the real server: an object the API server would reject is left out and every
// other object is served; a reload whose new version of an object is rejected (or whose document
// cannot be read) keeps serving the version admitted before, as a failed `kubectl apply` leaves
// the old object; --strict refuses instead. Queried with dig over UDP.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digQuery } from '../helpers/clients.js';
import { launcher, startServer, which, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { waitUntil } from '../helpers/wait.js';
import { execFile } from 'node:child_process';
import { buildModel } from '../../src/cluster/load.js';
import type { AdmissionHistory } from '../../src/cluster/admit/history.js';

const svc = (name: string, ip: string, extra = ''): string =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: shop}\nspec:\n  clusterIP: ${ip}\n  ports: [{name: http, port: 80${extra}}]\n`;

const addressOf = async (port: number, name: string): Promise<string> => {
  const obs = await digQuery(which('dig')!, port, `${name}.shop.svc.cluster.local.`, 'A', false);
  return obs.rcode === 'NOERROR' ? (obs.answer[0]?.split(/\s+/).pop() ?? 'NODATA') : obs.rcode;
};

describeNeeding(['dig'], 'admission in a serving process', () => {
  let dir: string;
  let file: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-admission-'));
    file = path.join(dir, 'm', 'shop.yaml');
    await import('node:fs').then((fs) => fs.mkdirSync(path.join(dir, 'm')));
    writeFileSync(
      path.join(dir, 'Corefile'),
      'cluster.local {\n    bind 127.0.0.1\n    kubernetes cluster.local {\n        manifests m\n        watch 100ms\n    }\n}\n',
    );
    // One Service the API server rejects (a port protocol in lower case) beside two it admits.
    writeFileSync(file, [svc('web', '10.96.1.1'), svc('api', '10.96.2.2'), svc('bad', '10.96.3.3', ', protocol: tcp')].join('---\n'));
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  }, 30000);
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts, serves every admitted object and logs the rejected one at its field line', async () => {
    expect(await addressOf(server.port, 'web')).toBe('10.96.1.1');
    expect(await addressOf(server.port, 'api')).toBe('10.96.2.2');
    expect(await addressOf(server.port, 'bad')).toBe('NXDOMAIN');
    const rejected = server.logs.map((l) => JSON.parse(l) as { level: number; msg: string; file?: string; line?: number }).find((l) => l.level === 50);
    expect(rejected).toMatchObject({ file, line: 20 });
    expect(rejected!.msg).toContain('not served: Service "shop/bad": spec.ports[0].protocol must be one of "SCTP", "TCP", "UDP", got "tcp"');
  });

  it('keeps the previous version of an object whose new version is rejected, and applies the valid changes beside it', async () => {
    writeFileSync(file, [svc('web', '10.96.1.9', ', protocol: tcp'), svc('api', '10.96.2.3'), svc('bad', '10.96.3.3', ', protocol: tcp')].join('---\n'));
    await waitUntil('api changed', async () => (await addressOf(server.port, 'api')) === '10.96.2.3', 10000, 100);
    expect(await addressOf(server.port, 'web')).toBe('10.96.1.1');
    expect(server.logs.some((l) => l.includes('"previous-version-served"') && l.includes('shop/web'))).toBe(true);
  });

  it('keeps every object of a document it cannot read, and applies the fixed version once it reads again', async () => {
    writeFileSync(file, [svc('web', '10.96.1.9', ', protocol: tcp'), `${svc('api', '10.96.2.4')}  broken: [unclosed\n`].join('---\n'));
    const before = server.logs.length;
    await waitUntil('reloaded', () => server.logs.slice(before).some((l) => l.includes('kubernetes data reloaded')), 10000, 50);
    expect(await addressOf(server.port, 'api')).toBe('10.96.2.3');
    expect(await addressOf(server.port, 'web')).toBe('10.96.1.1');
    writeFileSync(file, [svc('web', '10.96.1.9'), svc('api', '10.96.2.4')].join('---\n'));
    await waitUntil('web fixed', async () => (await addressOf(server.port, 'web')) === '10.96.1.9', 10000, 100);
    expect(await addressOf(server.port, 'api')).toBe('10.96.2.4');
    // An object removed from a file that reads well is gone, as `kubectl apply --prune` removes it.
    writeFileSync(file, svc('web', '10.96.1.9'));
    await waitUntil('api gone', async () => (await addressOf(server.port, 'api')) === 'NXDOMAIN', 10000, 100);
  });
});

describe('serve --strict', () => {
  it('refuses to start on a manifest error, naming the file and line', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-strict-'));
    try {
      writeFileSync(path.join(dir, 'shop.yaml'), svc('bad', '10.96.3.3', ', protocol: tcp'));
      const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
        execFile(
          process.execPath,
          [launcher, 'serve', '--strict', '-m', dir, '--port', '0', '-c', 'examples/Corefile'],
          { timeout: 20000, cwd: path.join(launcher, '../..') },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, text: stdout + stderr }),
        );
      });
      expect(out.code).toBe(1);
      expect(out.text).toContain('not starting (--strict)');
      expect(out.text).toContain(`${path.join(dir, 'shop.yaml')}:6: Service "shop/bad": spec.ports[0].protocol must be one of`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('admission history across loads (in process)', () => {
  const load = (text: string, previous?: AdmissionHistory, budgetBytes?: number) =>
    buildModel([{ file: 'shop.yaml', text }], undefined, { ...(previous ? { previous } : {}), ...(budgetBytes !== undefined ? { budgetBytes } : {}) });
  const ipOf = (m: ReturnType<typeof load>['model'], name: string): string | undefined => m.services.find((s) => s.name === name)?.clusterIPs[0];

  it("carries a rejected object's admitted version through later loads until a valid one comes", () => {
    const first = load(svc('web', '10.96.1.1'));
    expect(ipOf(first.model, 'web')).toBe('10.96.1.1');
    const second = load(svc('web', '10.96.1.2', ', protocol: tcp'), first.history);
    expect(ipOf(second.model, 'web')).toBe('10.96.1.1');
    expect(second.model.rejected?.map((r) => `${r.kind} ${r.namespace}/${r.name}`)).toEqual(['Service shop/web']);
    expect(second.findings.find((f) => f.code === 'previous-version-served')).toMatchObject({ file: 'shop.yaml', line: 1, severity: 'warning' });
    // Still rejected a load later: the version from two loads ago is what the history carries.
    const third = load(svc('web', '10.96.1.3', ', protocol: tcp'), second.history);
    expect(ipOf(third.model, 'web')).toBe('10.96.1.1');
    const fourth = load(svc('web', '10.96.1.4'), third.history);
    expect(ipOf(fourth.model, 'web')).toBe('10.96.1.4');
    expect(fourth.model.rejected).toEqual([]);
  });

  it('keeps no text over its budget, and says so where the previous version is missed', () => {
    const first = load(svc('web', '10.96.1.1'), undefined, 0);
    expect(first.history?.skipped).toEqual(['shop.yaml']);
    const second = load(svc('web', '10.96.1.2', ', protocol: tcp'), first.history, 0);
    expect(ipOf(second.model, 'web')).toBeUndefined();
    expect(second.findings.find((f) => f.code === 'previous-version-not-kept')?.message).toContain('--manifest-history-bytes');
  });

  it('does not bring back an object deleted from a file that reads well', () => {
    const first = load([svc('web', '10.96.1.1'), svc('api', '10.96.2.2')].join('---\n'));
    const second = load(svc('web', '10.96.1.1'), first.history);
    expect(second.model.services.map((s) => s.name)).toEqual(['web']);
  });
});
