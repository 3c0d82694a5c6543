// Hostile operations (issues #9.9, #9.10, #9.11, #9.16): shutdown with workers, workers that keep
// dying, idle HTTP connections, repeated metrics scrapes. Every test runs the real server on
// loopback, bounded in count and time, and stops what it starts by PID.
import { describe, it, expect, afterEach } from 'vitest';
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { holdsWithin, quietFor, settleWithin, waitForLines, waitUntil } from '../helpers/wait.js';
import net from 'node:net';
import { tcpQuery } from '../fixtures/ops/client.js';

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
  await waitForLines(server.logs, '"clusterdns ready"', 'both workers ready', { count: 2, timeoutMs: 15000, everyMs: 100 });
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
    const code = await settleWithin(exited, 5000);
    const took = Date.now() - t0;
    expect(code).toBe(0);
    expect(took).toBeLessThan(1000);
    expect(kids.filter(alive)).toEqual([]);
  }, 20000);

  for (const lameduck of [1, 11]) {
    it(`(#9.9) with lameduck ${lameduck}s, SIGTERM keeps /health up for the lameduck, then every process is gone within 1 s${lameduck > 10 ? " (a lameduck past the primary's 10 s kill timer is not cut short)" : ''}`, async () => {
      const health = await freePort();
      const server = await startServer(['--manifests', 'examples/manifests', '--workers', '2', '--conf', 'test/fixtures/ops/workers-lameduck.Corefile'], {
        env: { HEALTH_PORT: String(health), LAMEDUCK: `${lameduck}s` },
      });
      running.push(server);
      await waitForLines(server.logs, '"clusterdns ready"', 'both workers ready', { count: 2, timeoutMs: 15000, everyMs: 100 });
      const kids = children(server.proc.pid!);
      expect(kids).toHaveLength(2);
      const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
      const t0 = Date.now();
      server.proc.kill('SIGTERM');
      // Both workers have begun their shutdown (the lameduck) before /health is asked.
      await waitUntil('both workers shutting down', () => server.logs.filter((l) => l.includes('"shutting down"')).length >= 2, 3000, 20);
      expect((await fetch(`http://127.0.0.1:${health}/health`, { signal: AbortSignal.timeout(2000) })).status).toBe(200);
      const code = await settleWithin(exited, lameduck * 1000 + 5000);
      const took = Date.now() - t0;
      expect(code).toBe(0);
      expect(took).toBeGreaterThanOrEqual(lameduck * 1000);
      expect(took).toBeLessThan(lameduck * 1000 + 1000);
      expect(kids.filter(alive)).toEqual([]);
      expect(server.logs.join('\n')).not.toContain('killing it');
    }, 30000);
  }

  it('(#9.10) workers that keep dying make the primary exit non-zero, so a supervisor restarts it', async () => {
    // Workers that served and then keep dying (killed here, as the OOM killer would): past 5
    // restarts in a minute the primary stops and exits non-zero. (A worker that cannot start at
    // all ends the start at once: workers-start.test.ts.)
    const server = await startServer(
      ['--conf', path.join(repoRoot, 'test/fixtures/fuzz/Corefile'), '--manifests', path.join(repoRoot, 'test/fixtures/protocol/manifests'), '--workers', '2'],
      { timeoutMs: 30_000 },
    );
    const primary = server.proc;
    const exited = new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)));
    let gone = false;
    void exited.then(() => (gone = true));
    try {
      // Every 300 ms, whatever workers run are killed, until the primary gives up (20 s at most).
      await holdsWithin(
        () => {
          if (gone) return true;
          const children = fs.readFileSync(`/proc/${primary.pid}/task/${primary.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
          for (const pid of children) {
            try {
              process.kill(Number(pid), 'SIGKILL');
            } catch {
              // already gone
            }
          }
          return false;
        },
        20_000,
        300,
      );
      expect(gone, server.logs.slice(-10).join('\n')).toBe(true);
      expect(await exited).not.toBe(0);
      expect(server.logs.join('\n') + server.stderr.join('')).toContain('workers keep dying');
    } finally {
      await server.stop();
    }
  }, 40_000);

  it('(#9.16) the worker side of 20 aggregated scrapes keeps one process message listener', async () => {
    const child = fork(path.join(repoRoot, 'test/fixtures/ops/metrics-listeners.mjs'), [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const counts = await new Promise<number[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no answer in 8 s: ${stderr}`));
      }, 8000);
      child.on('message', (msg: { type?: string; id?: number; counts?: number[] }) => {
        if (msg.type === 'clusterdns:metrics') child.send({ type: 'clusterdns:metrics-reply', id: msg.id, text: 'x 1\n', contentType: 'text/plain' });
        if (msg.type === 'counts') {
          clearTimeout(timer);
          resolve(msg.counts!);
        }
      });
    });
    expect(new Set(counts).size, `listener counts: ${counts.join(' ')}`).toBe(1);
    expect(stderr).not.toMatch(/MaxListenersExceededWarning/);
  }, 15000);

  it('(#9.16) 20 /metrics scrapes with --workers 2 add no process listener (no MaxListenersExceededWarning)', async () => {
    const { server, metricsPort } = await startWorkers();
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('coredns_build_info');
    }
    await quietFor(200, 'a warning the scrapes set off to reach stderr');
    expect(server.stderr.join('')).not.toMatch(/MaxListenersExceededWarning/);
  }, 30000);
});

/**
 * Spawns the server under a file-descriptor limit (prlimit sets soft and hard, so Node cannot
 * raise it), as a machine with a small `ulimit -n` runs it. Resolves once it is ready.
 */
async function startLimited(nofile: number, args: string[], env: NodeJS.ProcessEnv & { DNS_PORT: string }): Promise<RunningServer> {
  const server = await startServer(args, { port: Number(env.DNS_PORT), env, wrapper: ['prlimit', `--nofile=${nofile}:${nofile}`, '--'] });
  running.push(server);
  return server;
}

describe('HTTP endpoints under idle connections (#9.11)', () => {
  it('400 idle connections to /health under a 256 file limit: at most the cap stay open, DNS over TCP and the probes still answer, idle ones close', async () => {
    const [dns, health, ready, metrics] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const env = { DNS_PORT: String(dns), HEALTH_PORT: String(health), READY_PORT: String(ready), METRICS_PORT: String(metrics) };
    const cap = 64;
    await startLimited(256, ['--conf', 'test/fixtures/ops/Corefile', '--http-max-connections', String(cap), '--http-idle-timeout', '3s'], env);
    const idle: net.Socket[] = [];
    const closed = new Set<net.Socket>();
    try {
      // 400 connections that send nothing, opened 50 at a time; more than the process has fds.
      for (let batch = 0; batch < 8; batch++) {
        await Promise.all(
          Array.from(
            { length: 50 },
            () =>
              new Promise<void>((resolve) => {
                const s = net.connect(health, '127.0.0.1');
                idle.push(s);
                s.on('error', () => undefined);
                s.once('close', () => closed.add(s));
                s.once('connect', () => resolve());
                s.once('close', () => resolve());
                setTimeout(resolve, 2000).unref();
              }),
          ),
        );
      }
      // The cap closes the connections past it; wait (bounded) for the closes to arrive.
      await waitUntil(`at most ${cap + 1} idle connections open`, () => idle.length - closed.size <= cap + 1, 3000, 20).catch(() => undefined);
      const stillOpen = idle.length - closed.size;
      expect(stillOpen).toBeLessThanOrEqual(cap + 1);
      // Everything else still works: DNS over TCP, and each probe gets a connection.
      expect((await tcpQuery(dns, 'kubernetes.default.svc.cluster.local', 'A')).rcode).toBe('NOERROR');
      const h = await fetch(`http://127.0.0.1:${health}/health`, { signal: AbortSignal.timeout(3000) });
      expect(h.status).toBe(200);
      const r = await fetch(`http://127.0.0.1:${ready}/ready`, { signal: AbortSignal.timeout(3000) });
      expect(r.status).toBe(200);
      // A client sending its headers a line at a time is cut off at the idle timeout with 408.
      const slow = net.connect(health, '127.0.0.1');
      idle.push(slow);
      let answer = '';
      slow.on('data', (d: Buffer) => (answer += d.toString()));
      slow.on('error', () => undefined);
      slow.once('close', () => closed.add(slow));
      slow.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      const drip = setInterval(() => slow.writable && slow.write('X-Slow: 1\r\n'), 300);
      // The idle connections and the slow one are closed within the idle timeout (3 s) plus
      // Node's 1 s check.
      await holdsWithin(() => closed.size === idle.length, 6000, 100);
      clearInterval(drip);
      expect(idle.length - closed.size).toBe(0);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      for (const s of idle) s.destroy();
    }
  }, 25000);
});
