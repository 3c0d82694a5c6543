// autopath measured with real glibc: a pod with kubelet's ndots:5 resolv.conf looks names up
// through `getent ahosts`, and the server's query log shows how many queries reached it, with
// and without `autopath @kubernetes`.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { launcher, onLines, repoRoot, stopProcess } from '../helpers/server.js';
import { createPair, netnsUnavailable, runInPod, spawnIn, type NetnsPair } from './netns.js';

const why = netnsUnavailable();
if (why) {
  const msg = `autopath glibc test cannot run: ${why}`;
  if (process.env.CI === 'true') throw new Error(`${msg} (CI must run it: .ci/run runs as root and installs iproute2)`);
  console.warn(`SKIP ${msg}`);
}

// apps/web-0 in examples/manifests/pods.json; the server takes the kube-dns cluster IP.
const POD_IP = '10.244.1.10';
const DNS_IP = '10.96.0.10';

function corefile(autopath: boolean): string {
  return `cluster.local {
    bind ${DNS_IP}
    ${autopath ? 'autopath @kubernetes' : ''}
    kubernetes {
        manifests ${path.join(repoRoot, 'examples/manifests')}
        pods verified
    }
}
`;
}

interface Served {
  proc: ChildProcess;
  queries: { name: string; type: string; rcode: string; remote: string }[];
  /** Settles when the server's stdout has ended: every query it logged is in `queries` then. */
  logged: Promise<void>;
}

async function serve(pair: NetnsPair, conf: string): Promise<Served> {
  const proc = spawnIn(pair.server, [process.execPath, launcher, 'serve', '--conf', conf, '--port', '53', '--log-queries'], { cwd: repoRoot });
  const logged = new Promise<void>((resolve) => proc.stdout!.once('close', () => resolve()));
  const served: Served = { proc, queries: [], logged };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server in the namespace did not start within 15 s')), 15000);
    onLines(proc.stdout!, (line) => {
      const entry = JSON.parse(line) as { msg: string; query?: { name: string; type: string; rcode: string; remote: string } };
      if (entry.msg === 'clusterdns ready') {
        clearTimeout(timer);
        resolve();
      }
      if (entry.query) served.queries.push(entry.query);
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return served;
}

async function stop(s: Served): Promise<void> {
  await stopProcess(s.proc, 3000);
}

describe.skipIf(why !== undefined)('autopath with glibc from a pod IP (network namespaces)', () => {
  let pair: NetnsPair;
  let dir: string;
  beforeAll(() => {
    pair = createPair(DNS_IP, POD_IP);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-autopath-'));
    // What kubelet writes for apps/web-0 (ClusterFirst).
    fs.writeFileSync(path.join(dir, 'resolv.conf'), `search apps.svc.cluster.local svc.cluster.local cluster.local\nnameserver ${DNS_IP}\noptions ndots:5\n`);
    fs.writeFileSync(path.join(dir, 'hosts'), '127.0.0.1 localhost\n');
    fs.writeFileSync(path.join(dir, 'nsswitch.conf'), 'hosts: files dns\n');
    fs.writeFileSync(path.join(dir, 'with.Corefile'), corefile(true));
    fs.writeFileSync(path.join(dir, 'without.Corefile'), corefile(false));
  });
  afterAll(() => {
    pair?.destroy();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function lookup(autopath: boolean, name: string): Promise<{ output: string; queries: Served['queries'] }> {
    const s = await serve(pair, path.join(dir, autopath ? 'with.Corefile' : 'without.Corefile'));
    try {
      const output = runInPod(
        pair,
        { '/etc/resolv.conf': path.join(dir, 'resolv.conf'), '/etc/hosts': path.join(dir, 'hosts'), '/etc/nsswitch.conf': path.join(dir, 'nsswitch.conf') },
        `getent ahosts ${name} || echo "getent exit $?"`,
      );
      return { output, queries: s.queries };
    } finally {
      // The query log is complete once the stopped server's stdout has closed.
      await stop(s);
      await s.logged;
    }
  }

  it.each([
    // name, queries glibc sends without autopath (A+AAAA per candidate), and with it
    ['nginx.apps.svc.cluster.local', 8, 2],
    ['web-0.nginx.apps.svc.cluster.local', 2, 2],
    ['kubernetes.default', 4, 2],
    ['nginx', 2, 2],
  ])(
    '%s: %i queries without autopath, %i with it, same addresses',
    async (name, without, withAp) => {
      const plain = await lookup(false, name);
      const auto = await lookup(true, name);
      const addresses = (out: string): string[] =>
        [
          ...new Set(
            out
              .split('\n')
              .filter((l) => /STREAM/.test(l))
              .map((l) => l.split(/\s+/)[0]!),
          ),
        ].sort();
      expect(addresses(plain.output).length).toBeGreaterThan(0);
      expect(addresses(auto.output)).toEqual(addresses(plain.output));
      for (const q of [...plain.queries, ...auto.queries]) expect(q.remote.replace(/^::ffff:/, '')).toBe(POD_IP);
      expect(plain.queries.map((q) => `${q.name} ${q.type}`)).toHaveLength(without);
      expect(auto.queries.map((q) => `${q.name} ${q.type}`)).toHaveLength(withAp);
      console.log(`autopath saving for ${name} from ${POD_IP} (glibc getent ahosts): ${without} -> ${withAp} queries`);
    },
    60000,
  );
});
