// reload's arguments, as CoreDNS's plugin/reload/setup_test.go: which are accepted and which
// rejected, and the interval and jitter each one runs with (a jitter above half the interval is
// clamped to half of it, not rejected).
import { describe, it, expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ReloadPlugin } from '../../src/plugins/reload/plugin.js';

const corefile = (line: string): string => `example.org {\n  ${line}\n}\n`;

async function built(line: string): Promise<ReloadPlugin> {
  const app = await buildApp({ corefileText: corefile(line) });
  const p = app.chains.flatMap((c) => [...c.plugins]).find((x): x is ReloadPlugin => x instanceof ReloadPlugin);
  if (!p) throw new Error('no reload plugin built');
  return p;
}

describe('reload setup (CoreDNS setup_test.go)', () => {
  // [arguments, interval ms, jitter ms]
  const accepted: [string, number, number][] = [
    ['reload', 30000, 15000],
    ['reload 10s', 10000, 5000],
    ['reload 10s 2s', 10000, 2000],
    ['reload 2s 0s', 2000, 0],
    // The case: the default 15 s jitter clamped to half of 2 s.
    ['reload 2s', 2000, 1000],
    ['reload 1m 1h', 60000, 30000],
  ];
  for (const [line, interval, jitter] of accepted) {
    it(`accepts "${line}" (interval ${interval} ms, jitter ${jitter} ms)`, async () => {
      const p = await built(line);
      expect([p.intervalMs, p.jitterMs]).toEqual([interval, jitter]);
    });
  }

  const rejected: [string, RegExp][] = [
    ['reload foo', /Corefile:2: reload: interval "foo" is not a duration/],
    ['reload 10s foo', /Corefile:2: reload: jitter "foo" is not a duration/],
    ['reload 10s 5s foo', /Corefile:2: reload takes at most two arguments/],
    ['reload 1s', /Corefile:2: reload: interval "1s" must be at least 2s/],
    ['reload 0s', /Corefile:2: reload: interval "0s" must be at least 2s/],
    ['reload 3s 0.5s', /Corefile:2: reload: jitter "0.5s" must be 0 or at least 1s/],
    ['reload 10s -1s', /Corefile:2: reload: jitter "-1s" must be 0 or at least 1s/],
  ];
  for (const [line, message] of rejected) {
    it(`rejects "${line}"`, async () => {
      await expect(buildApp({ corefileText: corefile(line) })).rejects.toThrow(message);
    });
  }
});
