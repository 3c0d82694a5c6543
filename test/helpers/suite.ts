// One real server for the calling suite: started in beforeAll, stopped in afterAll. The protocol
// tests each needed the same dozen lines of set-up; they share these instead.
import { afterAll, beforeAll, expect } from 'vitest';
import { TcpConn } from '../server/raw.js';
import { startServer, type RunningServer, type StartOptions } from './server.js';

export interface SuiteServer {
  /** Where to send queries; the same object throughout, its port filled in once the server is up. */
  readonly target: { host: string; port: number };
  /** The running server (throws when asked before beforeAll ran). */
  readonly server: RunningServer;
  /** Whether the server process is still running. */
  alive(): boolean;
  /** A TCP connection to the server, destroyed (if still open) before the server stops. */
  conn(timeoutMs?: number): Promise<TcpConn>;
}

export interface SuiteOptions extends StartOptions {
  /** Address the queries go to (default 127.0.0.1). */
  host?: string;
  /** afterAll also fails when the server died during the suite (it must survive what was sent). */
  mustSurvive?: boolean;
}

export function serverForSuite(args: string[], opts: SuiteOptions = {}): SuiteServer {
  const { host = '127.0.0.1', mustSurvive = false, ...start } = opts;
  let running: RunningServer | undefined;
  const target = { host, port: 0 };
  const open: TcpConn[] = [];
  const suite: SuiteServer = {
    target,
    get server(): RunningServer {
      if (!running) throw new Error('the suite server is not started yet (use it inside tests or hooks)');
      return running;
    },
    alive: () => running !== undefined && running.proc.exitCode === null && running.proc.signalCode === null,
    conn: async (timeoutMs?: number) => {
      const c = await TcpConn.open(target, timeoutMs);
      open.push(c);
      return c;
    },
  };
  beforeAll(async () => {
    running = await startServer(args, start);
    target.port = running.port;
  }, 20_000);
  afterAll(async () => {
    for (const c of open) c.destroy();
    if (!running) return;
    const wasAlive = suite.alive();
    await running.stop();
    if (mustSurvive) expect(wasAlive, `server died: ${running.stderr.join('')}`).toBe(true);
  });
  return suite;
}
