// Split horizon from a pod: with k8s_gateway in the Corefile, the library and `clusterdns
// resolve --pod` follow the pod's search list to the in-cluster answer for an ingress host;
// `clusterdns records` lists the edge zones.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { loadCluster } from '../../../src/api.js';
import { launcher, repoRoot } from '../../helpers/server.js';
import { missingTools, skipOrFailInCI } from '../../helpers/tools.js';
import { holdsWithin } from '../../helpers/wait.js';

const manifests = path.join(repoRoot, 'test/fixtures/edge/gateway/manifests');
const corefile = `. {
    k8s_gateway ttomcat.com demo.com
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
}
`;

describe('ingress hosts from a pod (split horizon)', () => {
  it('resolve www.ttomcat.com from a tomcat pod walks the search list, then gets the ingress address', async () => {
    const cluster = await loadCluster({ manifests: [manifests], corefile });
    try {
      const pod = cluster.model!.pods.find((p) => p.namespace === 'default' && p.name.startsWith('tomcat-deploy-'))!;
      const nginx = cluster.model!.edge!.serviceStatus.get('ingress-nginx/ingress-nginx-controller')!.addresses[0]!.ip!;
      const trace = await cluster.resolve('www.ttomcat.com', { from: `default/${pod.name}` });
      expect(trace.result.status).toBe('ok');
      expect(trace.result.answers).toEqual([nginx]);
      expect(trace.queries.filter((q) => q.type === 'A').map((q) => `${q.name} ${q.rcode}`)).toEqual([
        'www.ttomcat.com.default.svc.cluster.local. NXDOMAIN',
        'www.ttomcat.com.svc.cluster.local. NXDOMAIN',
        'www.ttomcat.com.cluster.local. NXDOMAIN',
        'www.ttomcat.com. NOERROR',
      ]);
    } finally {
      await cluster.close();
    }
  });

  it('clusterdns records prints the k8s_gateway and k8s_external zones with the filled addresses', () => {
    const out = execFileSync(
      process.execPath,
      [launcher, 'records', '-c', path.join(repoRoot, 'test/fixtures/edge/gateway/Corefile'), '-m', manifests, '--zone', 'ttomcat.com'],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    expect(out).toMatch(/^www\.ttomcat\.com\.\t30\tIN\tA\t172\.18\.255\.\d+$/m);
    const ext = execFileSync(
      process.execPath,
      [
        launcher,
        'records',
        '-c',
        path.join(repoRoot, 'test/fixtures/edge/external/Corefile'),
        '-m',
        path.join(repoRoot, 'test/fixtures/edge/external/manifests.yaml'),
        '--zone',
        'example.org',
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    expect(ext).toMatch(/^pooled\.testns\.example\.org\.\t5\tIN\tA\t172\.18\.255\.\d+$/m);
    expect(ext).toMatch(/^lb\.testns\.example\.org\.\t5\tIN\tA\t203\.0\.113\.7$/m);
  });
});

describe('examples/Corefile.edge', () => {
  it('answers the README dig lines: Ingress hosts, the HTTPRoute, the LoadBalancer Service, k8s_external', async () => {
    const { buildApp } = await import('../../../src/app.js');
    const app = await buildApp({ conf: path.join(repoRoot, 'examples/Corefile.edge'), manifests: [], port: 0 });
    try {
      const a = async (name: string): Promise<string[]> => ((await ask(app, name, 'A')).answers ?? []).map((r) => `${r.type} ${String(r.data)}`);
      const nginx = await a('www.example.com');
      expect(nginx).toEqual([expect.stringMatching(/^A 172\.18\.255\.\d+$/)]);
      expect(await a('ingress.demo.com')).toEqual(nginx);
      expect(await a('api.example.com')).toEqual([expect.stringMatching(/^A 172\.18\.255\.\d+$/)]);
      const checkout = await a('checkout.example.com');
      expect(checkout).toEqual([expect.stringMatching(/^A 172\.18\.255\.\d+$/)]);
      expect(await a('checkout.shop.example.org')).toEqual(checkout);
      expect(await a('web.shop.svc.cluster.local')).toEqual([expect.stringMatching(/^A 10\./)]);
    } finally {
      await app.close();
    }
  });
});

describe('k8s_gateway options and manifest changes', () => {
  it.skipIf(skipOrFailInCI(missingTools('dig'), 'k8s_gateway secondary and watch (dig)'))(
    'secondary adds a second NS at the apex; a changed manifest is re-read (watch)',
    async () => {
      const fs = await import('node:fs');
      const os = await import('node:os');
      const { startServer } = await import('../../helpers/server.js');
      const { digQuery } = await import('../../helpers/clients.js');
      const { which } = await import('../../helpers/server.js');
      const dig = which('dig')!;
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-gateway-'));
      const ingress = (ip: string): string =>
        `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a, namespace: default}\nspec:\n  rules: [{host: a.example.com}]\nstatus:\n  loadBalancer:\n    ingress: [{ip: ${ip}}]\n`;
      fs.writeFileSync(path.join(tmp, 'm.yaml'), ingress('192.0.2.1'));
      fs.writeFileSync(
        path.join(tmp, 'Corefile'),
        'example.com {\n  bind 127.0.0.1\n  k8s_gateway {\n    secondary dns2.kube-system\n    manifests m.yaml\n    watch 100ms\n  }\n}\n',
      );
      const server = await startServer(['--conf', path.join(tmp, 'Corefile')]);
      try {
        const ns = await digQuery(dig, server.port, 'example.com', 'NS', false);
        expect(ns.answer.map((l) => l.split(/\s+/).slice(-1)[0])).toEqual(['dns1.kube-system.example.com.', 'dns2.kube-system.example.com.']);
        expect((await digQuery(dig, server.port, 'a.example.com', 'A', false)).answer[0]).toMatch(/192\.0\.2\.1$/);
        fs.writeFileSync(path.join(tmp, 'm.yaml'), ingress('192.0.2.2') + '# changed\n');
        let last = '';
        await holdsWithin(
          async () => {
            last = (await digQuery(dig, server.port, 'a.example.com', 'A', false)).answer[0] ?? '';
            return last.endsWith('192.0.2.2');
          },
          4000,
          100,
        );
        expect(last).toMatch(/192\.0\.2\.2$/);
      } finally {
        await server.stop();
        fs.rmSync(tmp, { recursive: true });
      }
    },
  );
});

describe('fallthrough to the next plugin (file)', () => {
  it('k8s_gateway and k8s_external pass names nothing claims to the file plugin; claimed names stay theirs', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const { buildApp } = await import('../../../src/app.js');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'edge-fallthrough-'));
    const zone = (origin: string): string =>
      `$ORIGIN ${origin}.\n@ 60 IN SOA ns.${origin}. admin.${origin}. 1 7200 1800 86400 60\n@ 60 IN NS ns.${origin}.\nns 60 IN A 192.0.2.250\nstatic 60 IN A 192.0.2.251\n`;
    fs.writeFileSync(path.join(tmp, 'db.com'), zone('example.com'));
    fs.writeFileSync(path.join(tmp, 'db.org'), zone('example.org'));
    fs.writeFileSync(
      path.join(tmp, 'Corefile'),
      `example.com {\n  k8s_gateway {\n    resources HTTPRoute Ingress Service\n    fallthrough\n  }\n  file db.com example.com\n}\n` +
        `. {\n  kubernetes cluster.local\n  k8s_external example.org {\n    fallthrough\n  }\n  file db.org example.org\n}\n`,
    );
    const app = await buildApp({
      conf: path.join(tmp, 'Corefile'),
      manifests: [manifests, path.join(repoRoot, 'test/fixtures/edge/external/manifests.yaml')],
      port: 0,
    });
    try {
      const a = async (name: string): Promise<string[]> => ((await ask(app, name, 'A')).answers ?? []).map((r) => String(r.data));
      expect(await a('static.example.com')).toEqual(['192.0.2.251']);
      expect(await a('shop.example.com')).toEqual(['198.51.100.20']);
      expect(await a('static.example.org')).toEqual(['192.0.2.251']);
      expect(await a('svc1.testns.example.org')).toEqual(['1.2.3.4']);
      expect((await ask(app, 'nothing.example.org', 'A')).rcode).toBe('NXDOMAIN');
    } finally {
      await app.close();
      fs.rmSync(tmp, { recursive: true });
    }
  });
});

describe('cluster flags', () => {
  it('--loadbalancer-cidr and --service-node-port-range reach the model through the command line', () => {
    const out = execFileSync(
      process.execPath,
      [
        launcher,
        'records',
        '-c',
        path.join(repoRoot, 'test/fixtures/edge/external/Corefile'),
        '-m',
        path.join(repoRoot, 'test/fixtures/edge/external/manifests.yaml'),
        '--zone',
        'example.org',
        '--loadbalancer-cidr',
        '192.0.2.64/29',
        '--service-node-port-range',
        '31000-31010',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    expect(out).toMatch(/^pooled\.testns\.example\.org\.\t5\tIN\tA\t192\.0\.2\.(6[5-9]|70)$/m);
    let err = '';
    try {
      execFileSync(
        process.execPath,
        [launcher, 'check', '-m', path.join(repoRoot, 'test/fixtures/edge/external/manifests.yaml'), '--service-node-port-range', '40000-30000'],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (e) {
      err = (e as { stdout: string }).stdout;
    }
    expect(err).toMatch(/node port range "40000-30000" is not valid; write LOW-HIGH/);
  });
});
