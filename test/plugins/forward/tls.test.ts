// forward to tls:// upstreams (DNS over TLS): the upstream is a clusterdns tls:// block on
// loopback with a throwaway CA, reached through a counting TCP proxy; the forwarding server is
// asked with dig and in process. After CoreDNS's plugin/forward and plugin/pkg/proxy.
import { afterAll, beforeAll, expect, it } from 'vitest';
import net from 'node:net';
import pino from 'pino';
import { buildApp, type App } from '../../../src/app.js';
import { ForwardPlugin } from '../../../src/plugins/forward/plugin.js';
import { ask } from '../../helpers/decode.js';
import { digQuery } from '../../helpers/clients.js';
import { which } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';
import { holdsWithin, waitUntil } from '../../helpers/wait.js';
import { dotHostname, makeCerts, type TestCerts } from '../../server/dot-certs.js';
import { CountingProxy } from './counting-proxy.js';

const dig = which('dig');
const wwwIp = '192.0.2.53';

/** A DNS over TLS upstream: www.example.test A 192.0.2.53; `tlsLine` its tls plugin line. */
async function dotUpstream(tlsLine: string): Promise<{ app: App; port: number }> {
  const corefileText = `tls://.:0 {\n  bind 127.0.0.1\n  ${tlsLine}\n  hosts {\n    ${wwwIp} www.example.test\n  }\n}\n`;
  const app = await buildApp({ corefileText, logger: pino({ level: 'silent' }) });
  const [first] = await app.listen();
  return { app, port: first!.port };
}

function forwardOf(app: App): ForwardPlugin {
  for (const c of app.chains) for (const p of c.plugins) if (p instanceof ForwardPlugin) return p;
  throw new Error('no forward plugin');
}

async function cacheCount(app: App, which: 'proxyConnCacheHits' | 'proxyConnCacheMisses', to: string): Promise<number> {
  const m = await app.metrics.m[which].get();
  return m.values.find((v) => v.labels.to === to && v.labels.proto === 'tcp-tls')?.value ?? 0;
}

describeNeeding(['openssl'], 'forward over DNS over TLS', () => {
  let c: TestCerts;
  let up: { app: App; port: number };
  const apps: App[] = [];
  const proxies: CountingProxy[] = [];

  beforeAll(async () => {
    c = makeCerts();
    up = await dotUpstream(`tls ${c.serverCert} ${c.serverKey}`);
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const p of proxies) await p.close();
    await up?.app.close();
    c?.remove();
  });

  /** A counting proxy to the upstream, or with `down` to nothing yet. */
  const proxy = async (down = false): Promise<CountingProxy> => {
    const p = new CountingProxy(down ? undefined : up.port);
    await p.listen();
    proxies.push(p);
    return p;
  };
  /** A forwarding server on loopback; `logs` gets its log lines at debug level. */
  const forwarder = async (forwardLine: string, logs: string[] = []): Promise<{ app: App; port: number }> => {
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
    const app = await buildApp({ corefileText: `.:0 {\n  bind 127.0.0.1\n  ${forwardLine}\n}\n`, logger });
    apps.push(app);
    const [first] = await app.listen();
    return { app, port: first!.port };
  };

  it.skipIf(!dig)('dig over UDP and TCP gets the upstream answer; the queries share one TLS connection', async () => {
    const p = await proxy();
    const to = `127.0.0.1:${p.port}`;
    const f = await forwarder(`forward . tls://${to} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n  }`);
    for (const tcp of [false, true, false, true, false]) {
      const obs = await digQuery(dig!, f.port, 'www.example.test.', 'A', tcp);
      expect(obs.rcode).toBe('NOERROR');
      expect(obs.answer).toEqual([`www.example.test. 3600 IN A ${wwwIp}`]);
    }
    expect(p.accepted).toBe(1);
    expect(await cacheCount(f.app, 'proxyConnCacheMisses', to)).toBe(1);
    expect(await cacheCount(f.app, 'proxyConnCacheHits', to)).toBe(4);
    const nodata = await digQuery(dig!, f.port, 'www.example.test.', 'AAAA', false);
    expect([nodata.rcode, nodata.answer]).toEqual(['NOERROR', []]);
    expect(p.accepted).toBe(1);
  });

  it('without tls_servername the certificate is checked against the IP address (its SAN holds 127.0.0.1)', async () => {
    const f = await forwarder(`forward . tls://127.0.0.1:${up.port} {\n    tls ${c.ca}\n  }`);
    const r = await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('NOERROR');
    expect(r.answers.map((a) => a.data)).toEqual([wwwIp]);
  });

  it('concurrent queries each get a connection; afterwards they serve the next queries', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1%${dotHostname}:${p.port} {\n    tls ${c.ca}\n  }`);
    const first = await Promise.all(Array.from({ length: 4 }, () => ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })));
    expect(first.map((r) => r.rcode)).toEqual(['NOERROR', 'NOERROR', 'NOERROR', 'NOERROR']);
    const opened = p.accepted;
    expect(opened).toBeGreaterThanOrEqual(1);
    expect(opened).toBeLessThanOrEqual(4);
    expect(forwardOf(f.app).upstreams[0]!.tls!.idleCount).toBe(opened);
    for (let i = 0; i < 4; i++) expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'tcp' })).rcode).toBe('NOERROR');
    expect(p.accepted).toBe(opened);
  });

  it('force_tcp and prefer_udp do not change the transport: still TLS', async () => {
    for (const opt of ['force_tcp', 'prefer_udp']) {
      const p = await proxy();
      const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    ${opt}\n  }`);
      const r = await ask(f.app, 'www.example.test.', 'A', { protocol: 'tcp' });
      expect(r.rcode, opt).toBe('NOERROR');
      expect(p.accepted, opt).toBe(1);
    }
  });

  it('a wrong tls_servername fails the exchange: SERVFAIL, the reason logged at debug, the upstream failing', async () => {
    const logs: string[] = [];
    const f = await forwarder(`forward . tls://127.0.0.1:${up.port} {\n    tls ${c.ca}\n    tls_servername other.test\n    health_check 100ms\n  }`, logs);
    const r = await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('SERVFAIL');
    const fwd = forwardOf(f.app);
    // The health checks over TLS fail too: down after max_fails (2) + 1 of them.
    expect(await holdsWithin(() => fwd.upstreams[0]!.down(2), 5000)).toBe(true);
    const failed = logs
      .map((l) => JSON.parse(l) as { msg: string; err?: string; code?: string })
      .filter((l) => l.msg === 'TLS connection to the upstream failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]!.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(failed[0]!.err).toMatch(/other\.test/);
  });

  it.each([
    ['system CAs (tls without arguments)', () => 'tls'],
    ['another CA', () => `tls ${c.dir}/stranger-ca.pem`],
  ])('an upstream whose certificate %s do not trust fails', async (_what, line) => {
    const logs: string[] = [];
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    ${line()}\n    tls_servername ${dotHostname}\n  }`, logs);
    const r = await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('SERVFAIL');
    expect(p.accepted).toBeGreaterThan(0);
    const codes = logs.map((l) => (JSON.parse(l) as { code?: string }).code).filter((x) => x !== undefined);
    expect(codes[0]).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
  });

  it('a client certificate: the upstream that requires one answers with it and refuses without', async () => {
    const strict = await dotUpstream(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n    client_auth require_and_verify\n  }`);
    try {
      const withCert = await forwarder(
        `forward . tls://127.0.0.1:${strict.port} {\n    tls ${c.clientCert} ${c.clientKey} ${c.ca}\n    tls_servername ${dotHostname}\n  }`,
      );
      expect((await ask(withCert.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
      const without = await forwarder(`forward . tls://127.0.0.1:${strict.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n  }`);
      expect((await ask(without.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('SERVFAIL');
    } finally {
      await strict.app.close();
    }
  });

  it('an upstream that accepts but never completes the handshake fails within read_timeout, not the 5 s query deadline', async () => {
    const held: net.Socket[] = [];
    const silent = net.createServer((sock) => {
      held.push(sock);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const f = await forwarder(`forward . tls://127.0.0.1:${port} {\n    tls ${c.ca}\n    read_timeout 200ms\n    max_fails 0\n  }`);
      const t0 = Date.now();
      expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('SERVFAIL');
      // Three tries of 200 ms each; without a deadline on the handshake the query would wait 5 s.
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(held.length).toBeGreaterThanOrEqual(1);
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('health checks over TLS bring a down upstream back', async () => {
    // The proxy first closes every connection (the upstream is down), then passes them on to a
    // tls:// listener, which has no UDP socket: only checks over TLS can find it up.
    const p = await proxy(true);
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n    health_check 100ms\n  }`);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('SERVFAIL');
    const u = forwardOf(f.app).upstreams[0]!;
    expect(await holdsWithin(() => u.down(2), 5000)).toBe(true);
    const before = p.accepted;
    p.target = up.port;
    await waitUntil('the upstream is up again', () => u.fails === 0, 5000);
    expect(p.accepted).toBeGreaterThan(before);
    const r = await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' });
    expect(r.answers.map((a) => a.data)).toEqual([wwwIp]);
  });

  it('a cached connection the upstream closed is replaced without a failure', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n  }`);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    const u = forwardOf(f.app).upstreams[0]!;
    expect(u.tls!.resumed).toBe(0);
    p.cut();
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect(p.accepted).toBe(2);
    expect(u.fails).toBe(0);
    // The new connection resumed the first one's TLS session.
    expect(u.tls!.resumed).toBe(1);
  });

  it('a cached connection closed as the query is sent is retried on a new one, not counted as a failure', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n    max_fails 1\n  }`);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    p.cutOnNextSend();
    const r = await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' });
    expect(r.answers.map((a) => a.data)).toEqual([wwwIp]);
    expect(p.accepted).toBe(2);
    expect(forwardOf(f.app).upstreams[0]!.fails).toBe(0);
    expect(await cacheCount(f.app, 'proxyConnCacheHits', `127.0.0.1:${p.port}`)).toBe(1);
  });

  it('expire: an idle connection is closed after it, and the next query opens another', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n    expire 200ms\n  }`);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    await waitUntil('the idle connection is closed', () => p.open === 0, 3000);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect(p.accepted).toBe(2);
  });

  it('expire 0 keeps no connection: each query opens its own', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n    expire 0s\n  }`);
    for (let i = 0; i < 3; i++) expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect(p.accepted).toBe(3);
    expect(forwardOf(f.app).upstreams[0]!.tls!.idleCount).toBe(0);
  });

  it('max_idle_conns 1 keeps one of several connections', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n    max_idle_conns 1\n  }`);
    await Promise.all(Array.from({ length: 3 }, () => ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })));
    expect(forwardOf(f.app).upstreams[0]!.tls!.idleCount).toBe(1);
    await waitUntil('the extra connections are closed', () => p.open === 1, 3000);
  });

  it('plain and tls:// upstreams in one forward each keep their transport', async () => {
    const p = await proxy();
    const f = await forwarder(
      `forward . tls://127.0.0.1:${p.port} 127.0.0.1:${up.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n    policy sequential\n  }`,
    );
    expect(forwardOf(f.app).upstreams.map((u) => u.tls !== undefined)).toEqual([true, false]);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect(p.accepted).toBe(1);
  });

  it('closing the forwarder closes its TLS connections', async () => {
    const p = await proxy();
    const f = await forwarder(`forward . tls://127.0.0.1:${p.port} {\n    tls ${c.ca}\n    tls_servername ${dotHostname}\n  }`);
    expect((await ask(f.app, 'www.example.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect(p.open).toBe(1);
    apps.splice(apps.indexOf(f.app), 1);
    await f.app.close();
    await waitUntil('the connection is closed', () => p.open === 0, 3000);
    expect(p.accepted).toBe(1);
  });
});
