// DNS over TLS (RFC 7858) on a real server on loopback: dig +tls and node:tls clients against
// tls:// server blocks of the example cluster, with and without client certificates.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { freePort, repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotConnect, dotExchange } from './dot-client.js';
import { dotHostname, makeCerts, type TestCerts } from './dot-certs.js';
import { buildQuery, T } from './raw.js';

const manifests = path.join(repoRoot, 'examples/manifests');
const kubernetesApi = 'kubernetes.default.svc.cluster.local';
const kubernetesApiIp = '10.96.0.1';

async function serve(corefileText: string, logs: string[] = []): Promise<{ app: App; port: number }> {
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) });
  const app = await buildApp({ corefileText, manifests: [manifests], logger });
  const [first] = await app.listen();
  return { app, port: first!.port };
}

const block = (tlsLine: string): string => `tls://cluster.local:0 {\n  bind 127.0.0.1\n  ${tlsLine}\n  kubernetes cluster.local\n}\n`;

describeNeeding(['openssl', 'dig'], 'DNS over TLS', () => {
  let c: TestCerts;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    ({ app, port } = await serve(block(`tls ${c.serverCert} ${c.serverKey}`)));
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  it('dig +tls, checking the certificate against the CA and the name, gets the kubernetes answer', async () => {
    const { stdout } = await promisify(execFile)('dig', [
      '@127.0.0.1',
      '-p',
      String(port),
      '+tls',
      `+tls-ca=${c.ca}`,
      `+tls-hostname=${dotHostname}`,
      '+time=3',
      '+tries=1',
      kubernetesApi,
      'A',
      '+short',
    ]);
    expect(stdout.trim()).toBe(kubernetesApiIp);
  });

  it('negotiates ALPN dot at TLS 1.2 or later, and answers pipelined queries on one connection', async () => {
    const socket = await dotConnect(port, { ca: c.read(c.ca), servername: dotHostname });
    try {
      expect(socket.alpnProtocol).toBe('dot');
      expect(['TLSv1.2', 'TLSv1.3']).toContain(socket.getProtocol());
      for (let i = 0; i < 3; i++) {
        const reply = await dotExchange(socket, kubernetesApi, T.A);
        expect(reply.answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
      }
    } finally {
      socket.destroy();
    }
  });

  it('refuses a client offering only TLS 1.1', async () => {
    await expect(dotConnect(port, { ca: c.read(c.ca), servername: dotHostname, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' } as never)).rejects.toThrow();
  });

  it('opens no UDP socket on a tls:// port: a UDP query is refused by the kernel', async () => {
    const udp = createSocket('udp4');
    try {
      const err = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        udp.once('error', resolve);
        udp.once('message', () => resolve(undefined));
        udp.connect(port, '127.0.0.1', () => udp.send(buildQuery({ id: 7, name: kubernetesApi, type: T.A })));
      });
      expect(err?.code).toBe('ECONNREFUSED');
    } finally {
      udp.close();
    }
  });

  it('client_auth require_and_verify: no certificate or one of another CA fails, one the CA signed is answered', async () => {
    const strict = await serve(block(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n    client_auth require_and_verify\n  }`));
    try {
      const base = { ca: c.read(c.ca), servername: dotHostname };
      // With TLS 1.3 the client's handshake ends before the server checks its certificate: the
      // refusal shows at the first exchange, never as an answer.
      const refused = async (o: object): Promise<unknown> => {
        const s = await dotConnect(strict.port, { ...base, ...o });
        try {
          return await dotExchange(s, kubernetesApi, T.A);
        } finally {
          s.destroy();
        }
      };
      await expect(refused({})).rejects.toThrow();
      await expect(refused({ cert: c.read(c.strangerCert), key: c.read(c.strangerKey) })).rejects.toThrow();
      const s = await dotConnect(strict.port, { ...base, cert: c.read(c.clientCert), key: c.read(c.clientKey) });
      try {
        expect((await dotExchange(s, kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
      } finally {
        s.destroy();
      }
    } finally {
      await strict.app.close();
    }
  });

  it('client_auth verify_if_given: no certificate is answered, one of another CA is not', async () => {
    const lax = await serve(block(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n    client_auth verify_if_given\n  }`));
    try {
      const base = { ca: c.read(c.ca), servername: dotHostname };
      const s = await dotConnect(lax.port, base);
      try {
        expect((await dotExchange(s, kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
      } finally {
        s.destroy();
      }
      const stranger = await dotConnect(lax.port, { ...base, cert: c.read(c.strangerCert), key: c.read(c.strangerKey) }).catch((err: Error) => err);
      if (!(stranger instanceof Error)) {
        try {
          await expect(dotExchange(stranger, kubernetesApi, T.A)).rejects.toThrow();
        } finally {
          stranger.destroy();
        }
      }
    } finally {
      await lax.app.close();
    }
  });

  it('counts DoT queries under the tls:// server label, with proto tcp, as CoreDNS does', async () => {
    // The label carries the key's port, as for dns:// keys: a free one rather than 0.
    const fixed = await freePort();
    const metered = await serve(block(`tls ${c.serverCert} ${c.serverKey}\n  prometheus 127.0.0.1:0`).replace(':0 {', `:${fixed} {`));
    try {
      const s = await dotConnect(metered.port, { ca: c.read(c.ca), servername: dotHostname });
      try {
        await dotExchange(s, kubernetesApi, T.A);
      } finally {
        s.destroy();
      }
      const { text } = await metered.app.scrapeMetrics();
      const server = `tls://127.0.0.1:${metered.port}`;
      expect(text).toContain(`coredns_dns_requests_total{server="${server}",zone="cluster.local.",view="",proto="tcp",family="1",type="A"} 1`);
      expect(text).toContain(`coredns_dns_responses_total{server="${server}",zone="cluster.local.",view="",rcode="NOERROR",plugin="kubernetes"} 1`);
      expect(text).not.toContain('server="dns://');
    } finally {
      await metered.app.close();
    }
  });

  it('refuses two blocks that share a tls:// listener with different certificates, at the second block', async () => {
    const corefileText = `tls://a.test:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  errors\n}\ntls://b.test:0 {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey} ${c.ca}\n  errors\n}\n`;
    await expect(buildApp({ corefileText, manifests: [manifests], logger: pino({ level: 'silent' }) })).rejects.toThrow(
      '6: this block and another one both serve tls://127.0.0.1:0 but set different tls, https, grpc_server or timeouts options; one listener has one setting: give both blocks the same lines, or use another port',
    );
  });

  it('a tls:// block without tls serves plain DNS over TCP, with a warning saying so', async () => {
    const logs: string[] = [];
    const plain = await serve(block(''), logs);
    try {
      expect(logs.join('\n')).toContain('tls:// server block without a tls line: serving without encryption');
      const { stdout } = await promisify(execFile)('dig', [
        '@127.0.0.1',
        '-p',
        String(plain.port),
        '+tcp',
        '+time=3',
        '+tries=1',
        kubernetesApi,
        'A',
        '+short',
      ]);
      expect(stdout.trim()).toBe(kubernetesApiIp);
    } finally {
      await plain.app.close();
    }
  });
});
