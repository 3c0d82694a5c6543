// Starts the real clusterdns process on a loopback port for tests, and stops it by PID.
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const launcher = path.join(repoRoot, 'bin/clusterdns.js');

/** A port free on 127.0.0.1 for both UDP and TCP at the time of the call. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const sock = createSocket('udp4');
      sock.once('error', () => resolve(false));
      sock.bind(port, '127.0.0.1', () => sock.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no free port on 127.0.0.1 after 20 attempts');
}

/**
 * Stops a child process by its PID: SIGTERM, then SIGKILL if it has not exited after
 * `killAfterMs`; resolves once it exited (at once when it already had).
 */
export async function stopProcess(proc: ChildProcess, killAfterMs = 5000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Calls `onLine` with each complete line a stream emits (a child's stdout, say). */
export function onLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffered = '';
  stream.on('data', (chunk: Buffer | string) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      onLine(line);
    }
  });
}

export interface RunningServer {
  port: number;
  proc: ChildProcess;
  /** Every stdout line the server printed so far (pino JSON). */
  logs: string[];
  stderr: string[];
  stop(): Promise<void>;
}

export interface StartOptions {
  port?: number;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** A command the server runs under, e.g. `['prlimit', '--nofile=256:256', '--']`. */
  wrapper?: string[];
  /**
   * 'listening': resolve once it serves, ready or not (it logs "clusterdns listening; not ready
   * yet" while a plugin, such as etcd before its first read, is not ready). Default: ready.
   */
  until?: 'ready' | 'listening';
}

/**
 * Spawns `clusterdns serve` with the given arguments plus `--port`, and resolves once it logs
 * that it is ready. Rejects with the server's output when it exits first or takes too long.
 */
export async function startServer(args: string[], opts: StartOptions = {}): Promise<RunningServer> {
  const port = opts.port ?? (await freePort());
  const argv = [process.execPath, launcher, 'serve', ...args, '--port', String(port)];
  const [command, ...rest] = [...(opts.wrapper ?? []), ...argv] as [string, ...string[]];
  // A cache directory of its own (manifest images): a server never starts from an image another
  // test's server left, unless the test passes a directory itself.
  const cacheHome = opts.env?.XDG_CACHE_HOME ?? mkdtempSync(path.join(process.env.XDG_CACHE_HOME ?? tmpdir(), 'server-'));
  const proc = spawn(command, rest, {
    cwd: repoRoot,
    env: { ...process.env, XDG_CACHE_HOME: cacheHome, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const stderr: string[] = [];
  const stop = async (): Promise<void> => {
    await stopProcess(proc);
    if (cacheHome !== opts.env?.XDG_CACHE_HOME) rmSync(cacheHome, { recursive: true, force: true });
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`server not ready within ${opts.timeoutMs ?? 15000} ms\n${logs.join('\n')}\n${stderr.join('')}`));
    }, opts.timeoutMs ?? 15000);
    onLines(proc.stdout!, (line) => {
      logs.push(line);
      if (line.includes('"clusterdns ready"') || (opts.until === 'listening' && line.includes('"msg":"clusterdns listening; not ready yet'))) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before it was ready\n${logs.join('\n')}\n${stderr.join('')}`));
    });
  });
  return { port, proc, logs, stderr, stop };
}

/** Path of a Debian tool, or undefined when it is not installed (tests then skip visibly). */
export function which(tool: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}
