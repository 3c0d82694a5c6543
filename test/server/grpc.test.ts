// DNS over gRPC (CoreDNS's DnsService.Query) on a real server on loopback: a @grpc/grpc-js client
// against grpc:// server blocks of the example cluster, over TLS (with and without client
// certificates) and without encryption; the same answers as over UDP; the metrics' server label.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import grpc from '@grpc/grpc-js';
import pino from 'pino';
import { buildApp, type App } from '../../src/app.js';
import { freePort, repoRoot } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { dotHostname, makeCerts, type TestCerts } from './dot-certs.js';
import { grpcClient, statusOf } from './grpc-client.js';
import { buildQuery, T, udpQuery } from './raw.js';

const manifests = path.join(repoRoot, 'examples/manifests');
const kubernetesApi = 'kubernetes.default.svc.cluster.local';
const kubernetesApiIp = '10.96.0.1';
const T_PTR = 12;

async function serve(corefileText: string, logs: string[] = []): Promise<{ app: App; ports: Record<string, number> }> {
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(line) });
  const app = await buildApp({ corefileText, manifests: [manifests], logger });
  const ports: Record<string, number> = {};
  for (const l of await app.listen()) ports[l.transport] = l.port;
  return { app, ports };
}

const block = (lines: string, key = 'grpc://cluster.local:0'): string => `${key} {\n  bind 127.0.0.1\n  ${lines}\n  kubernetes cluster.local\n}\n`;

describe('DNS over gRPC without encryption', () => {
  let app: App;
  let ports: Record<string, number>;
  const logs: string[] = [];
  beforeAll(async () => {
    // One block served over UDP/TCP and gRPC: every answer must be the same on both.
    ({ app, ports } = await serve(
      'cluster.local:0 grpc://cluster.local:0 in-addr.arpa:0 grpc://in-addr.arpa:0 {\n  bind 127.0.0.1\n  kubernetes cluster.local in-addr.arpa\n}\n',
      logs,
    ));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('warns at start that the grpc:// block is served without encryption', () => {
    expect(logs.join('\n')).toContain('grpc:// server block without a tls line: serving without encryption');
  });

  it('answers the kubernetes API name', async () => {
    const client = grpcClient(ports['grpc']!);
    try {
      const reply = await client.query(kubernetesApi, T.A);
      expect(reply.rcode).toBe('NOERROR');
      expect(reply.answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
    } finally {
      client.close();
    }
  });

  it.each([
    ['A', kubernetesApi, T.A, 'NOERROR', 1],
    ['AAAA', 'dual.apps.svc.cluster.local', T.AAAA, 'NOERROR', 1],
    ['SRV', '_postgres._tcp.db.apps.svc.cluster.local', T.SRV, 'NOERROR', 1],
    ['PTR', '1.0.96.10.in-addr.arpa', T_PTR, 'NOERROR', 1],
    ['NXDOMAIN', 'nope.apps.svc.cluster.local', T.A, 'NXDOMAIN', 0],
    ['NODATA', 'db.apps.svc.cluster.local', T.AAAA, 'NOERROR', 0],
  ] as const)('%s: the same reply, byte for byte, as over UDP', async (_what, name, type, rcode, answers) => {
    const q = buildQuery({ id: 0x1234, name, type });
    const udp = await udpQuery(q, { host: '127.0.0.1', port: ports['dns']! });
    const client = grpcClient(ports['grpc']!);
    try {
      const got = await client.exchange(q);
      expect(got.toString('hex')).toBe(udp.toString('hex'));
      const reply = await client.query(name, type);
      expect(reply.rcode).toBe(rcode);
      expect(reply.answers ?? []).toHaveLength(answers);
    } finally {
      client.close();
    }
  });

  it('answers many calls on one connection, concurrently', async () => {
    const client = grpcClient(ports['grpc']!);
    try {
      const replies = await Promise.all(Array.from({ length: 50 }, () => client.query(kubernetesApi, T.A)));
      expect(new Set(replies.map((r) => r.answers?.[0]?.data))).toEqual(new Set([kubernetesApiIp]));
    } finally {
      client.close();
    }
  });

  it('ends other methods of the service with UNIMPLEMENTED', async () => {
    const client = new grpc.Client(`127.0.0.1:${ports['grpc']!}`, grpc.credentials.createInsecure());
    try {
      const code = await new Promise<grpc.status>((resolve) => {
        client.makeUnaryRequest(
          '/coredns.dns.DnsService/Other',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          { deadline: Date.now() + 5000 },
          (err) => resolve(err ? err.code : grpc.status.OK),
        );
      });
      expect(code).toBe(grpc.status.UNIMPLEMENTED);
    } finally {
      client.close();
    }
  });

  it('a request the DNS server does not answer (shorter than a header) ends with UNKNOWN, as CoreDNS', async () => {
    const client = grpcClient(ports['grpc']!);
    try {
      expect(await statusOf(client.exchange(Buffer.from([1, 2, 3])))).toBe(grpc.status.UNKNOWN);
      expect(await statusOf(client.exchange(Buffer.alloc(0)))).toBe(grpc.status.UNKNOWN);
      // The connection still answers.
      expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
    } finally {
      client.close();
    }
  });
});

it('closing the server with a client connected does not wait for the client, which is then turned away', async () => {
  const { app, ports } = await serve(block(''));
  const client = grpcClient(ports['grpc']!);
  try {
    expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
    // The drain waits for queries in flight only (none here), not for the client to go.
    await app.close();
    expect(await statusOf(client.query(kubernetesApi, T.A, 2000))).toBe(grpc.status.UNAVAILABLE);
  } finally {
    client.close();
  }
});

it('a grpc:// port another process holds is refused in one line naming it', async () => {
  const port = await freePort();
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', () => resolve()));
  try {
    const app = await buildApp({ corefileText: block('', `grpc://cluster.local:${port}`), manifests: [manifests], logger: pino({ level: 'silent' }) });
    await expect(app.listen()).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port} (TCP): the port is already in use by another process; stop it or choose another --port`,
    );
  } finally {
    holder.close();
  }
});

describeNeeding(['openssl'], 'DNS over gRPC with TLS', () => {
  let c: TestCerts;
  let app: App;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    const served = await serve(block(`tls ${c.serverCert} ${c.serverKey}`));
    app = served.app;
    port = served.ports['grpc']!;
  });
  afterAll(async () => {
    await app?.close();
    c?.remove();
  });

  it('answers a client checking the certificate against the CA and the name', async () => {
    const client = grpcClient(port, { ca: c.read(c.ca), servername: dotHostname });
    try {
      expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
    } finally {
      client.close();
    }
  });

  it('negotiates ALPN h2 at TLS 1.2 or later, and refuses a client offering only http/1.1', async () => {
    const connect = (alpn: string[]): Promise<tls.TLSSocket> =>
      new Promise((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port, ca: c.read(c.ca), servername: dotHostname, ALPNProtocols: alpn });
        s.once('secureConnect', () => resolve(s));
        s.once('error', reject);
      });
    const s = await connect(['h2']);
    try {
      expect(s.alpnProtocol).toBe('h2');
      expect(['TLSv1.2', 'TLSv1.3']).toContain(s.getProtocol());
    } finally {
      s.destroy();
    }
    await expect(connect(['http/1.1'])).rejects.toThrow(/no application protocol|alert number 120/i);
  });

  it('a client that does not trust the CA gets no answer', async () => {
    const client = grpcClient(port, { ca: c.read(c.strangerCert), servername: dotHostname });
    try {
      expect(await statusOf(client.query(kubernetesApi, T.A, 3000))).toBe(grpc.status.UNAVAILABLE);
    } finally {
      client.close();
    }
  });

  it('client_auth require_and_verify and require: no certificate or one of another CA fails, one the CA signed is answered', async () => {
    for (const mode of ['require_and_verify', 'require']) {
      const strict = await serve(block(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n    client_auth ${mode}\n  }`));
      try {
        const p = strict.ports['grpc']!;
        const base = { ca: c.read(c.ca), servername: dotHostname };
        for (const extra of [{}, { cert: c.read(c.strangerCert), key: c.read(c.strangerKey) }]) {
          const refused = grpcClient(p, { ...base, ...extra });
          try {
            expect(await statusOf(refused.query(kubernetesApi, T.A, 3000))).toBe(grpc.status.UNAVAILABLE);
          } finally {
            refused.close();
          }
        }
        const client = grpcClient(p, { ...base, cert: c.read(c.clientCert), key: c.read(c.clientKey) });
        try {
          expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
        } finally {
          client.close();
        }
      } finally {
        await strict.app.close();
      }
    }
  });

  it('client_auth verify_if_given: no certificate is answered, one of another CA is not', async () => {
    const lax = await serve(block(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n    client_auth verify_if_given\n  }`));
    try {
      const p = lax.ports['grpc']!;
      const base = { ca: c.read(c.ca), servername: dotHostname };
      const plain = grpcClient(p, base);
      const stranger = grpcClient(p, { ...base, cert: c.read(c.strangerCert), key: c.read(c.strangerKey) });
      try {
        expect((await plain.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
        expect(await statusOf(stranger.query(kubernetesApi, T.A, 3000))).toBe(grpc.status.UNAVAILABLE);
      } finally {
        plain.close();
        stranger.close();
      }
    } finally {
      await lax.app.close();
    }
  });

  it('client_auth request: a certificate is asked for, and none or any is answered', async () => {
    const asking = await serve(block(`tls ${c.serverCert} ${c.serverKey} ${c.ca} {\n    client_auth request\n  }`));
    try {
      const p = asking.ports['grpc']!;
      const base = { ca: c.read(c.ca), servername: dotHostname };
      for (const extra of [{}, { cert: c.read(c.strangerCert), key: c.read(c.strangerKey) }]) {
        const client = grpcClient(p, { ...base, ...extra });
        try {
          expect((await client.query(kubernetesApi, T.A)).answers?.map((a) => a.data)).toEqual([kubernetesApiIp]);
        } finally {
          client.close();
        }
      }
    } finally {
      await asking.app.close();
    }
  });

  it('counts gRPC queries under the grpc:// server label, with proto tcp, as CoreDNS does', async () => {
    // The label carries the key's port, as for dns:// keys: a free one rather than 0.
    const fixed = await freePort();
    const metered = await serve(block(`tls ${c.serverCert} ${c.serverKey}\n  prometheus 127.0.0.1:0`, `grpc://cluster.local:${fixed}`));
    try {
      expect(metered.ports['grpc']).toBe(fixed);
      const client = grpcClient(fixed, { ca: c.read(c.ca), servername: dotHostname });
      try {
        await client.query(kubernetesApi, T.A);
      } finally {
        client.close();
      }
      const { text } = await metered.app.scrapeMetrics();
      const server = `grpc://127.0.0.1:${fixed}`;
      expect(text).toContain(`coredns_dns_requests_total{server="${server}",zone="cluster.local.",view="",proto="tcp",family="1",type="A"} 1`);
      expect(text).toContain(`coredns_dns_responses_total{server="${server}",zone="cluster.local.",view="",rcode="NOERROR",plugin="kubernetes"} 1`);
      expect(text).not.toContain('server="dns://');
    } finally {
      await metered.app.close();
    }
  });
});
