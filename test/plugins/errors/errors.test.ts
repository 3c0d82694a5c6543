// errors: plugin failures logged in CoreDNS's words and answered SERVFAIL, consolidation.
import { describe, it, expect, onTestFinished, vi } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import dnsPacket from 'dns-packet';
import { buildApp } from '../../../src/app.js';
import { Chain, Router } from '../../../src/chain/chain.js';
import type { Plugin } from '../../../src/chain/plugin.js';
import { QueryHandler } from '../../../src/server/handler.js';
import { ErrorsPlugin } from '../../../src/plugins/errors/plugin.js';
import { decodeReply } from '../../helpers/decode.js';
import { startOps } from '../../fixtures/ops/client.js';

function capture(): { logger: pino.Logger; lines: () => { level: number; plugin?: string; msg: string }[] } {
  const out: string[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      out.push(chunk.toString());
      cb();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  return { logger, lines: () => out.map((l) => JSON.parse(l) as { level: number; plugin?: string; msg: string }) };
}

/** A backend that fails: synchronously for names starting with "sync", else asynchronously. */
const failing: Plugin = {
  name: 'failing',
  serve: (req) => {
    if (req.qname.startsWith('sync')) throw new Error('plugin/failing: disk on fire');
    return Promise.reject(new Error('plugin/failing: read udp 10.0.0.1:53: i/o timeout'));
  },
};

function handlerWith(errors: Plugin | undefined, logger: pino.Logger): QueryHandler {
  const chain = new Chain(['example.test.'], errors ? [errors, failing] : [failing]);
  return new QueryHandler(new Router([{ zone: 'example.test.', chain }]), logger);
}

async function ask(h: QueryHandler, name: string, type = 'A'): Promise<string> {
  const msg = dnsPacket.encode({ id: 7, type: 'query', questions: [{ name, type: type as 'A', class: 'IN' }] });
  const client = { address: '127.0.0.1', port: 5353 };
  const reply = await h.handle(msg, 'udp', client, client);
  return decodeReply(reply!).rcode;
}

describe('errors', () => {
  it('logs the failure as CoreDNS does (RCODE NAME TYPE: ERROR) and answers SERVFAIL itself', async () => {
    const { logger, lines } = capture();
    const h = handlerWith(new ErrorsPlugin([], logger.child({ plugin: 'errors' })), logger);
    expect(await ask(h, 'sync.example.test', 'AAAA')).toBe('SERVFAIL');
    expect(await ask(h, 'Async.Example.Test', 'UNKNOWN_65280')).toBe('SERVFAIL');
    const logged = lines();
    expect(logged.map((l) => [l.level, l.plugin, l.msg])).toEqual([
      [50, 'errors', '2 sync.example.test. AAAA: plugin/failing: disk on fire'],
      [50, 'errors', '2 async.example.test. TYPE65280: plugin/failing: read udp 10.0.0.1:53: i/o timeout'],
    ]);
    // The server's own "plugin chain failed" line is for chains without errors.
    expect(logged.some((l) => l.msg.includes('plugin chain failed'))).toBe(false);
  });

  it('without errors the server still answers SERVFAIL and logs the failure itself', async () => {
    const { logger, lines } = capture();
    const h = handlerWith(undefined, logger);
    expect(await ask(h, 'sync.example.test')).toBe('SERVFAIL');
    expect(lines().map((l) => l.msg)).toEqual([expect.stringContaining('plugin chain failed')]);
  });

  it('consolidate counts matching errors and logs one line per period at the chosen level', async () => {
    // The consolidation period runs on fake timers, moved on instead of slept through.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const { logger, lines } = capture();
    const errors = new ErrorsPlugin(
      [{ periodMs: 150, pattern: /i\/o timeout$/, source: '.* i/o timeout$', level: 'warn' }],
      logger.child({ plugin: 'errors' }),
    );
    const h = handlerWith(errors, logger);
    for (let i = 0; i < 3; i++) expect(await ask(h, `a${i}.example.test`)).toBe('SERVFAIL');
    await ask(h, 'sync.example.test'); // does not match: logged at once
    expect(lines().map((l) => l.msg)).toEqual(['2 sync.example.test. A: plugin/failing: disk on fire']);
    await vi.advanceTimersByTimeAsync(300);
    expect(
      lines()
        .slice(1)
        .map((l) => [l.level, l.msg]),
    ).toEqual([[40, "3 errors like '.* i/o timeout$' occurred in last 150ms"]]);
    // close() flushes what is pending.
    await ask(h, 'a9.example.test');
    errors.close();
    expect(
      lines()
        .slice(2)
        .map((l) => l.msg),
    ).toEqual(["1 errors like '.* i/o timeout$' occurred in last 150ms"]);
  });

  it('show_first logs the first error of a period in full at the pattern level, then the count of the rest', async () => {
    // The consolidation period runs on fake timers, moved on instead of slept through.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const { logger, lines } = capture();
    const errors = new ErrorsPlugin(
      [{ periodMs: 150, pattern: /i\/o timeout$/, source: '.* i/o timeout$', level: 'warn', showFirst: true }],
      logger.child({ plugin: 'errors' }),
    );
    const h = handlerWith(errors, logger);
    await ask(h, 'a0.example.test');
    expect(lines().map((l) => [l.level, l.msg])).toEqual([[40, '2 a0.example.test. A: plugin/failing: read udp 10.0.0.1:53: i/o timeout']]);
    await ask(h, 'a1.example.test');
    await ask(h, 'a2.example.test');
    await vi.advanceTimersByTimeAsync(300);
    expect(
      lines()
        .slice(1)
        .map((l) => [l.level, l.msg]),
    ).toEqual([[40, "3 errors like '.* i/o timeout$' occurred in last 150ms"]]);
    // A period with only the first error logs no summary (CoreDNS: cnt > 1 || !showFirst).
    await ask(h, 'a3.example.test');
    await vi.advanceTimersByTimeAsync(300);
    expect(
      lines()
        .slice(2)
        .map((l) => l.msg),
    ).toEqual(['2 a3.example.test. A: plugin/failing: read udp 10.0.0.1:53: i/o timeout']);
    errors.close();
  });

  it('stacktrace adds the error with its stack to the log line', async () => {
    const { logger, lines } = capture();
    const h = handlerWith(new ErrorsPlugin([], logger.child({ plugin: 'errors' }), true), logger);
    await ask(h, 'sync.example.test');
    const line = lines()[0] as unknown as { err?: { stack?: string } };
    expect(line.err?.stack).toContain('disk on fire');
    const { logger: plain, lines: plainLines } = capture();
    await ask(handlerWith(new ErrorsPlugin([], plain.child({ plugin: 'errors' })), plain), 'sync.example.test');
    expect((plainLines()[0] as unknown as { err?: unknown }).err).toBeUndefined();
  });

  it('setup: consolidate options and arguments', async () => {
    const corefile = (body: string) => `example.test {\n  ${body}\n}\n`;
    const app = await buildApp({
      corefileText: corefile('errors stdout {\n    consolidate 5m ".* i/o timeout$" warning\n    consolidate 30s "^Failed to .+"\n  }'),
    });
    const p = app.chains[0]!.plugins.find((x) => x.name === 'errors') as unknown as { patterns: { periodMs: number; level: string }[] };
    expect(p.patterns.map((x) => [x.periodMs, x.level])).toEqual([
      [300000, 'warn'],
      [30000, 'error'],
    ]);
    await app.close();
    await expect(buildApp({ corefileText: corefile('errors /var/log/x') })).rejects.toThrow(/Corefile:2: errors: invalid log file/);
    await expect(buildApp({ corefileText: corefile('errors {\n    consolidate 5m\n  }') })).rejects.toThrow(
      /Corefile:3: errors consolidate: wrong number of arguments: 1 given, 2 to 4 expected; usage `consolidate DURATION REGEXP \[LEVEL\]/,
    );
    await expect(buildApp({ corefileText: corefile('errors {\n    consolidate 5m "(" warn\n  }') })).rejects.toThrow(
      /Corefile:3: errors consolidate: bad regular expression/,
    );
    await expect(buildApp({ corefileText: corefile('errors {\n    consolidate 5m "x" loud\n  }') })).rejects.toThrow(
      /Corefile:3: errors consolidate: unknown option in consolidate: "loud"/,
    );
    await expect(buildApp({ corefileText: corefile('errors {\n    stacktrace x\n  }') })).rejects.toThrow(/Corefile:3: errors stacktrace takes no arguments/);
  });

  it('a real server with errors in the chain answers normally', async () => {
    const srv = await startOps();
    try {
      const res = await (await import('../../fixtures/ops/client.js')).udpQuery(srv.port, 'kubernetes.default.svc.cluster.local', 'A');
      expect(res.rcode).toBe('NOERROR');
    } finally {
      await srv.stop();
    }
  }, 30000);
});
