// `serve --workers N` and a permanent start error: with the port taken, the
// primary forked N workers that each printed the same error and were restarted until the crash
// loop guard gave up. Now the first worker starts alone; its failure stops the start with one
// message, and no other worker is forked. Every line a worker logs names the worker.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, launcher, onLines, repoRoot, startServer, stopProcess } from '../helpers/server.js';
import { buildQuery, parseHeader, Rcode, T, udpQuery } from '../server/raw.js';
import { waitForLines } from '../helpers/wait.js';

let dir: string;
let conf: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-workers-start-'));
  writeFileSync(path.join(dir, 'w.zone'), '$ORIGIN w.test.\n$TTL 60\n@ IN SOA ns1 host 1 2h 30m 2w 300\n@ IN NS ns1\nns1 IN A 10.0.0.1\n');
  conf = path.join(dir, 'Corefile');
  writeFileSync(conf, `w.test {\n    bind 127.0.0.1\n    file ${path.join(dir, 'w.zone')}\n}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Holds 127.0.0.1:port over UDP and TCP, as another DNS server would. */
async function holdPort(port: number): Promise<{ udp: UdpSocket; tcp: Server }> {
  const udp = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, '127.0.0.1', () => resolve());
  });
  const tcp = createServer();
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, '127.0.0.1', () => resolve());
  });
  return { udp, tcp };
}

describe('serve --workers with a permanent start error (#21.4)', () => {
  it('port taken: one error line naming the port and the fix, exit non-zero, no worker restarted', async () => {
    const port = await freePort();
    const held = await holdPort(port);
    try {
      const proc = spawn(process.execPath, [launcher, 'serve', '--conf', conf, '--port', String(port), '--workers', '4'], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const stdout: string[] = [];
      let stderr = '';
      onLines(proc.stdout, (l) => stdout.push(l));
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const started = Date.now();
      const exit = await new Promise<number | string | null>((resolve) => {
        // Before the fix the crash-loop guard gave up after 6 starts, ~10 s on this machine.
        const timer = setTimeout(() => void stopProcess(proc).then(() => resolve('timeout')), 15_000);
        proc.once('exit', (code, signal) => {
          clearTimeout(timer);
          resolve(code ?? signal);
        });
      });
      const errorLines = stderr.split('\n').filter((l) => l.trim() !== '');
      expect(errorLines, stderr).toHaveLength(1);
      expect(errorLines[0]).toContain(`127.0.0.1:${port}`);
      expect(errorLines[0]).toMatch(/already in use.*(--port|Corefile)/);
      expect(exit).not.toBe(0);
      expect(exit).not.toBe('timeout');
      expect(
        stdout.filter((l) => l.includes('worker died')),
        stdout.join('\n'),
      ).toEqual([]);
      expect(stdout.filter((l) => l.includes('"zone loaded"'))).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      held.udp.close();
      held.tcp.close();
    }
  }, 25_000);

  it('every line a worker logs carries its id; all workers serve', async () => {
    const s = await startServer(['--conf', conf, '--workers', '2'], { timeoutMs: 15_000 });
    try {
      await waitForLines(s.logs, '"all workers ready"', 'all workers ready', { timeoutMs: 15_000, everyMs: 50 });
      const r = parseHeader(await udpQuery(buildQuery({ name: 'ns1.w.test', type: T.A }), { port: s.port }));
      expect([r.rcode, r.ancount]).toEqual([Rcode.NOERROR, 1]);
      const workerLines = s.logs.filter((l) => /"msg":"(zone loaded|listening on UDP and TCP|listening on TCP for [^"]+|clusterdns ready)"/.test(l));
      expect(workerLines).toHaveLength(6);
      const ids = workerLines.map((l) => (JSON.parse(l) as { worker?: unknown }).worker);
      expect(
        ids.every((id) => typeof id === 'number'),
        workerLines.join('\n'),
      ).toBe(true);
      expect(new Set(ids).size).toBe(2);
    } finally {
      await s.stop();
    }
  }, 25_000);
});
