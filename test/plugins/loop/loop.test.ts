// loop: a Corefile whose forward points at the server itself makes the server exit with status 1
// and CoreDNS's message naming the loop; a real upstream does not.
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISARM_AFTER_MS, LoopPlugin, type LoopEvent } from '../../../src/plugins/loop/plugin.js';
import type { DnsRequest, DnsResponse } from '../../../src/chain/plugin.js';
import { buildApp } from '../../../src/app.js';
import { digQuery } from '../../helpers/clients.js';
import { freePort, repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';
import { holdsWithin, quietFor } from '../../helpers/wait.js';

const dig = which('dig');
const fixtures = path.join(repoRoot, 'test/fixtures/loop');

function exited(proc: ChildProcess, ms: number): Promise<number | null> {
  if (proc.exitCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server still running after ${ms} ms`)), ms);
    proc.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

describe('loop through the real server', () => {
  it('forward to itself: exits 1 naming the loop', async () => {
    const port = await freePort();
    let output: string;
    let code: number | null;
    try {
      const server = await startServer(['--conf', path.join(fixtures, 'Corefile')], { port, env: { LOOP_PORT: String(port) } });
      try {
        code = await exited(server.proc, 15000);
      } finally {
        await server.stop();
      }
      output = server.logs.join('\n') + server.stderr.join('');
    } catch (err) {
      // The loop may be seen before the server logs that it is ready.
      output = (err as Error).message;
      code = /exited \((\d+)\)/.exec(output) ? Number(/exited \((\d+)\)/.exec(output)![1]) : null;
    }
    expect(code).toBe(1);
    expect(output).toMatch(
      /Loop \(127\.0\.0\.1:\d+ -> 127\.0\.0\.1:\d+\) detected for zone "\.", see https:\/\/coredns\.io\/plugins\/loop#troubleshooting\. Query: "HINFO \d+\.\d+\."/,
    );
  }, 30000);
});

describeNeeding(['dig'], 'loop with a real upstream', () => {
  let upstream: RunningServer;
  let server: RunningServer;
  beforeAll(async () => {
    upstream = await startServer(['--conf', path.join(repoRoot, 'test/fixtures/rewrite/Corefile'), '--log-queries']);
    server = await startServer(['--conf', path.join(fixtures, 'Corefile.noloop')], { env: { UPSTREAM_PORT: String(upstream.port) } });
  });
  afterAll(async () => {
    await server?.stop();
    await upstream?.stop();
  });

  it('keeps serving after the probe, which it forwarded once', async () => {
    // The probe goes out as the server starts; wait (at most 5 s) until the upstream saw it.
    const probes = (): string[] => upstream.logs.filter((l) => l.includes('"HINFO"'));
    await holdsWithin(() => probes().length > 0, 5000, 50);
    expect(probes()).toHaveLength(1);
    // Still alive once the plugin has disarmed itself, DISARM_AFTER_MS after the answered probe.
    await quietFor(DISARM_AFTER_MS + 200, 'the loop plugin to disarm itself (the server must stay up)');
    expect(server.proc.exitCode).toBeNull();
    const obs = await digQuery(dig!, server.port, 'www.exact.test', 'A', false);
    expect(obs.answer).toEqual(['www.exact.test. 300 IN A 192.0.2.80']);
  }, 20000);
});

describe('loop in process', () => {
  const req = (qname: string, qtype = 'HINFO'): DnsRequest => ({
    id: 1,
    name: qname,
    qname,
    qtype,
    qclass: 'IN',
    opcode: 'QUERY',
    rd: true,
    protocol: 'udp',
    client: { address: '127.0.0.1', port: 40000 },
    local: { address: '127.0.0.1', port: 53 },
  });
  const ok = (): DnsResponse => ({ rcode: 0, aa: false, answer: [], authority: [], additional: [] });

  it('counts only its own probe and fires on the third sighting', () => {
    const events: LoopEvent[] = [];
    const p = new LoopPlugin(
      'example.org.',
      () => new Promise(() => undefined),
      (e) => events.push(e),
    );
    expect(p.qname).toMatch(/^\d+\.\d+\.example\.org\.$/);
    p.serve(req('other.example.org.'), ok);
    p.serve(req(p.qname, 'A'), ok);
    p.serve(req(p.qname), ok);
    p.serve(req(p.qname), ok);
    expect(events).toEqual([]);
    p.serve(req(p.qname), ok);
    expect(events.length).toBe(1);
    expect(events[0]!.message).toBe(
      `Loop (127.0.0.1:40000 -> 127.0.0.1:53) detected for zone "example.org.", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO ${p.qname}"`,
    );
    p.close();
  });

  it('takes no arguments', async () => {
    await expect(buildApp({ corefileText: '. {\n  loop now\n}\n' })).rejects.toThrow(/Corefile:2: loop takes no arguments/);
  });
});
