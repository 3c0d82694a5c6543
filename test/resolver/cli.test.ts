// End to end, in process: `clusterdns resolv-conf` and `clusterdns resolve` against the example manifests.
import { describe, it, expect } from 'vitest';
import { Writable } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { addResolverCommands } from '../../src/cli/resolver-register.js';
import { repoRoot } from '../helpers/server.js';

/** Runs the commands through commander in process, capturing stdout. */
async function run(args: string[]): Promise<string> {
  let text = '';
  const orig = process.stdout.write.bind(process.stdout);
  const origErr = process.stderr.write.bind(process.stderr);
  (process.stdout as unknown as { write: (c: string) => boolean }).write = (c: string) => {
    text += c;
    return true;
  };
  (process.stderr as unknown as { write: (c: string) => boolean }).write = () => true;
  try {
    const program = new Command().exitOverride();
    addResolverCommands(program);
    const cwd = process.cwd();
    process.chdir(repoRoot);
    try {
      await program.parseAsync(['node', 'clusterdns', ...args]);
    } finally {
      process.chdir(cwd);
    }
  } finally {
    process.stdout.write = orig;
    process.stderr.write = origErr;
  }
  return text;
}
void Writable;

const M = ['--manifests', 'examples/manifests'];

describe('clusterdns resolv-conf', () => {
  it('prints the ClusterFirst resolv.conf of pod web-0, with the kube-dns cluster IP', async () => {
    expect(await run(['resolv-conf', '--pod', 'apps/web-0', ...M])).toBe(
      'search apps.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n',
    );
  });

  it('--namespace for a pod that does not exist yet; --cluster-dns and --cluster-domain', async () => {
    expect(await run(['resolv-conf', '-n', 'team-a', '--cluster-dns', '10.0.0.10', '--cluster-domain', 'k8s.example'])).toBe(
      'search team-a.svc.k8s.example svc.k8s.example k8s.example\nnameserver 10.0.0.10\noptions ndots:5\n',
    );
  });

  it('--host-resolv-conf: the node search list follows the cluster ones', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-rc-'));
    const f = path.join(dir, 'resolv.conf');
    writeFileSync(f, 'nameserver 192.168.1.1\nsearch corp.example.com cluster.local\noptions rotate\n');
    expect(await run(['resolv-conf', '-n', 'default', '--host-resolv-conf', f, ...M])).toBe(
      'search default.svc.cluster.local svc.cluster.local cluster.local corp.example.com\nnameserver 10.96.0.10\noptions ndots:5\n',
    );
  });

  it('--hosts prints the kubelet-managed /etc/hosts', async () => {
    expect(await run(['resolv-conf', '--pod', 'apps/web-0', '--hosts', ...M])).toBe(
      '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.244.1.10\tweb-0.nginx.apps.svc.cluster.local\tweb-0\n',
    );
  });

  it('derived pods are found; an unknown pod names similar ones', async () => {
    const out = await run(['resolv-conf', '-n', 'default', ...M]);
    expect(out).toContain('nameserver 10.96.0.10');
    await expect(run(['resolv-conf', '--pod', 'apps/web-9', ...M])).rejects.toThrow(/no pod apps\/web-9.*similar: apps\/web-0/);
  });
});

describe('clusterdns resolve --json (in process)', () => {
  it('from pod web-0 in apps, kubernetes.default resolves to 10.96.0.1 after the expected candidates', async () => {
    const out = JSON.parse(await run(['resolve', 'kubernetes.default', '--pod', 'apps/web-0', '--json', ...M])) as {
      name: string;
      type: string;
      libc: string;
      queries: { name: string; type: string; server: string; rcode: string; answers: string[] }[];
      result: { status: string; answers: string[] };
    };
    expect(out.name).toBe('kubernetes.default');
    expect(out.type).toBe('A+AAAA');
    expect(out.libc).toBe('glibc');
    expect(out.queries.map((q) => `${q.name} ${q.type} ${q.server} ${q.rcode}`)).toEqual([
      'kubernetes.default.apps.svc.cluster.local. A in-process NXDOMAIN',
      'kubernetes.default.apps.svc.cluster.local. AAAA in-process NXDOMAIN',
      'kubernetes.default.svc.cluster.local. A in-process NOERROR',
      'kubernetes.default.svc.cluster.local. AAAA in-process NOERROR',
    ]);
    expect(out.queries[2]!.answers).toEqual(['A 10.96.0.1']);
    expect(out.result).toMatchObject({ status: 'ok', answers: ['10.96.0.1'] });
  });

  it('prints a readable trace with counts; the pod hosts file answers its own name', async () => {
    const text = await run(['resolve', 'kubernetes.default', '--pod', 'apps/web-0', '--libc', 'musl', ...M]);
    expect(text).toContain('result: ok 10.96.0.1');
    expect(text).toContain('4 queries, 2 round trips');
    const own = await run(['resolve', 'web-0', '--pod', 'apps/web-0', ...M]);
    expect(own).toContain('result: ok 10.244.1.10 (from the hosts file)');
    expect(own).toContain('0 queries');
  });
});
