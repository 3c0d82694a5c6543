// Hostile operations (issues #9.9, #9.10, #9.11, #9.16): shutdown with workers, workers that keep
// dying, idle HTTP connections, repeated metrics scrapes. Every test runs the real server on
// loopback, bounded in count and time, and stops what it starts by PID.
import { describe, it, expect, afterEach } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, launcher, repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

const children = (pid: number): number[] => {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
};
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let running: RunningServer[] = [];
afterEach(async () => {
  for (const s of running) {
    const kids = children(s.proc.pid!);
    await s.stop();
    for (const k of kids) if (alive(k)) process.kill(k, 'SIGKILL');
  }
  running = [];
});

async function startWorkers(extraEnv: NodeJS.ProcessEnv = {}): Promise<{ server: RunningServer; metricsPort: number }> {
  const metricsPort = await freePort();
  const server = await startServer(['--manifests', 'examples/manifests', '--workers', '2', '--conf', 'test/fixtures/ops/workers.Corefile'], {
    env: { METRICS_PORT: String(metricsPort), ...extraEnv },
  });
  running.push(server);
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline && server.logs.filter((l) => l.includes('"clusterdns ready"')).length < 2) await sleep(100);
  expect(children(server.proc.pid!)).toHaveLength(2);
  return { server, metricsPort };
}

describe('--workers: shutdown and supervision', () => {
  it('(#9.9) SIGTERM stops the primary and every worker within 1 s (no lameduck configured)', async () => {
    const { server } = await startWorkers();
    const kids = children(server.proc.pid!);
    const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
    const t0 = Date.now();
    server.proc.kill('SIGTERM');
    const code = await Promise.race([exited, sleep(5000).then(() => 'timeout' as const)]);
    const took = Date.now() - t0;
    expect(code).toBe(0);
    expect(took).toBeLessThan(1000);
    expect(kids.filter(alive)).toEqual([]);
  }, 20000);

  it('(#9.10) workers that keep dying make the primary exit non-zero, so a supervisor restarts it', async () => {
    // Every worker fails at startup: the Corefile names an unknown plugin.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-crash-'));
    const conf = path.join(dir, 'Corefile');
    fs.writeFileSync(conf, 'cluster.local {\n    bind 127.0.0.1\n    frobnicate\n}\n');
    const port = await freePort();
    const proc = spawn(process.execPath, [launcher, 'serve', '--conf', conf, '--workers', '2', '--port', String(port)], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const result = await Promise.race([
      new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code))),
      sleep(8000).then(() => 'timeout' as const),
    ]);
    if (result === 'timeout') proc.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    expect(result, out).not.toBe('timeout');
    expect(result, out).not.toBe(0);
    expect(out).toContain('workers keep dying');
  }, 15000);

  it('(#9.16) 20 /metrics scrapes with --workers 2 add no process listener (no MaxListenersExceededWarning)', async () => {
    const { server, metricsPort } = await startWorkers();
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('coredns_build_info');
    }
    await sleep(200);
    expect(server.stderr.join('')).not.toMatch(/MaxListenersExceededWarning/);
  }, 30000);
});
