// One real server for the calling suite: started in beforeAll, stopped in afterAll. The protocol
// tests each needed the same dozen lines of set-up; they share these instead.
import { afterAll, beforeAll, expect } from 'vitest';
import { startServer, type RunningServer, type StartOptions } from './server.js';

export interface SuiteServer {
  /** Where to send queries; the same object throughout, its port filled in once the server is up. */
  readonly target: { host: string; port: number };
  /** The running server (throws when asked before beforeAll ran). */
  readonly server: RunningServer;
  /** Whether the server process is still running. */
  alive(): boolean;
}

export interface SuiteOptions extends StartOptions {
  /** Address the queries go to (default 127.0.0.1). */
  host?: string;
  /** afterAll also fails when the server died during the suite (it must survive what was sent). */
  mustSurvive?: boolean;
  /** Runs in afterAll before the server is stopped (e.g. to close the suite's connections). */
  beforeStop?: () => void;
}

export function serverForSuite(args: string[], opts: SuiteOptions = {}): SuiteServer {
  const { host = '127.0.0.1', mustSurvive = false, beforeStop, ...start } = opts;
  let running: RunningServer | undefined;
  const target = { host, port: 0 };
  const suite: SuiteServer = {
    target,
    get server(): RunningServer {
      if (!running) throw new Error('the suite server is not started yet (use it inside tests or hooks)');
      return running;
    },
    alive: () => running !== undefined && running.proc.exitCode === null && running.proc.signalCode === null,
  };
  beforeAll(async () => {
    running = await startServer(args, start);
    target.port = running.port;
  }, 20_000);
  afterAll(async () => {
    beforeStop?.();
    if (!running) return;
    const wasAlive = suite.alive();
    await running.stop();
    if (mustSurvive) expect(wasAlive, `server died: ${running.stderr.join('')}`).toBe(true);
  });
  return suite;
}
