// log: CoreDNS's common log format from the real server, and the name, class and format options.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../../src/app.js';
import { repoRoot } from '../../helpers/server.js';
import { logMessages, startOps, tcpQuery, udpQuery, type OpsServer } from '../../fixtures/ops/client.js';
import { holdsWithin } from '../../helpers/wait.js';

const DURATION = String.raw`(\d+(?:\.\d+)?)s`;
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('log through the real server', () => {
  let srv: OpsServer;
  beforeAll(async () => {
    srv = await startOps();
  }, 30000);
  afterAll(async () => srv?.stop());

  const lines = async (n: number, match: Record<string, unknown> = { plugin: 'log' }): Promise<string[]> => {
    // Up to a second; fewer lines than asked for are returned for the test's own check.
    await holdsWithin(() => logMessages(srv.logs, match).length >= n, 1000, 20);
    return logMessages(srv.logs, match);
  };

  it('writes one common-log-format line per query, answer-cache hits included', async () => {
    const before = (await lines(0)).length;
    const a = await udpQuery(srv.port, 'Kubernetes.Default.svc.cluster.local', 'A');
    const b = await udpQuery(srv.port, 'Kubernetes.Default.svc.cluster.local', 'A');
    const c = await udpQuery(srv.port, 'nope.default.svc.cluster.local', 'AAAA', { do: true, udpSize: 4096 });
    const d = await tcpQuery(srv.port, '_https._tcp.kubernetes.default.svc.cluster.local', 'SRV');
    const got = (await lines(before + 4)).slice(before);
    expect(got).toHaveLength(4);
    const expected = [
      `127.0.0.1:${a.clientPort} - ${a.id} "A IN kubernetes.default.svc.cluster.local. udp ${a.query.length} false 512" NOERROR qr,aa,rd ${a.reply.length} `,
      `127.0.0.1:${b.clientPort} - ${b.id} "A IN kubernetes.default.svc.cluster.local. udp ${b.query.length} false 512" NOERROR qr,aa,rd ${b.reply.length} `,
      `127.0.0.1:${c.clientPort} - ${c.id} "AAAA IN nope.default.svc.cluster.local. udp ${c.query.length} true 4096" NXDOMAIN qr,aa,rd ${c.reply.length} `,
      `127.0.0.1:${d.clientPort} - ${d.id} "SRV IN _https._tcp.kubernetes.default.svc.cluster.local. tcp ${d.query.length} false 65535" NOERROR qr,aa,rd ${d.reply.length} `,
    ];
    for (let i = 0; i < 4; i++) expect(got[i]).toMatch(new RegExp(`^${esc(expected[i]!)}${DURATION}$`));
  });

  it('logs at info level through pino, bound to the block', async () => {
    const raw = srv.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((o) => o.plugin === 'log');
    expect(raw).toMatchObject({ level: 30, block: expect.stringContaining('cluster.local.') });
  });

  it('a custom format with a name filter and class error (second block)', async () => {
    const x = await udpQuery(srv.port, 'a.sub.example.test', 'TXT');
    await udpQuery(srv.port, 'other.example.test', 'TXT'); // outside the log names: not logged
    const got = await lines(1, { plugin: 'log', block: 'example.test.' });
    expect(got).toEqual([`udp a.sub.example.test. TXT ${x.id} SERVFAIL`]);
  });

  it('does not log queries outside every zone (they never reach a chain)', async () => {
    const before = logMessages(srv.logs, { plugin: 'log' }).length;
    await udpQuery(srv.port, 'example.com', 'A');
    // One server logs in order: once a later logged query shows up, the first one would have too.
    await udpQuery(srv.port, 'kubernetes.default.svc.cluster.local', 'A');
    const got = await lines(before + 1);
    expect(got.slice(before).some((l) => l.includes('kubernetes.default.svc.cluster.local.'))).toBe(true);
    expect(logMessages(srv.logs, { plugin: 'log' }).some((l) => l.includes('example.com.'))).toBe(false);
  });
});

/** An app in process whose logs land in an array. */
async function appWithLog(
  logLines: string,
): Promise<{ query: (name: string, type: string) => Promise<unknown>; messages: () => string[]; close: () => Promise<void> }> {
  const out: string[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      out.push(chunk.toString());
      cb();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const manifests = path.join(repoRoot, 'examples/manifests');
  const app = await buildApp({ corefileText: `cluster.local {\n  ${logLines}\n  kubernetes {\n    manifests ${manifests}\n  }\n}\n`, logger });
  return {
    query: (name, type) => app.query(name, type, { protocol: 'udp' }),
    messages: () =>
      out
        .map((l) => JSON.parse(l) as { plugin?: string; msg: string })
        .filter((o) => o.plugin === 'log')
        .map((o) => o.msg),
    close: () => app.close(),
  };
}

describe('log options', () => {
  it('class denial logs NXDOMAIN and NODATA only', async () => {
    const app = await appWithLog('log . "{name} {type} {rcode}" {\n    class denial\n  }');
    await app.query('kubernetes.default.svc.cluster.local', 'A');
    await app.query('nope.default.svc.cluster.local', 'A');
    await app.query('kubernetes.default.svc.cluster.local', 'MX');
    expect(app.messages()).toEqual(['nope.default.svc.cluster.local. A NXDOMAIN', 'kubernetes.default.svc.cluster.local. MX NOERROR']);
    await app.close();
  });

  it('classes add up; success and denial leave errors out', async () => {
    const app = await appWithLog('log . "{name} {rcode}" {\n    class success\n    class denial\n  }');
    await app.query('kubernetes.default.svc.cluster.local', 'A');
    await app.query('nope.default.svc.cluster.local', 'A');
    await app.query('nothing.cluster.local', 'A'); // NXDOMAIN
    expect(app.messages()).toEqual([
      'kubernetes.default.svc.cluster.local. NOERROR',
      'nope.default.svc.cluster.local. NXDOMAIN',
      'nothing.cluster.local. NXDOMAIN',
    ]);
    await app.close();
  });

  it('NAMES restricts logging to names at or below them', async () => {
    const app = await appWithLog('log default.svc.cluster.local "{name}"');
    await app.query('kubernetes.default.svc.cluster.local', 'A');
    await app.query('nginx.apps.svc.cluster.local', 'A');
    expect(app.messages()).toEqual(['kubernetes.default.svc.cluster.local.']);
    await app.close();
  });

  it('{combined} adds the opcode; unknown placeholders stay as written; metadata is "-"', async () => {
    const app = await appWithLog('log . {combined}');
    await app.query('kubernetes.default.svc.cluster.local', 'A');
    expect(app.messages()[0]).toMatch(
      /^127\.0\.0\.1:5353 - 4242 "A IN kubernetes\.default\.svc\.cluster\.local\. udp \d+ false 512" NOERROR qr,aa,rd \d+ [\d.]+s "0"$/,
    );
    await app.close();
    const other = await appWithLog('log . "{nope} {/kubernetes/pod} {>rflags} {local}"');
    await other.query('kubernetes.default.svc.cluster.local', 'A');
    expect(other.messages()).toEqual(['{nope} - qr,aa,rd 127.0.0.1']);
    await other.close();
  });

  it('rejects unknown classes and options', async () => {
    await expect(appWithLog('log {\n    class sometimes\n  }')).rejects.toThrow(
      /Corefile:3: log class: class "sometimes" is not one of success, denial, error or all/,
    );
    await expect(appWithLog('log {\n    format json\n  }')).rejects.toThrow(/Corefile:3: unknown log option "format"/);
  });
});
