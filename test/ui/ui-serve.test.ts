// `clusterdns serve --ui ADDR`: the server answers DNS and serves the page of `clusterdns ui`
// beside it, with its Content-Security-Policy and the records the server serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/ui/server.js';
import type { RecordsResponse } from '../../src/ui/types.js';
import { dnsQuery } from '../cli/udp-query.js';
import { freePort, type RunningServer, startServer } from '../helpers/server.js';

describe('clusterdns serve --ui', () => {
  let server: RunningServer;
  let uiPort: number;
  beforeAll(async () => {
    uiPort = await freePort();
    // A bare port: the page is on loopback.
    server = await startServer(['--conf', 'examples/Corefile', '--manifests', 'examples/manifests', '--ui', String(uiPort)], { timeoutMs: 60000 });
  }, 90000);
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the page with the CSP on loopback and logs its address', async () => {
    expect(server.logs.join('\n')).toContain(`clusterdns ui: open http://127.0.0.1:${uiPort}/`);
    const res = await fetch(`http://127.0.0.1:${uiPort}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await res.text()).toContain('<script type="module" src="/page.js"></script>');
    expect((await fetch(`http://127.0.0.1:${uiPort}/page.js`)).status).toBe(200);
  });

  it('lists the served records under /api/records, and DNS still answers them', async () => {
    const records = (await (await fetch(`http://127.0.0.1:${uiPort}/api/records`)).json()) as RecordsResponse;
    const apps = records.namespaces.find((ns) => ns.name === 'apps');
    const dual = apps?.objects.find((o) => o.kind === 'Service' && o.name === 'dual');
    const a = dual?.records.filter((r) => r.type === 'A').map((r) => `${r.name} ${r.data}`);
    expect(a).toContain('dual.apps.svc.cluster.local. 10.96.100.100');
    const reply = await dnsQuery(server.port, 'dual.apps.svc.cluster.local', 'A');
    expect(reply.answers.filter((x) => x.type === 'A').map((x) => String(x.data))).toEqual(['10.96.100.100']);
  });
});
