// autopath: the server walks the asking pod's search path and answers with a CNAME.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ask } from '../../helpers/decode.js';
import path from 'node:path';
import { buildApp, type App } from '../../../src/app.js';
import { repoRoot } from '../../helpers/server.js';

const conf = path.join(repoRoot, 'test/fixtures/autopath/Corefile');
// apps/web-0 has status.podIP 10.244.1.10 in examples/manifests/pods.json.
const WEB0 = '10.244.1.10';

const lines = (answers: { name: string; type: string; data?: unknown }[] | undefined): string[] =>
  (answers ?? []).map((a) => `${a.name} ${a.type} ${typeof a.data === 'string' ? a.data : JSON.stringify(a.data)}`);

describe('autopath @kubernetes', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({ conf });
  });
  afterAll(async () => app.close());

  it('answers the first search-suffixed query of a pod with a CNAME to the name that exists', async () => {
    const r = await ask(app, 'kubernetes.default.apps.svc.cluster.local', 'A', { client: WEB0 });
    expect(r.rcode).toBe('NOERROR');
    expect(lines(r.answers)).toEqual([
      'kubernetes.default.apps.svc.cluster.local CNAME kubernetes.default.svc.cluster.local',
      'kubernetes.default.svc.cluster.local A 10.96.0.1',
    ]);
  });

  it('reaches the bare name at the end of the path', async () => {
    const r = await ask(app, 'kubernetes.default.svc.cluster.local.apps.svc.cluster.local', 'A', { client: WEB0 });
    expect(lines(r.answers)).toEqual([
      'kubernetes.default.svc.cluster.local.apps.svc.cluster.local CNAME kubernetes.default.svc.cluster.local',
      'kubernetes.default.svc.cluster.local A 10.96.0.1',
    ]);
  });

  it('a name in the pod namespace needs no CNAME', async () => {
    const r = await ask(app, 'nginx.apps.svc.cluster.local', 'A', { client: WEB0 });
    expect(lines(r.answers).sort()).toEqual(['nginx.apps.svc.cluster.local A 10.244.1.10', 'nginx.apps.svc.cluster.local A 10.244.2.11']);
  });

  it('answers NXDOMAIN for the first candidate when nothing on the path exists', async () => {
    const r = await ask(app, 'nope.svc.cluster.local.apps.svc.cluster.local', 'A', { client: WEB0 });
    expect(r.rcode).toBe('NXDOMAIN');
    expect(r.answers).toEqual([]);
  });

  it('a bare candidate outside every zone with no plugin after kubernetes is SERVFAIL, as in CoreDNS', async () => {
    // CoreDNS's autopath stops on the "no next plugin" error of the last candidate.
    const r = await ask(app, 'nothing-here.apps.svc.cluster.local', 'A', { client: WEB0 });
    expect(r.rcode).toBe('SERVFAIL');
  });

  it('does nothing for clients that are not pods, and never reuses a pod answer for them', async () => {
    await ask(app, 'kubernetes.default.apps.svc.cluster.local', 'A', { client: WEB0 });
    const r = await ask(app, 'kubernetes.default.apps.svc.cluster.local', 'A', { client: '127.0.0.1' });
    expect(r.rcode).toBe('NXDOMAIN');
    const again = await ask(app, 'kubernetes.default.apps.svc.cluster.local', 'A', { client: WEB0 });
    expect(again.rcode).toBe('NOERROR');
  });

  it('recognises a pod behind an IPv4-mapped IPv6 source address', async () => {
    const r = await ask(app, 'kubernetes.default.apps.svc.cluster.local', 'A', { client: `::ffff:${WEB0}` });
    expect(r.rcode).toBe('NOERROR');
  });
});

describe('autopath setup', () => {
  it('needs a source', async () => {
    await expect(buildApp({ corefileText: 'cluster.local {\n  autopath\n  kubernetes {\n    manifests examples/manifests\n  }\n}\n' })).rejects.toThrow(
      /Corefile:2: autopath: wrong number of arguments: 0 given, at least 1 expected; usage `autopath \[ZONES...\] RESOLV-CONF\|@PLUGIN`/,
    );
  });

  it('walks a resolv.conf search list', async () => {
    const app = await buildApp({
      corefileText: `cluster.local {\n  autopath ${path.join(repoRoot, 'test/fixtures/autopath/resolv.conf')}\n  kubernetes {\n    manifests ${path.join(repoRoot, 'examples/manifests')}\n  }\n}\n`,
    });
    try {
      const r = await ask(app, 'kube-dns.default.svc.cluster.local', 'A');
      expect(lines(r.answers)).toEqual([
        'kube-dns.default.svc.cluster.local CNAME kube-dns.kube-system.svc.cluster.local',
        'kube-dns.kube-system.svc.cluster.local A 10.96.0.10',
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('clusterdns resolve shows what autopath saves', () => {
  it('counts the same lookup with and without autopath', async () => {
    const { resolveCommand } = await import('../../../src/cli/resolver-commands.js');
    const { Writable } = await import('node:stream');
    const out = new Writable({ write: (_c, _e, cb) => cb() });
    const trace = await resolveCommand('nginx.apps.svc.cluster.local', { pod: 'apps/web-0', conf }, out, out);
    expect(trace.result.status).toBe('ok');
    // glibc, ndots:5: three search suffixes then the name itself, A+AAAA each; autopath answers the first.
    expect(trace.queries).toHaveLength(2);
    expect(trace.withoutAutopath).toEqual({ queries: 8, roundTrips: 4 });
  });
});
