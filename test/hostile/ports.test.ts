// The HTTP listeners health, ready and prometheus open: the start says what
// each opened, and a busy port stops the start with a message naming the Corefile directive
// that opened it and how to move it. The built-in Corefile's fixed :8080, :8181 and :9153 are
// tried in a network namespace of their own (unshare), so no other test's listeners are in the
// way and none of ours is in theirs.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, launcher, onLines, repoRoot, stopProcess, startServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { settleWithin } from '../helpers/wait.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-ports-'));
  writeFileSync(path.join(dir, 'p.zone'), '$ORIGIN p.test.\n$TTL 60\n@ IN SOA ns1 host 1 2h 30m 2w 300\n@ IN NS ns1\nns1 IN A 10.0.0.1\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | string | null;
  stdout: string[];
  stderr: string;
}

/** Runs `argv` (the server, maybe under a wrapper) until it exits, killing it after timeoutMs. */
function runToExit(argv: string[], timeoutMs: number, env: NodeJS.ProcessEnv = {}, stopAt?: string): Promise<Run> {
  const [cmd, ...args] = argv as [string, ...string[]];
  const proc = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const stdout: string[] = [];
  let stderr = '';
  onLines(proc.stdout, (l) => {
    stdout.push(l);
    if (stopAt !== undefined && l.includes(stopAt)) void stopProcess(proc, 0);
  });
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => void stopProcess(proc, 0).then(() => resolve({ code: 'timeout', stdout, stderr })), timeoutMs);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      // The last lines come after 'exit': wait for the pipes to close (bounded: a process the
      // server left behind may hold them).
      void settleWithin(new Promise((r) => proc.once('close', r)), 1000).then(() => resolve({ code: code ?? signal, stdout, stderr }));
    });
  });
}

function holdTcp(port: number): Promise<Server> {
  const srv = createServer();
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

describe('HTTP listeners of health, ready and prometheus (#21.5)', () => {
  const corefile = async (ports: Record<'health' | 'ready' | 'prometheus', number>): Promise<string> => {
    const file = path.join(dir, `Corefile.${ports.health}`);
    writeFileSync(
      file,
      `p.test {\n    bind 127.0.0.1\n    health 127.0.0.1:${ports.health}\n    ready 127.0.0.1:${ports.ready}\n    prometheus 127.0.0.1:${ports.prometheus}\n    file ${path.join(dir, 'p.zone')}\n}\n`,
    );
    return file;
  };

  it('logs each address opened at start', async () => {
    const ports = { health: await freePort(), ready: await freePort(), prometheus: await freePort() };
    const s = await startServer(['--conf', await corefile(ports)]);
    try {
      const opened = s.logs.map((l) => JSON.parse(l) as { msg: string; plugin?: string; address?: string }).filter((l) => l.msg === 'listening on HTTP');
      expect(opened.map((l) => `${l.plugin} ${l.address}`).sort()).toEqual([
        `health 127.0.0.1:${ports.health}`,
        `prometheus 127.0.0.1:${ports.prometheus}`,
        `ready 127.0.0.1:${ports.ready}`,
      ]);
    } finally {
      await stopProcess(s.proc, 0);
    }
  });

  for (const busy of ['health', 'ready', 'prometheus'] as const) {
    it(`a busy ${busy} port: one error naming the ${busy} line of the Corefile and the fix`, async () => {
      const ports = { health: await freePort(), ready: await freePort(), prometheus: await freePort() };
      const held = await holdTcp(ports[busy]);
      try {
        const file = await corefile(ports);
        const r = await runToExit([process.execPath, launcher, 'serve', '--conf', file, '--port', String(await freePort())], 10_000);
        expect(r.code, r.stderr).toBe(1);
        const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
        expect(lines, r.stderr).toHaveLength(1);
        expect(lines[0]).toContain(`127.0.0.1:${ports[busy]}`);
        expect(lines[0]).toContain(`the \`${busy}\` line of ${file}`);
        expect(lines[0]).toMatch(/another address \(e\.g\. `\w+ :\d+`\)/);
      } finally {
        held.close();
      }
    });
  }
});

describeNeeding(['unshare', 'ip'], 'the built-in Corefile in a network namespace of its own (#21.5)', () => {
  const env = { CLUSTERDNS_UPSTREAM_RESOLV_CONF: path.join(repoRoot, 'test/fixtures/no-upstream.resolv.conf') };
  // Holds :8080 until the server (its parent once sh has exec'd it) is gone, so it never outlives the test.
  const HOLDER =
    'const parent = process.ppid; require("net").createServer().listen(8080, () => require("fs").writeFileSync(process.argv[1], "x")); setInterval(() => process.ppid !== parent && process.exit(0), 100)';
  /** `unshare -rn` with loopback up, and optionally :8080 held first, as on a laptop running something else there. */
  const inNetns = (hold8080: boolean): string[] => {
    const flag = path.join(dir, `held-${Date.now()}`);
    const script = hold8080
      ? `ip link set lo up && { "$0" -e '${HOLDER}' ${flag} & } && until [ -s ${flag} ]; do sleep 0.05; done && exec "$0" "$@"`
      : 'ip link set lo up && exec "$0" "$@"';
    return ['unshare', '-rn', '--', 'sh', '-c', script, process.execPath, launcher, 'serve', '--manifests', 'examples/manifests', '--port', '1053'];
  };

  it('says at start that :8080, :8181 and :9153 were opened', async () => {
    const r = await runToExit(inNetns(false), 10_000, env, '"clusterdns ready"');
    const ready = r.stdout.findIndex((l) => l.includes('"clusterdns ready"'));
    expect(ready, r.stdout.join('\n') + r.stderr).toBeGreaterThan(0);
    const opened = r.stdout
      .slice(0, ready)
      .map((l) => JSON.parse(l) as { msg: string; plugin?: string; address?: string })
      .filter((l) => l.msg === 'listening on HTTP');
    expect(opened.map((l) => `${l.plugin} ${l.address}`).sort()).toEqual(['health :8080', 'prometheus :9153', 'ready :8181']);
  }, 15_000);

  it(':8080 busy: one error naming health in the built-in Corefile and --conf as the way to move it', async () => {
    const r = await runToExit(inNetns(true), 10_000, env);
    expect(r.code, r.stdout.join('\n') + r.stderr).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toContain(':8080');
    expect(lines[0]).toContain('`health` in the built-in Corefile');
    expect(lines[0]).toContain('--conf');
  }, 15_000);
});
