// reload's arguments, as CoreDNS's plugin/reload/setup_test.go: which are accepted, with the
// interval and jitter each one runs with (a jitter above half the interval is clamped to half
// of it, not rejected), and the exact `line: reason` of each rejected one.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { ReloadConfig } from '../../../src/plugins/reload/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: ReloadConfig }>(body, 'reload', { key: 'example.org' })).cfg;
const errorsOf = async (body: string) => (await setupBlock(body, { key: 'example.org' })).errors;

describe('reload setup (CoreDNS setup_test.go)', () => {
  // [line, interval ms, jitter ms]
  it.each<[string, number, number]>([
    ['reload', 30000, 15000],
    ['reload 10s', 10000, 5000],
    ['reload 10s 2s', 10000, 2000],
    ['reload 2s 0s', 2000, 0],
    // The case: the default 15 s jitter clamped to half of 2 s.
    ['reload 2s', 2000, 1000],
    ['reload 1m 1h', 60000, 30000],
    ['reload 1m30s 1s', 90000, 1000],
  ])('accepts %j (interval %i ms, jitter %i ms)', async (line, intervalMs, jitterMs) => {
    expect(await cfgOf(line)).toEqual({ intervalMs, jitterMs });
  });

  it.each<[string, string[]]>([
    ['reload foo', ['2: reload: interval "foo" is not a duration; write e.g. 30s or 1m']],
    ['reload 10 5s', ['2: reload: interval "10" is not a duration; write e.g. 30s or 1m']],
    ['reload 10s foo', ['2: reload: jitter "foo" is not a duration; write e.g. 0s, 1s or 15s']],
    ['reload 10s 5s foo', ['2: reload: wrong number of arguments: 3 given, at most 2 expected; usage `reload [INTERVAL] [JITTER]`']],
    ['reload 1s', ['2: reload: interval "1s" must be at least 2s']],
    ['reload 0s', ['2: reload: interval "0s" must be at least 2s']],
    ['reload -1s', ['2: reload: interval "-1s" must be at least 2s']],
    ['reload 3s 0.5s', ['2: reload: jitter "0.5s" must be 0 or at least 1s']],
    ['reload 10s -1s', ['2: reload: jitter "-1s" must be 0 or at least 1s']],
    // The interval is checked before the jitter.
    ['reload 1s foo', ['2: reload: interval "1s" must be at least 2s']],
  ])('rejects %j', async (line, want) => {
    expect(await errorsOf(line)).toEqual(want);
  });

  it('allows one reload per server block', async () => {
    expect(await errorsOf('reload\nreload')).toEqual(['3: plugin "reload" appears twice in this server block (first at line 2); merge the two']);
  });
});
