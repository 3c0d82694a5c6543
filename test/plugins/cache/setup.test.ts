// CoreDNS plugin/cache/setup_test.go (TestSetup, TestServeStale, TestServfail, TestDisable),
// ported. serve_stale's extra arguments (verify timeout, response TTL, recheck) and
// serve_stale_policy are not implemented here and are refused with that reason.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { CacheConfig } from '../../../src/plugins/cache/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: CacheConfig }>(body, 'cache')).cfg;
const rejected = async (body: string) => (await setupBlock(body)).errors.join('\n');

const DEF = 9984;
describe('cache setup (CoreDNS TestSetup)', () => {
  // [input, ncap, pcap, nttl, minnttl, pttl, minpttl, prefetch]
  it.each([
    ['cache', DEF, DEF, 1800, 5, 3600, 5, 0],
    ['cache {}', DEF, DEF, 1800, 5, 3600, 5, 0],
    ['cache example.nl {\n  success 10\n}', DEF, 10, 1800, 5, 3600, 5, 0],
    ['cache example.nl {\n  success 10 1800 30\n}', DEF, 10, 1800, 5, 1800, 30, 0],
    ['cache example.nl {\n  success 10\n  denial 10 15\n}', 10, 10, 15, 5, 3600, 5, 0],
    ['cache example.nl {\n  success 10\n  denial 10 15 2\n}', 10, 10, 15, 2, 3600, 5, 0],
    ['cache 25 example.nl {\n  success 10\n  denial 10 15\n}', 10, 10, 15, 5, 25, 5, 0],
    ['cache 25 example.nl {\n  success 10\n  denial 10 15 5\n}', 10, 10, 15, 5, 25, 5, 0],
    ['cache aaa example.nl', DEF, DEF, 1800, 5, 3600, 5, 0],
    ['cache {\n  prefetch 10\n}', DEF, DEF, 1800, 5, 3600, 5, 10],
  ])('accepts %j', async (body, ncap, pcap, nttl, minnttl, pttl, minpttl, prefetch) => {
    const c = await cfgOf(body);
    expect([c.denialCap, c.successCap, c.denialMaxTtl, c.denialMinTtl, c.successMaxTtl, c.successMinTtl, c.prefetch]).toEqual([
      ncap,
      pcap,
      nttl,
      minnttl,
      pttl,
      minpttl,
      prefetch,
    ]);
  });

  it.each([
    ['cache example.nl {\n  success\n  denial 10 15\n}', /usage `success CAPACITY/],
    ['cache example.nl {\n  success 15\n  denial aaa\n}', /CAPACITY "aaa" is not an integer/],
    ['cache example.nl {\n  positive 15\n  negative aaa\n}', /unknown cache option "positive"/],
    ['cache 0 example.nl', /cache: TTL must be at least 1: 0/],
    ['cache -1 example.nl', /cache: TTL must be at least 1: -1/],
    ['cache 1 example.nl {\n  positive 0\n}', /unknown cache option "positive"/],
    ['cache 1 example.nl {\n  prefetch 0 blurp\n}', /"blurp" is not a duration/],
    ['cache\ncache', /appears twice/],
  ])('rejects %j', async (body, reason) => {
    expect(await rejected(body)).toMatch(reason);
  });
});

describe('cache serve_stale, servfail, disable (CoreDNS tests)', () => {
  it.each([
    ['serve_stale', 3_600_000, false],
    ['serve_stale 20m', 1_200_000, false],
    ['serve_stale 1h20m', 4_800_000, false],
    ['serve_stale 0m', 0, false],
    ['serve_stale 0', 0, false],
    ['serve_stale 0 verify', 0, true],
    ['serve_stale 0 immediate', 0, false],
    ['serve_stale 0 VERIFY', 0, true],
  ])('accepts %j', async (opt, ms, verify) => {
    const c = await cfgOf(`cache {\n  ${opt}\n}`);
    expect([c.staleUpToMs, c.verifyStale]).toEqual([ms, verify]);
  });

  it.each([
    ['serve_stale 20', /"20" is not a duration/],
    ['serve_stale -20m', /cache serve_stale: DURATION "-20m" must not be negative/],
    ['serve_stale aa', /"aa" is not a duration/],
    ['serve_stale 1m nono', /refresh mode "nono" is not one of immediate or verify/],
    ['serve_stale 0 after nono', /only `serve_stale \[DURATION\] \[immediate\|verify\]` is supported/],
    ['serve_stale 1h immediate 30s', /the verify timeout, response TTL and recheck arguments are not/],
    ['serve_stale_policy prefer_positive', /cache serve_stale_policy is not supported/],
  ])('rejects %j', async (opt, reason) => {
    expect(await rejected(`cache {\n  ${opt}\n}`)).toMatch(reason);
  });

  it.each([
    ['servfail 1s', 1],
    ['servfail 5m', 300],
    ['servfail 0s', 0],
    ['servfail 0', 0],
  ])('accepts %j', async (opt, ttl) => {
    expect((await cfgOf(`cache {\n  ${opt}\n}`)).servfailTtl).toBe(ttl);
  });

  it.each([
    ['servfail', /usage `servfail DURATION`/],
    ['servfail 6m', /must be at most 5m: caching SERVFAIL responses over 5 minutes is not permitted/],
    ['servfail 20', /"20" is not a duration/],
    ['servfail -1s', /cache servfail: DURATION "-1s" must not be negative/],
    ['servfail aa', /"aa" is not a duration/],
    ['servfail 1m invalid', /usage `servfail DURATION`/],
  ])('rejects %j', async (opt, reason) => {
    expect(await rejected(`cache {\n  ${opt}\n}`)).toMatch(reason);
  });

  it.each([
    ['disable denial example.com example.org', ['example.com.', 'example.org.'], []],
    ['disable success example.com example.org', [], ['example.com.', 'example.org.']],
    ['disable denial', ['.'], []],
    ['disable success', [], ['.']],
    ['disable denial example.com example.org\n  disable success example.com example.org', ['example.com.', 'example.org.'], ['example.com.', 'example.org.']],
  ])('accepts %j', async (opt, denial, success) => {
    const c = await cfgOf(`cache {\n  ${opt}\n}`);
    expect([c.disableDenial, c.disableSuccess]).toEqual([denial, success]);
  });

  it('rejects disable invalid', async () => {
    expect(await rejected('cache {\n  disable invalid example.com example.org\n}')).toMatch(/cache type "invalid" is not one of success or denial/);
  });
});

describe('cache setup errors, word for word', () => {
  // Every message of cache/setup.ts that the tables above match only in part or not at all.
  it.each([
    ['cache {\n  success -1\n}', '3: cache success: CAPACITY must be at least 0: -1'],
    ['cache {\n  denial 10 0\n}', '3: cache denial: TTL must be at least 1: 0'],
    ['cache {\n  success 10 60 -1\n}', '3: cache success: MINTTL must be at least 0: -1'],
    ['cache {\n  success 10 ttl\n}', '3: cache success: TTL "ttl" is not an integer'],
    ['cache {\n  prefetch\n}', '3: cache prefetch: wrong number of arguments: 0 given, 1 to 3 expected; usage `prefetch AMOUNT [[DURATION] [PERCENTAGE%]]`'],
    ['cache {\n  prefetch -1\n}', '3: cache prefetch: AMOUNT must be at least 0: -1'],
    ['cache {\n  prefetch 10 1m 50\n}', '3: cache prefetch: PERCENTAGE "50" is not a percentage; write e.g. 10% or 50%'],
    ['cache {\n  prefetch 10 1m 5x%\n}', '3: cache prefetch: PERCENTAGE "5x%" is not a percentage; write e.g. 10% or 50%'],
    ['cache {\n  prefetch 10 1m 5%\n}', '3: cache prefetch: PERCENTAGE must be in range [10, 90]: 5'],
    ['cache {\n  prefetch 10 1m 91%\n}', '3: cache prefetch: PERCENTAGE must be in range [10, 90]: 91'],
    ['cache {\n  disable\n}', '3: cache disable: wrong number of arguments: 0 given, at least 1 expected; usage `disable success|denial [ZONES...]`'],
    ['cache {\n  keepttl 10\n}', '3: cache keepttl takes no arguments, got "10"'],
    ['cache 0', '2: cache: TTL must be at least 1: 0'],
    [
      'cache {\n  servfail 301s\n}',
      '3: cache servfail: DURATION "301s" must be at most 5m: caching SERVFAIL responses over 5 minutes is not permitted (RFC 2308)',
    ],
    ['cache {\n  serve_stale 1m later\n}', '3: cache serve_stale: refresh mode "later" is not one of immediate or verify'],
    ['cache {\n  prefetch 1 soon\n}', '3: cache prefetch: DURATION "soon" is not a duration; write e.g. 30s, 1m or 10m'],
    ['cache {\n  fetch 1\n}', '3: unknown cache option "fetch"; valid options: success, denial, prefetch, serve_stale, servfail, disable, keepttl'],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('accepts the bounds of the prefetch percentage and keepttl alone', async () => {
    expect((await cfgOf('cache {\n  prefetch 10 1m 10%\n}')).prefetchPercentage).toBe(10);
    expect((await cfgOf('cache {\n  prefetch 10 1m 90%\n}')).prefetchPercentage).toBe(90);
    expect((await cfgOf('cache {\n  keepttl\n}')).keepTtl).toBe(true);
  });
});
