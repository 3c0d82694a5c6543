// Starts real etcd members (Debian etcd-server, /usr/bin/etcd) on loopback ports in a temp dir,
// and stops each by PID (a paused one too: SIGKILL ends a stopped process). One member, or a
// cluster of three.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort, which } from './server.js';
import { holdsWithin } from './wait.js';

/** Path of etcd; the tests that need it are declared with describeNeeding(['etcd', ...]). */
export const etcdBinary = which('etcd');

export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  proc?: ChildProcess;
  log: string[];
}

export interface EtcdCluster {
  members: EtcdMember[];
  /** Client URLs of every member. */
  endpoints: string[];
  dir: string;
  /** Kills one member (SIGKILL) and waits for it to exit. */
  kill(i: number): Promise<void>;
  /** Starts a killed member again on its data dir and waits until it serves. */
  restart(i: number): Promise<void>;
  /** Freezes one member (SIGSTOP): its sockets stay open and nothing answers, as a hung process. */
  pause(i: number): void;
  /** Thaws a paused member (SIGCONT). */
  resume(i: number): void;
  /** A client on every member. */
  client(): Etcd3;
  stop(): Promise<void>;
}

function launch(m: EtcdMember, initialCluster: string, state: 'new' | 'existing', extra: string[]): ChildProcess {
  const args = [
    '--name',
    m.name,
    '--data-dir',
    m.dataDir,
    '--listen-client-urls',
    m.clientUrl,
    '--advertise-client-urls',
    m.clientUrl,
    '--listen-peer-urls',
    m.peerUrl,
    '--initial-advertise-peer-urls',
    m.peerUrl,
    '--initial-cluster',
    initialCluster,
    '--initial-cluster-state',
    state,
    '--initial-cluster-token',
    'clusterdns-test',
    // Fast elections on loopback keep the failover tests short.
    '--heartbeat-interval',
    '50',
    '--election-timeout',
    '500',
    '--logger',
    'zap',
    '--log-level',
    'warn',
    ...extra,
  ];
  const proc = spawn(etcdBinary!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer): void => {
    m.log.push(b.toString());
    if (m.log.length > 200) m.log.shift();
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  return proc;
}

/** Client certificate files for an etcd that serves https and wants client certificates. */
export interface EtcdTls {
  ca: string;
  cert: string;
  key: string;
}

async function health(url: string, tls?: EtcdTls): Promise<boolean> {
  if (!tls) {
    const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
    return ((await r.json()) as { health?: string }).health === 'true';
  }
  return new Promise((resolve, reject) => {
    const req = https.get(`${url}/health`, { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key), timeout: 1000 }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve(body.includes('"health":"true"')));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

async function waitHealthy(urls: string[], timeoutMs: number, tls?: EtcdTls): Promise<void> {
  let last = '';
  const healthy = await holdsWithin(
    async () => {
      const ok = await Promise.all(
        urls.map(async (u) => {
          try {
            return await health(u, tls);
          } catch (err) {
            last = (err as Error).message;
            return false;
          }
        }),
      );
      return ok.every(Boolean);
    },
    timeoutMs,
    100,
  );
  if (!healthy) throw new Error(`etcd not healthy within ${timeoutMs} ms at ${urls.join(' ')}: ${last}`);
}

/**
 * Starts `size` members on loopback ports; resolves once every one reports healthy. With `tls`,
 * client URLs are https (pass etcd's --cert-file and friends in `extra`).
 */
export async function startEtcd(size = 1, extra: string[] = [], tls?: EtcdTls): Promise<EtcdCluster> {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-etcd-'));
  const members: EtcdMember[] = [];
  for (let i = 0; i < size; i++) {
    const c = await freePort();
    const p = await freePort();
    members.push({
      name: `m${i}`,
      clientUrl: `${tls ? 'https' : 'http'}://127.0.0.1:${c}`,
      peerUrl: `http://127.0.0.1:${p}`,
      dataDir: path.join(dir, `m${i}`),
      log: [],
    });
  }
  const initial = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  for (const m of members) m.proc = launch(m, initial, 'new', extra);
  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.clientUrl),
    dir,
    async kill(i) {
      const m = members[i]!;
      const proc = m.proc;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        process.kill(proc.pid!, 'SIGKILL');
      });
    },
    async restart(i) {
      const m = members[i]!;
      m.proc = launch(m, initial, 'existing', extra);
      await waitHealthy([m.clientUrl], 15000, tls);
    },
    pause(i) {
      const proc = members[i]!.proc;
      if (proc && proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid!, 'SIGSTOP');
    },
    resume(i) {
      const proc = members[i]!.proc;
      if (proc && proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid!, 'SIGCONT');
    },
    client() {
      return new Etcd3({ hosts: members.map((m) => m.clientUrl) });
    },
    async stop() {
      for (let i = 0; i < members.length; i++) await cluster.kill(i);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitHealthy(cluster.endpoints, 20000, tls);
  } catch (err) {
    const logs = members.map((m) => `${m.name}: ${m.log.join('').slice(-2000)}`).join('\n');
    await cluster.stop();
    throw new Error(`${(err as Error).message}\n${logs}`);
  }
  return cluster;
}

/**
 * A TCP proxy in front of one etcd member whose connections the test can cut (and refuse new
 * ones), then allow again; `onDownstream` sees how many bytes etcd sent through it so far, so a
 * test can act in the middle of a response stream (a watch catch-up, say).
 */
export class EtcdProxy {
  private readonly sockets = new Set<net.Socket>();
  private open = true;
  private readonly server: net.Server;
  /** Bytes from etcd to clients since the last reset. */
  downstream = 0;
  onDownstream: ((total: number) => void) | undefined;
  port = 0;

  constructor(private readonly targetPort: number) {
    this.server = net.createServer((c) => {
      if (!this.open) return void c.destroy();
      const u = net.connect(this.targetPort, '127.0.0.1');
      this.sockets.add(c).add(u);
      c.pipe(u);
      u.on('data', (b: Buffer) => {
        this.downstream += b.length;
        c.write(b);
        this.onDownstream?.(this.downstream);
      });
      const drop = (): void => {
        c.destroy();
        u.destroy();
        this.sockets.delete(c);
        this.sockets.delete(u);
      };
      c.on('error', drop).on('close', drop);
      u.on('error', drop).on('close', drop);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
    return `http://127.0.0.1:${this.port}`;
  }

  cut(): void {
    this.open = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.open = true;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }
}
