// The real side of the differential resolver test: a private mount + network namespace per
// resolv.conf variant, with the real clusterdns server listening on 127.0.0.1:53 inside it, and
// the real clients (glibc getent, a musl program, a Go program) run inside it with nsenter.
//
// Isolation: `unshare --mount --net --propagation private` gives the server (and, through
// nsenter, every client) its own mount table and its own network stack with only `lo`. The
// variant's resolv.conf, a localhost-only hosts file and a `hosts: files dns` nsswitch.conf are
// bind-mounted over /etc/resolv.conf, /etc/hosts and /etc/nsswitch.conf inside that mount
// namespace only: the machine's own files are never written, and nothing leaves loopback.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launcher, onLines, repoRoot, stopProcess, which } from '../helpers/server.js';
import { holdsWithin } from '../helpers/wait.js';

export const fixtures = path.join(repoRoot, 'test/fixtures/resolver');
export const corefile = path.join(fixtures, 'Corefile');
export const manifests = path.join(fixtures, 'manifests');
const programs = path.join(repoRoot, 'test/resolver/programs');

/**
 * Why the test cannot run here, or undefined when it can: every missing piece is named with the
 * Debian package that provides it.
 */
export function unavailable(): string | undefined {
  const missing: string[] = [];
  if (process.platform !== 'linux') return `not Linux (${process.platform}): needs Linux mount and network namespaces`;
  if (process.getuid?.() !== 0) missing.push('root (unshare --mount --net and mount --bind need root)');
  const tools: [string, string][] = [
    ['unshare', 'util-linux'],
    ['nsenter', 'util-linux'],
    ['mount', 'mount'],
    ['ip', 'iproute2'],
    ['getent', 'libc-bin'],
    ['musl-gcc', 'musl-tools'],
    ['go', 'golang-go'],
  ];
  for (const [tool, pkg] of tools) if (!which(tool)) missing.push(`${tool} (Debian package ${pkg})`);
  for (const f of ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf']) {
    if (!fs.existsSync(f)) missing.push(`${f} (a bind mount needs an existing target)`);
  }
  if (missing.length) return `missing: ${missing.join('; ')}`;
  try {
    execFileSync(
      'unshare',
      [
        '--mount',
        '--net',
        '--propagation',
        'private',
        '--',
        'sh',
        '-c',
        'ip link set lo up && ip addr add 192.0.2.53/32 dev lo && ip addr add 2001:db8::53/128 dev lo nodad && mount --bind /etc/hosts /etc/hosts',
      ],
      {
        stdio: 'pipe',
        timeout: 10000,
      },
    );
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return `cannot create a private mount + network namespace (unshare --mount --net, ip link/addr on lo with IPv4 and IPv6, mount --bind): ${(e.stderr?.toString() || e.message).trim().split('\n')[0]}`;
  }
  return undefined;
}

export interface Programs {
  dir: string;
  musl: string;
  go: string;
}

/**
 * Builds the musl and Go clients into a fresh temporary directory (no network). The build runs
 * in its own process group, killed as a whole if it outlives timeoutMs; the directory is removed
 * when the build fails.
 */
export function buildPrograms(timeoutMs = 120000): Promise<Programs> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-resolver-diff-'));
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [path.join(programs, 'build.sh'), dir], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: dir },
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    const fail = (why: string): void => {
      fs.rmSync(dir, { recursive: true, force: true });
      reject(new Error(`building the musl and Go clients (test/resolver/programs/build.sh) failed: ${why}\n${output}`));
    };
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(err.message);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) fail(`no result within ${timeoutMs} ms`);
      else if (code !== 0) fail(`exit ${code ?? signal}`);
      else resolve({ dir, musl: path.join(dir, 'gai-musl'), go: path.join(dir, 'lookup-go') });
    });
  });
}

/** One query as the server logged it (`serve --log-queries`). */
export interface LoggedQuery {
  name: string;
  type: string;
  rcode: string;
  proto: string;
  port: number;
}

export interface ClientRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The queries the server received while the client ran, in the order it logged them. */
  queries: LoggedQuery[];
}

/** A namespace with the server on 127.0.0.1:53 and one resolv.conf bind-mounted. */
export class Namespace {
  private logs: string[] = [];
  private lastLogAt = Date.now();
  private stderr = '';

  private constructor(private readonly proc: ChildProcess) {}

  get pid(): number {
    return this.proc.pid!;
  }

  /**
   * `unshare` runs `sh`, which brings lo up, bind-mounts the files and execs the server: the
   * spawned PID is the server's, and nsenter -t PID joins its namespaces.
   */
  static async start(resolvConf: string, timeoutMs = 20000): Promise<Namespace> {
    const script = [
      'set -e',
      'ip link set lo up',
      // getent's getaddrinfo passes AI_ADDRCONFIG: glibc asks DNS for AF_INET only when an IPv4
      // address other than 127.0.0.1 is configured (with only lo, `getent ahostsv4` sends
      // nothing and fails), and narrows AF_UNSPEC to one family when only one is configured.
      // One address of each family, as a pod with an IPv4 address and IPv6 link-local has,
      // keeps AF_UNSPEC = A + AAAA and AF_INET = A. Documentation prefixes, on lo: no route out.
      'ip addr add 192.0.2.53/32 dev lo',
      'ip addr add 2001:db8::53/128 dev lo nodad',
      'mount --bind "$1" /etc/resolv.conf',
      'mount --bind "$2" /etc/hosts',
      'mount --bind "$3" /etc/nsswitch.conf',
      'shift 3',
      'exec "$@"',
    ].join('\n');
    const proc = spawn(
      'unshare',
      [
        '--mount',
        '--net',
        '--propagation',
        'private',
        '--',
        'sh',
        '-c',
        script,
        'sh',
        resolvConf,
        path.join(fixtures, 'hosts'),
        path.join(fixtures, 'nsswitch.conf'),
        process.execPath,
        launcher,
        'serve',
        '--conf',
        corefile,
        '--manifests',
        manifests,
        '--port',
        '53',
        '--log-queries',
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } },
    );
    const ns = new Namespace(proc);
    let ready: (() => void) | undefined;
    onLines(proc.stdout!, (line) => {
      ns.logs.push(line);
      ns.lastLogAt = Date.now();
      if (line.includes('"clusterdns ready"')) ready?.();
    });
    proc.stderr!.on('data', (chunk: Buffer) => (ns.stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        void ns.stop();
        reject(new Error(`server in the namespace not ready within ${timeoutMs} ms\n${ns.logs.join('\n')}\n${ns.stderr}`));
      }, timeoutMs);
      ready = () => {
        clearTimeout(timer);
        proc.removeAllListeners('exit');
        resolve();
      };
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server in the namespace exited (${code ?? signal}) before it was ready\n${ns.logs.join('\n')}\n${ns.stderr}`));
      });
    });
    return ns;
  }

  /**
   * Waits until the server has logged nothing for quietMs, counted from `since` at the earliest
   * (at most maxMs). After a client exits its query lines are already in the pipe (the server
   * logs synchronously before replying) but may not be read yet: counting from the exit gives
   * this process's event loop the time to read them, where counting from the last line read
   * (an earlier client's) could return at once and hand them to the next client.
   */
  private async settle(since = 0, quietMs = 150, maxMs = 3000): Promise<void> {
    await holdsWithin(() => Date.now() - Math.max(this.lastLogAt, since) >= quietMs, maxMs, 25);
  }

  /**
   * Runs a client inside the namespace with a clean environment (no LOCALDOMAIN, RES_OPTIONS,
   * HOSTALIASES; GODEBUG=netdns=go), and returns what it printed and what the server received.
   * One client at a time per namespace, so every logged query belongs to it.
   */
  async run(argv: string[], timeoutMs = 15000): Promise<ClientRun> {
    await this.settle();
    const from = this.logs.length;
    const started = Date.now();
    const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', GODEBUG: 'netdns=go', LANG: 'C' };
    const child = spawn('nsenter', ['-t', String(this.pid), '-m', '-n', '--', ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('exit', (c, s) => {
        clearTimeout(timer);
        resolve({ code: c, signal: s });
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        stderr += String(err);
        resolve({ code: null, signal: null });
      });
    });
    const ms = Date.now() - started;
    // Every query was answered (and logged, synchronously, before its reply was sent) before
    // the client exited; wait for the pipe to deliver the lines.
    await this.settle(Date.now());
    const queries: LoggedQuery[] = [];
    for (const line of this.logs.slice(from)) {
      let rec: { msg?: string; query?: { name?: string; type?: string; rcode?: string; proto?: string; port?: number; malformed?: string } };
      try {
        rec = JSON.parse(line);
      } catch {
        continue;
      }
      if (rec.msg !== 'query' || !rec.query) continue;
      const q = rec.query;
      queries.push({ name: q.name ?? `<malformed: ${q.malformed}>`, type: q.type ?? '?', rcode: q.rcode ?? '?', proto: q.proto ?? '?', port: q.port ?? 0 });
    }
    return { code, signal, stdout, stderr, ms, queries };
  }

  /** Stops the server (SIGTERM, then SIGKILL after 5 s); the namespace goes with it. */
  async stop(): Promise<void> {
    await stopProcess(this.proc);
  }
}
