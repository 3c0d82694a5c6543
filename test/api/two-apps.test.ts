// Two Apps in one process share nothing: Corefile limits, metrics, lameduck and load permits are
// each App's own (a library user's tests may start several servers side by side).
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.js';
import { loadCluster, type RunningServer } from '../../src/api.js';
import { freePort } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';

const MANIFESTS = ['examples/manifests'];
const opened: App[] = [];

async function started(app: Promise<App>): Promise<{ app: App; port: number }> {
  const a = await app;
  opened.push(a);
  const [first] = await a.listen();
  return { app: a, port: first!.port };
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close(0)));
});

/** Real UDP queries on loopback through Node's resolver (c-ares). */
function resolverOn(port: number): Resolver {
  const r = new Resolver({ timeout: 2000, tries: 1 });
  r.setServers([`127.0.0.1:${port}`]);
  return r;
}

/** coredns_dns_requests_total summed over the series whose server label is `dns://127.0.0.1:PORT`. */
async function requestsCounted(metricsPort: number, dnsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('coredns_dns_requests_total{') || !line.includes(`server="dns://127.0.0.1:${dnsPort}"`)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// The `server` label of the dns metrics is the key's port: each App gets a free port, not port 0.
const corefile = (port: number, metricsPort: number, extra = ''): string =>
  `cluster.local:${port} {\n  bind 127.0.0.1\n  prometheus 127.0.0.1:${metricsPort}\n${extra}  kubernetes\n}\n`;

describe('two library Clusters in one process', () => {
  it('keep their own Corefile limits and count their own queries', async () => {
    const [ma, mb, pa, pb, pc] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const two = `cluster.local {\n  bind 127.0.0.1\n  kubernetes\n}\nexample.test:${pb} {\n  bind 127.0.0.1\n  errors\n}\n`;
    await expect(loadCluster({ manifests: MANIFESTS, corefile: two, corefileLimits: { maxListeners: 1 } })).rejects.toThrow(/--max-corefile-listeners/);
    const servers: RunningServer[] = [];
    const clusters = [
      await loadCluster({ manifests: MANIFESTS, corefile: corefile(pa, ma), corefileLimits: { maxListeners: 1 } }),
      // Two listeners: more than the first Cluster's limit allows, fine under this one's defaults.
      await loadCluster({ manifests: MANIFESTS, corefile: corefile(pb, mb) + `example.test:${pc} {\n  bind 127.0.0.1\n  errors\n}\n` }),
    ];
    try {
      for (const c of clusters) servers.push(await c.serve());
      expect(servers.map((s) => s.port)).toEqual([pa, pb]);
      for (let i = 0; i < 2; i++) expect(await resolverOn(pa).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
      expect(await resolverOn(pb).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
      expect([await requestsCounted(ma, pa), await requestsCounted(ma, pb)]).toEqual([2, 0]);
      expect([await requestsCounted(mb, pb), await requestsCounted(mb, pa)]).toEqual([1, 0]);
    } finally {
      for (const s of servers) await s.close();
      for (const c of clusters) await c.close();
    }
  });
});

describe('two Apps in one process', () => {
  it('each has its own Corefile limits: one refuses a Corefile the other accepts', async () => {
    const text = 'a.test:0 {\n  errors\n}\nb.test:0 {\n  bind 127.0.0.2\n  errors\n}\n';
    const strict = buildApp({ corefileText: text, corefileLimits: { maxListeners: 1 } });
    await expect(strict).rejects.toThrow(/more than 1 listen addresses and ports \(--max-corefile-listeners\)/);
    const lenient = await buildApp({ corefileText: text });
    opened.push(lenient);
    expect(lenient.specs).toHaveLength(2);
    // The lenient App's reload still reads with its own limits after the strict one was built.
    await expect(buildApp({ corefileText: text, corefileLimits: { maxListeners: 1 } })).rejects.toThrow(/--max-corefile-listeners/);
    expect(await lenient.reload('test')).toBe(true);
    expect(lenient.corefileLimits.maxListeners).toBe(256);
  });

  it("each has its own HTTP limits: a connection cap on one leaves the other's listeners alone", async () => {
    const [ra, rb] = [await freePort(), await freePort()];
    const cap = 2;
    const a = await started(
      buildApp({
        corefileText: corefile(await freePort(), await freePort(), `  ready 127.0.0.1:${ra}\n`),
        manifests: MANIFESTS,
        httpLimits: { maxConnections: cap },
      }),
    );
    const b = await started(buildApp({ corefileText: corefile(await freePort(), await freePort(), `  ready 127.0.0.1:${rb}\n`), manifests: MANIFESTS }));
    expect([a.app.httpLimits.maxConnections, b.app.httpLimits.maxConnections]).toEqual([cap, 128]);
    const sockets: net.Socket[] = [];
    const closed = new Set<net.Socket>();
    const idle = async (port: number, n: number): Promise<net.Socket[]> => {
      const out: net.Socket[] = [];
      for (let i = 0; i < n; i++) {
        const s = net.connect(port, '127.0.0.1');
        s.on('error', () => undefined);
        s.once('close', () => closed.add(s));
        await new Promise<void>((resolve) => {
          s.once('connect', () => resolve());
          s.once('close', () => resolve());
        });
        out.push(s);
      }
      sockets.push(...out);
      return out;
    };
    try {
      const toA = await idle(ra, 6);
      const toB = await idle(rb, 6);
      const open = (list: net.Socket[]): number => list.filter((s) => !closed.has(s)).length;
      // Past its cap, A closes its oldest idle connections (one more is let in first).
      await waitUntil('the capped App closing idle connections', () => open(toA) <= cap + 1, 3000);
      expect(open(toB)).toBe(6);
      expect((await fetch(`http://127.0.0.1:${ra}/ready`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${rb}/ready`)).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('each /metrics counts only its own queries', async () => {
    const [ma, mb] = [await freePort(), await freePort()];
    const a = await started(buildApp({ corefileText: corefile(await freePort(), ma), manifests: MANIFESTS }));
    const b = await started(buildApp({ corefileText: corefile(await freePort(), mb), manifests: MANIFESTS }));
    for (let i = 0; i < 3; i++) expect(await resolverOn(a.port).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
    expect(await requestsCounted(ma, a.port)).toBe(3);
    expect(await requestsCounted(mb, b.port)).toBe(0);
    expect(await requestsCounted(mb, a.port)).toBe(0);
    expect(await resolverOn(b.port).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
    expect(await requestsCounted(mb, b.port)).toBe(1);
    expect(await requestsCounted(ma, a.port)).toBe(3);
    expect(await requestsCounted(ma, b.port)).toBe(0);
    expect(a.app.metrics.registry).not.toBe(b.app.metrics.registry);
  });

  it('one App in lameduck leaves the other ready, and both still answer', async () => {
    const [ma, mb, ha, ra, rb] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const a = await started(
      buildApp({
        corefileText: corefile(await freePort(), ma, `  health 127.0.0.1:${ha} {\n    lameduck 2s\n  }\n  ready 127.0.0.1:${ra}\n`),
        manifests: MANIFESTS,
      }),
    );
    const b = await started(buildApp({ corefileText: corefile(await freePort(), mb, `  ready 127.0.0.1:${rb}\n`), manifests: MANIFESTS }));
    const ready = async (port: number): Promise<[number, string]> => {
      const res = await fetch(`http://127.0.0.1:${port}/ready`);
      return [res.status, await res.text()];
    };
    expect(await ready(ra)).toEqual([200, 'OK']);
    expect(await ready(rb)).toEqual([200, 'OK']);
    opened.splice(opened.indexOf(a.app), 1);
    const closing = a.app.close(0);
    try {
      await waitUntil('the closing App in lameduck', () => a.app.lameduck.active, 2000);
      expect(await ready(ra)).toEqual([503, 'Shutting down']);
      expect((await fetch(`http://127.0.0.1:${ha}/health`)).status).toBe(200);
      expect(b.app.lameduck.active).toBe(false);
      expect(await ready(rb)).toEqual([200, 'OK']);
      expect(await resolverOn(b.port).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
      // Lameduck keeps answering DNS while the load balancers take the server out.
      expect(await resolverOn(a.port).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
    } finally {
      await closing;
    }
    expect(await ready(rb)).toEqual([200, 'OK']);
  });

  it('each has its own load permits: a load waiting on one App does not hold the other back', async () => {
    const asked: string[] = [];
    let grant: () => void = () => undefined;
    const granted = new Promise<void>((resolve) => (grant = resolve));
    let given = 0;
    const held = buildApp({
      corefileText: 'cluster.local:0 {\n  bind 127.0.0.1\n  kubernetes\n}\n',
      manifests: MANIFESTS,
      loadPermitGate: async (what) => {
        asked.push(what);
        await granted;
        return () => void given++;
      },
    });
    let heldDone = false;
    void held.then(
      () => (heldDone = true),
      () => (heldDone = true),
    );
    await waitUntil('the held App asking for a permit', () => asked.length > 0, 10_000);
    const free = await started(buildApp({ corefileText: 'cluster.local:0 {\n  bind 127.0.0.1\n  kubernetes\n}\n', manifests: MANIFESTS }));
    expect(await resolverOn(free.port).resolve4('kubernetes.default.svc.cluster.local')).toEqual(['10.96.0.1']);
    expect(heldDone).toBe(false);
    expect(asked).toEqual(['manifests']);
    grant();
    const app = await held;
    opened.push(app);
    expect(given).toBe(1);
    const reply = await app.query('kubernetes.default.svc.cluster.local.', 'A');
    expect(reply.answers?.map((r) => (r as { data?: unknown }).data)).toEqual(['10.96.0.1']);
  });
});
