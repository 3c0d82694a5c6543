// The `serve` command as a user meets it: start-up, refusal to start on bad input, signals.
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import path from 'node:path';
import { launcher, repoRoot, startServer, freePort } from '../helpers/server.js';
import { dnsQuery } from './udp-query.js';

const fixtures = path.join(repoRoot, 'test/fixtures/cli');

function run(args: string[], timeoutMs = 15000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [launcher, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`clusterdns ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('clusterdns serve', () => {
  it('with --strict, refuses to start on broken manifests and names every error with file and line', async () => {
    // Without --strict the objects with errors are left out and the rest is served
    // (test/cluster/admission-serve.test.ts).
    const port = await freePort();
    const r = await run(['serve', '--strict', '--manifests', path.join(fixtures, 'broken.yaml'), '--port', String(port)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/broken\.yaml:\d+: .*Bad_Name/);
    expect(r.stderr).toMatch(/broken\.yaml:\d+: .*10\.96\.5\.300/);
  });

  it('refuses an unknown plugin with the Corefile line', async () => {
    const port = await freePort();
    const r = await run([
      'serve',
      '--conf',
      path.join(fixtures, 'unknown-plugin.Corefile'),
      '--manifests',
      path.join(repoRoot, 'examples/manifests'),
      '--port',
      String(port),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unknown-plugin.Corefile:4');
    expect(r.stderr).toContain('frobnicate');
  });

  it('explains a port that is already in use', async () => {
    const port = await freePort();
    const blocker = createSocket('udp4');
    await new Promise<void>((resolve) => blocker.bind(port, '127.0.0.1', resolve));
    try {
      const r = await run([
        'serve',
        '--conf',
        path.join(repoRoot, 'examples/Corefile'),
        '--manifests',
        path.join(repoRoot, 'examples/manifests'),
        '--port',
        String(port),
      ]);
      expect(r.code).not.toBe(0);
      // One clear line naming address:port and the fix; no logged error with a stack before it.
      expect(r.stderr).toBe(
        `clusterdns: cannot listen on 127.0.0.1:${port} (UDP): the port is already in use by another process; stop it or choose another --port\n`,
      );
      expect(r.stdout).not.toMatch(/stack|"level":50/);
    } finally {
      blocker.close();
    }
  });

  it.skipIf(process.getuid?.() === 0)('says how to fix a privileged port (skipped as root, where binding port 53 works)', async () => {
    const r = await run([
      'serve',
      '--conf',
      path.join(repoRoot, 'examples/Corefile'),
      '--manifests',
      path.join(repoRoot, 'examples/manifests'),
      '--port',
      '53',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/privileges/);
    expect(r.stderr).toMatch(/--port 1053/);
  });

  it('serves the example cluster as npm start does, logs where, and stops on SIGTERM', async () => {
    const server = await startServer(['--conf', 'examples/Corefile', '--manifests', 'examples/manifests']);
    try {
      const ready = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'clusterdns ready');
      expect(ready?.try).toBe(`dig @127.0.0.1 -p ${server.port} kubernetes.default.svc.cluster.local`);
      const loaded = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'kubernetes data loaded');
      expect(loaded?.objects).toBeGreaterThan(5);
      const reply = await dnsQuery(server.port, 'kubernetes.default.svc.cluster.local', 'A');
      expect(reply.rcode).toBe('NOERROR');
      expect(reply.answers.map((a) => a.data)).toEqual(['10.96.0.1']);
      const dns = await dnsQuery(server.port, 'kube-dns.kube-system.svc.cluster.local', 'A');
      expect(dns.answers.map((a) => a.data)).toEqual(['10.96.0.10']);
    } finally {
      await server.stop();
    }
    expect(server.proc.exitCode).toBe(0);
  });
});

describe('clusterdns serve: the startup "try" line names data the server has', () => {
  const cases = [
    { why: 'a cluster without the kubernetes API Service', args: ['--conf', 'test/fixtures/k8s/Corefile.main', '--manifests', 'test/fixtures/k8s/manifests'] },
    { why: 'a file zone (example.org)', args: ['--conf', 'test/fixtures/file/Corefile.main'], want: /^dig @127\.0\.0\.1 -p \d+ example\.org$/ },
  ];
  for (const c of cases) {
    it(`${c.why}: the suggested query gets an answer`, async () => {
      const server = await startServer(c.args);
      try {
        const ready = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'clusterdns ready');
        const line = String(ready?.try);
        expect(line).not.toContain('kubernetes.default.svc');
        if (c.want) expect(line).toMatch(c.want);
        const m = /^dig @127\.0\.0\.1 -p (\d+) (\S+)(?: (\S+))?$/.exec(line);
        expect(m, line).not.toBeNull();
        expect(Number(m![1])).toBe(server.port);
        const reply = await dnsQuery(server.port, m![2]!, m![3] ?? 'A');
        expect(reply.rcode, line).toBe('NOERROR');
        expect(reply.answers.length, line).toBeGreaterThan(0);
      } finally {
        await server.stop();
      }
    });
  }
});
