// The default search domain glibc and Go take from gethostname() when resolv.conf has no search or
// domain line, and that musl takes none: `clusterdns resolve --pod` uses the pod's
// host name (the node's for a hostNetwork pod), `--hostname` overrides it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveCommand } from '../../src/cli/resolver-commands.js';
import { podGethostname } from '../../src/resolver/kubelet.js';
import type { Trace } from '../../src/resolver/types.js';
import { repoRoot } from '../helpers/server.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';

const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-hostname-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const manifests = path.join(dir, 'm.yaml');
writeFileSync(
  manifests,
  `apiVersion: v1
kind: Pod
metadata: { name: agent, namespace: ci }
spec:
  hostNetwork: true
  nodeName: build-1.corp.example.com
  containers: [{ name: c, image: busybox }]
---
apiVersion: v1
kind: Pod
metadata: { name: web, namespace: ci }
spec:
  hostname: web
  subdomain: www
  setHostnameAsFQDN: true
  containers: [{ name: c, image: busybox }]
`,
);
// The node's resolv.conf: a nameserver and no search line (the hostNetwork pod gets it as is).
const nodeConf = path.join(dir, 'node-resolv.conf');
writeFileSync(nodeConf, 'nameserver 10.0.0.2\n');
const conf = path.join(repoRoot, 'test/fixtures/resolver/Corefile');

const sink = { write: () => true } as unknown as NodeJS.WritableStream;
async function queries(name: string, flags: Record<string, unknown>): Promise<string[]> {
  const trace: Trace = await resolveCommand(name, { conf, manifests: [manifests], hostResolvConf: nodeConf, type: 'A', json: true, ...flags }, sink, sink);
  // Names outside the Corefile's zones get REFUSED, which glibc retries: the distinct names, in order.
  return [...new Set(trace.queries.map((q) => q.name))];
}

describe('resolve: the search domain from the host name', () => {
  it("a hostNetwork pod: glibc and Go try the node's domain; musl does not", async () => {
    expect(await queries('build', { pod: 'ci/agent', libc: 'glibc' })).toEqual(['build.corp.example.com.', 'build.']);
    expect(await queries('build', { pod: 'ci/agent', libc: 'go' })).toContain('build.corp.example.com.');
    expect(await queries('build', { pod: 'ci/agent', libc: 'musl' })).toEqual(['build.']);
  });

  it('--hostname stands for gethostname() with a plain resolv.conf', async () => {
    const rc = path.join(dir, 'plain.conf');
    writeFileSync(rc, 'nameserver 127.0.0.1\n');
    expect(await queries('build', { resolvConf: rc, hostname: 'build-1.corp.example.com', libc: 'glibc' })).toEqual(['build.corp.example.com.', 'build.']);
    expect(await queries('build', { resolvConf: rc, hostname: 'build-1', libc: 'glibc' })).toEqual(['build.']);
  });

  it("gethostname() of a pod: the node's, the FQDN with setHostnameAsFQDN, else the short name", () => {
    expect(podGethostname({ namespace: 'ci', name: 'agent', hostNetwork: true, nodeName: 'build-1.corp.example.com' }, 'cluster.local')).toBe(
      'build-1.corp.example.com',
    );
    expect(podGethostname({ namespace: 'ci', name: 'web', hostname: 'web', subdomain: 'www', setHostnameAsFQDN: true }, 'cluster.local')).toBe(
      'web.www.ci.svc.cluster.local',
    );
    expect(podGethostname({ namespace: 'ci', name: 'web', hostname: 'web', subdomain: 'www' }, 'cluster.local')).toBe('web');
  });

  const missing = process.getuid?.() !== 0 ? 'root (for unshare)' : missingTools('unshare', 'ip', 'getent', 'hostname');
  it.skipIf(skipOrFailInCI(missing, 'real glibc with a host name'))('real glibc (getent) with that host name asks what resolve predicts', async () => {
    const rc = path.join(dir, 'glibc.conf');
    writeFileSync(rc, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
    // A listener on 127.0.0.1:53 that prints each query name and answers NXDOMAIN, in a private
    // UTS, mount and network namespace whose host name is build-1.corp.example.com. It says on a
    // FIFO when it listens (the client starts then) and stops when its stdin, another FIFO the
    // shell holds open until the client is done, ends.
    const fifos = mkdtempSync(path.join(dir, 'fifo-'));
    const listener = [
      "const s=require('dgram').createSocket('udp4');",
      "s.on('message',(m,r)=>{let o=12;const l=[];while(m[o]){l.push(m.subarray(o+1,o+1+m[o]).toString());o+=1+m[o];}console.log('Q '+l.join('.')+'.');",
      'const a=Buffer.from(m.subarray(0,o+5));a[2]|=0x80;a[3]=(a[3]&0xf0)|3;a.writeUInt32BE(0,6);a.writeUInt16BE(0,10);s.send(a,r.port,r.address);});',
      "s.bind(53,'127.0.0.1',()=>require('fs').writeSync(3,'up\\n'));process.stdin.on('end',()=>s.close()).resume();",
    ].join('');
    const out = execFileSync(
      'unshare',
      [
        '--uts',
        '--mount',
        '--net',
        '--propagation',
        'private',
        '--',
        'sh',
        '-c',
        // A non-loopback address: glibc's AI_ADDRCONFIG sends nothing on a loopback-only host.
        'hostname build-1.corp.example.com && ip link set lo up && ip addr add 192.0.2.53/32 dev lo && mount --bind "$1" /etc/resolv.conf && mkfifo "$4/up" "$4/stop" && { "$2" -e "$3" <"$4/stop" 3>"$4/up" & } && exec 4>"$4/stop" && read _ <"$4/up" && { getent ahostsv4 build || true; }; exec 4>&-; wait',
        'sh',
        rc,
        process.execPath,
        listener,
        fifos,
      ],
      { timeout: 20000, encoding: 'utf8' },
    );
    const real = [
      ...new Set(
        out
          .split('\n')
          .filter((l) => l.startsWith('Q '))
          .map((l) => l.slice(2)),
      ),
    ];
    expect(real).toEqual(['build.corp.example.com.', 'build.']);
    expect(await queries('build', { resolvConf: rc, hostname: 'build-1.corp.example.com', libc: 'glibc' })).toEqual(real);
  });
});
