// DNS over HTTPS (RFC 8484) on a real server on loopback: dig +https, curl and node:http2 /
// node:https clients against https:// server blocks of the example cluster, with a throwaway CA.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type http2 from 'node:http2';
import tls from 'node:tls';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { freePort, repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotHostname, makeCerts, type TestCerts } from './dot-certs.js';
import { getPath, h1Request, h2Connect, h2Request, post, type DohTls } from './doh-client.js';
import { frame, openGet, PREFACE } from './doh-frames.js';
import { buildQuery, encodeHeader, encodeQuestion, Opcode, parseHeader, rawRecords, Rcode, T, udpExchange } from './raw.js';

const run = promisify(execFile);
const manifests = path.join(repoRoot, 'examples/manifests');
const kubernetesApi = 'kubernetes.default.svc.cluster.local';
const kubernetesApiIp = '10.96.0.1';
const TTL = 30;

interface Served {
  app: App;
  /** The https:// listener. */
  port: number;
  /** The dns:// listener of the same chain, for answers to compare. */
  udpPort: number;
}

/** The example cluster over DoH (and plain DNS beside it), with the default Corefile's kubernetes zones. */
async function serve(tlsLines: string, extra = '', logs: string[] = [], httpsPort = 0): Promise<Served> {
  const chain = `  kubernetes cluster.local in-addr.arpa ip6.arpa {\n    pods insecure\n    ttl ${TTL}\n  }\n${extra}`;
  const corefileText =
    `https://cluster.local:${httpsPort} https://in-addr.arpa:${httpsPort} https://ip6.arpa:${httpsPort} {\n  bind 127.0.0.1\n${tlsLines}${chain}}\n` +
    `cluster.local:0 in-addr.arpa:0 ip6.arpa:0 {\n  bind 127.0.0.1\n${chain}}\n`;
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) });
  const app = await buildApp({ corefileText, manifests: [manifests], logger });
  const listeners = await app.listen();
  return { app, port: listeners.find((l) => l.transport === 'https')!.port, udpPort: listeners.find((l) => l.transport === 'dns')!.port };
}

const tlsLine = (c: TestCerts, more = ''): string => `  tls ${c.serverCert} ${c.serverKey}${more}\n`;

/** The smallest TTL of a reply's records (the OPT record aside). */
function minTtl(reply: Buffer): number {
  const ttls = rawRecords(reply)
    .filter((r) => r.type !== T.OPT)
    .map((r) => r.ttl);
  return Math.min(3600, ...ttls);
}

describeNeeding(['openssl', 'dig', 'curl'], 'DNS over HTTPS', () => {
  let c: TestCerts;
  let s: Served;
  let clientTls: DohTls;
  beforeAll(async () => {
    c = makeCerts();
    s = await serve(tlsLine(c));
    clientTls = { ca: c.read(c.ca), servername: dotHostname };
  });
  afterAll(async () => {
    await s?.app.close();
    c?.remove();
  });

  const dig = async (port: number, mode: string[], name: string, type: string): Promise<string> => {
    const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), ...mode, '+time=3', '+tries=1', name, type, '+short'], { timeout: 15_000 });
    return stdout.trim();
  };

  it('dig +https (POST) and +https-get, checking the certificate against the CA and the name, get the kubernetes answer', async () => {
    const tls = [`+tls-ca=${c.ca}`, `+tls-hostname=${dotHostname}`];
    expect(await dig(s.port, ['+https', ...tls], kubernetesApi, 'A')).toBe(kubernetesApiIp);
    expect(await dig(s.port, ['+https-get', ...tls], kubernetesApi, 'A')).toBe(kubernetesApiIp);
  });

  it('answers a table of names over DoH (GET and POST, HTTP/2 and HTTP/1.1) byte for byte as over UDP', async () => {
    const table: [string, number, number][] = [
      [kubernetesApi, T.A, Rcode.NOERROR],
      ['dual.apps.svc.cluster.local', T.AAAA, Rcode.NOERROR],
      ['_http._tcp.nginx.apps.svc.cluster.local', T.SRV, Rcode.NOERROR],
      ['1.0.96.10.in-addr.arpa', 12, Rcode.NOERROR],
      ['nosuch.apps.svc.cluster.local', T.A, Rcode.NXDOMAIN],
      [kubernetesApi, T.TXT, Rcode.NOERROR],
    ];
    const session = await h2Connect(s.port, clientTls);
    try {
      for (const [name, type, rcode] of table) {
        // RFC 8484 4.1: clients SHOULD use id 0, which keeps GET URLs cacheable.
        const q = buildQuery({ id: 0, name, type });
        const udp = await udpExchange(q, { port: s.udpPort });
        expect(udp, `${name} over UDP`).not.toBeNull();
        expect(parseHeader(udp!).rcode, name).toBe(rcode);
        for (const [how, send] of [
          ['h2 POST', () => h2Request(session, post(q))],
          ['h2 GET', () => h2Request(session, { path: getPath(q) })],
          ['http/1.1 POST', () => h1Request(s.port, post(q), clientTls)],
          ['http/1.1 GET', () => h1Request(s.port, { path: getPath(q) }, clientTls)],
        ] as const) {
          const res = await send();
          expect(res.status, `${how} ${name}`).toBe(200);
          expect(res.headers['content-type'], `${how} ${name}`).toBe('application/dns-message');
          expect(res.body.equals(udp!), `${how} ${name}: same bytes as UDP`).toBe(true);
          expect(res.headers['cache-control'], `${how} ${name}`).toBe(`max-age=${minTtl(udp!)}`);
        }
      }
    } finally {
      session.close();
    }
  });

  it('answers with the id of the query and max-age the smallest TTL; 5 s for an error (REFUSED) as CoreDNS', async () => {
    const session = await h2Connect(s.port, clientTls);
    try {
      const a = await h2Request(session, post(buildQuery({ id: 0x4321, name: kubernetesApi, type: T.A })));
      expect(parseHeader(a.body).id).toBe(0x4321);
      expect(a.headers['cache-control']).toBe(`max-age=${TTL}`);
      const refused = await h2Request(session, post(buildQuery({ id: 7, name: 'example.org', type: T.A })));
      expect([refused.status, parseHeader(refused.body).rcode, refused.headers['cache-control']]).toEqual([200, Rcode.REFUSED, 'max-age=5']);
    } finally {
      session.close();
    }
  });

  it('curl GET and POST over HTTP/2 and HTTP/1.1: status, content type and Cache-Control', async () => {
    const q = buildQuery({ id: 0, name: kubernetesApi, type: T.A });
    const file = path.join(c.dir, 'query.bin');
    writeFileSync(file, q);
    const base = `https://${dotHostname}:${s.port}`;
    const resolve = `${dotHostname}:${s.port}:127.0.0.1`;
    for (const version of ['--http2', '--http1.1']) {
      for (const method of [
        [`${base}/dns-query?dns=${q.toString('base64url')}`],
        ['--data-binary', `@${file}`, '-H', 'content-type: application/dns-message', `${base}/dns-query`],
      ]) {
        const out = path.join(c.dir, 'reply.bin');
        const { stdout } = await run(
          'curl',
          ['-sS', '--max-time', '10', version, '--cacert', c.ca, '--resolve', resolve, '-o', out, '-D', '-', '-w', '%{http_version}', ...method],
          { timeout: 15_000 },
        );
        const lines = stdout.split('\r\n');
        expect(lines[0], `${version} ${method[0]}`).toMatch(/^HTTP\/[12](\.1)? 200/);
        expect(stdout).toMatch(/^content-type: application\/dns-message$/im);
        expect(stdout).toMatch(new RegExp(`^cache-control: max-age=${TTL}$`, 'im'));
        expect(stdout.trim().endsWith(version === '--http2' ? '2' : '1.1'), `${version}: protocol used`).toBe(true);
        const { readFileSync } = await import('node:fs');
        const reply = readFileSync(out);
        expect(rawRecords(reply).map((r) => r.type)).toEqual([T.A]);
      }
    }
  });

  it('404 off /dns-query, 400 for bad requests, 415 for a POST of another type', async () => {
    const q = buildQuery({ id: 0, name: kubernetesApi, type: T.A });
    const session = await h2Connect(s.port, clientTls);
    // Standard base64 with its '=' padding (this query's length needs none: one is added).
    const b64 = q.toString('base64');
    const padded = `/dns-query?dns=${/[=+/]/.test(b64) ? b64 : `${b64}=`}`;
    try {
      const cases: [string, Parameters<typeof h2Request>[1], number][] = [
        ['another path', { path: `/resolve?dns=${q.toString('base64url')}` }, 404],
        ['the root', { path: '/' }, 404],
        ['POST elsewhere', { ...post(q), path: '/dns' }, 404],
        ['GET without dns=', { path: '/dns-query' }, 400],
        ['GET with dns= twice', { path: `${getPath(q)}&dns=${q.toString('base64url')}` }, 400],
        ['GET with padded base64', { path: padded }, 400],
        ['GET with a character outside base64url', { path: `${getPath(q)}.` }, 400],
        ['GET with a dns= value that is not a message', { path: '/dns-query?dns=AAAA' }, 400],
        ['POST of an empty body', post(Buffer.alloc(0)), 400],
        ['POST of a body that is not a DNS message', post(Buffer.from('hello, is this dns?')), 400],
        ['PUT', { ...post(q), method: 'PUT' }, 400],
        ['POST as a form', post(q, 'application/x-www-form-urlencoded'), 415],
        ['POST as JSON', post(q, 'application/dns-json'), 415],
      ];
      for (const [what, req, status] of cases) {
        const res = await h2Request(session, req);
        expect(res.status, what).toBe(status);
        expect(res.headers['content-type'], what).toBe('text/plain; charset=utf-8');
      }
      // The media type's parameters and case do not matter.
      expect((await h2Request(session, post(q, 'Application/DNS-Message; charset=binary'))).status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('an UPDATE is a bad request (400), as CoreDNS request filter makes it; over UDP it is NOTIMP', async () => {
    const update = Buffer.concat([encodeHeader({ id: 9, opcode: Opcode.UPDATE, qdcount: 1 }), encodeQuestion('cluster.local', T.SOA)]);
    const udp = await udpExchange(update, { port: s.udpPort });
    expect(parseHeader(udp!).rcode).toBe(Rcode.NOTIMP);
    const session = await h2Connect(s.port, clientTls);
    try {
      expect((await h2Request(session, post(update))).status).toBe(400);
      expect((await h2Request(session, { path: getPath(update) })).status).toBe(400);
      // The same connection still answers.
      expect((await h2Request(session, post(buildQuery({ id: 0, name: kubernetesApi, type: T.A })))).status).toBe(200);
    } finally {
      session.close();
    }
  });

  it('an HTTP/2 answer is HEADERS then one DATA frame that ends the stream (dnsperf takes nothing after the message)', async () => {
    const raw = tls.connect({ host: '127.0.0.1', port: s.port, ...clientTls, ALPNProtocols: ['h2'] });
    try {
      let got = Buffer.alloc(0);
      const frames = (): { type: number; flags: number; stream: number; length: number }[] => {
        const out = [];
        for (let i = 0; i + 9 <= got.length; i += 9 + got.readUIntBE(i, 3)) {
          out.push({ type: got[i + 3]!, flags: got[i + 4]!, stream: got.readUInt32BE(i + 5), length: got.readUIntBE(i, 3) });
        }
        return out;
      };
      const ended = new Promise<void>((resolve, reject) => {
        const give = setTimeout(() => reject(new Error('no end of stream 1 within 5 s')), 5000);
        raw.on('data', (d: Buffer) => {
          got = Buffer.concat([got, d]);
          if (frames().some((f) => f.stream === 1 && f.flags & 0x1)) {
            clearTimeout(give);
            resolve();
          }
        });
      });
      await new Promise<void>((resolve) => raw.once('secureConnect', () => resolve()));
      raw.write(Buffer.concat([PREFACE, frame(0x4, 0, 0, Buffer.alloc(0)), openGet(1, getPath(buildQuery({ id: 0, name: kubernetesApi, type: T.A })))]));
      await ended;
      const mine = frames().filter((f) => f.stream === 1);
      expect(mine.map((f) => [f.type, f.flags & 0x1])).toEqual([
        [0x1, 0],
        [0x0, 1],
      ]);
      expect(mine[1]!.length).toBeGreaterThan(12);
    } finally {
      raw.destroy();
    }
  });

  it('negotiates h2 or http/1.1 by ALPN at TLS 1.2 or later, and refuses a client offering only TLS 1.1', async () => {
    const session: http2.ClientHttp2Session = await h2Connect(s.port, clientTls);
    try {
      expect(session.alpnProtocol).toBe('h2');
    } finally {
      session.close();
    }
    await expect(h2Connect(s.port, { ...clientTls, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' } as DohTls)).rejects.toThrow();
  });

  it('client_auth require_and_verify: no client certificate fails, one the CA signed is answered', async () => {
    const strict = await serve(tlsLine(c, ` ${c.ca} {\n    client_auth require_and_verify\n  }`));
    try {
      const q = buildQuery({ id: 0, name: kubernetesApi, type: T.A });
      const attempt = async (o: DohTls): Promise<number> => {
        const session = await h2Connect(strict.port, o);
        try {
          return (await h2Request(session, post(q))).status;
        } finally {
          session.destroy();
        }
      };
      await expect(attempt(clientTls)).rejects.toThrow();
      await expect(attempt({ ...clientTls, cert: c.read(c.strangerCert), key: c.read(c.strangerKey) })).rejects.toThrow();
      expect(await attempt({ ...clientTls, cert: c.read(c.clientCert), key: c.read(c.clientKey) })).toBe(200);
    } finally {
      await strict.app.close();
    }
  });

  it('counts DoH queries under the https:// server label, with proto tcp, as CoreDNS does', async () => {
    const fixed = await freePort();
    const metered = await serve(tlsLine(c), '  prometheus 127.0.0.1:0\n', [], fixed);
    try {
      const session = await h2Connect(metered.port, clientTls);
      try {
        expect((await h2Request(session, post(buildQuery({ id: 0, name: kubernetesApi, type: T.A })))).status).toBe(200);
      } finally {
        session.close();
      }
      const { text } = await metered.app.scrapeMetrics();
      const server = `https://127.0.0.1:${fixed}`;
      expect(text).toContain(`coredns_dns_requests_total{server="${server}",zone="cluster.local.",view="",proto="tcp",family="1",type="A"} 1`);
      expect(text).toContain(`coredns_dns_responses_total{server="${server}",zone="cluster.local.",view="",rcode="NOERROR",plugin="kubernetes"} 1`);
    } finally {
      await metered.app.close();
    }
  });

  it('an https:// block without tls serves plain HTTP (dig +http-plain, curl HTTP/1.1), with a warning saying so', async () => {
    const logs: string[] = [];
    const plain = await serve('', '', logs);
    try {
      expect(logs.join('\n')).toContain('https:// server block without a tls line: serving without encryption');
      expect(await dig(plain.port, ['+http-plain'], kubernetesApi, 'A')).toBe(kubernetesApiIp);
      expect(await dig(plain.port, ['+http-plain-get'], kubernetesApi, 'A')).toBe(kubernetesApiIp);
      const q = buildQuery({ id: 0, name: kubernetesApi, type: T.A });
      const { stdout } = await run(
        'curl',
        ['-sS', '--max-time', '10', '--http1.1', '-o', '/dev/null', '-D', '-', `http://127.0.0.1:${plain.port}${getPath(q)}`],
        {
          timeout: 15_000,
        },
      );
      expect(stdout).toMatch(/^HTTP\/1\.1 200/);
      expect(stdout).toMatch(/^content-type: application\/dns-message$/im);
    } finally {
      await plain.app.close();
    }
  });
});
