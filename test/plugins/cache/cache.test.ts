// cache in front of forward: hits and misses seen through TTLs that count down (dig against the
// real server), denial caching, disable, capacity shards, case and DO-bit keys, serve_stale.
// Behaviour after CoreDNS plugin/cache.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { buildApp, type App } from '../../../src/app.js';
import { CachePlugin, shardOf } from '../../../src/plugins/cache/plugin.js';
import { parseCache } from '../../../src/plugins/cache/setup.js';
import { parseCorefile, CorefileError } from '../../../src/chain/corefile.js';
import { digQuery } from '../../helpers/clients.js';
import { startServer, which, type RunningServer } from '../../helpers/server.js';
import { TestDns, tmpDir, udpQuery } from '../../fixtures/forward/upstreams.js';
import { holdsWithin } from '../../helpers/wait.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');

/** cache.test zone: A with TTL 300, NXDOMAIN with an SOA (TTL 60) for names starting with nx. */
function upstream(): TestDns {
  return new TestDns(({ name, type }) => {
    if (type === 'NS') return { answers: [] };
    if (name.toLowerCase().startsWith('nx')) {
      return {
        rcode: 3,
        authorities: [
          {
            name: 'cache.test',
            type: 'SOA',
            ttl: 60,
            data: { mname: 'ns.cache.test', rname: 'h.cache.test', serial: 1, refresh: 7200, retry: 1800, expire: 86400, minimum: 60 },
          },
        ],
      };
    }
    return { answers: [{ name, type: 'A', ttl: 300, data: '192.0.2.44' }] };
  });
}

function cacheOf(app: App): CachePlugin {
  for (const c of app.chains) for (const p of c.plugins) if (p instanceof CachePlugin) return p;
  throw new Error('no cache plugin');
}

async function appFor(corefile: string): Promise<App> {
  const dir = tmpDir('clusterdns-cache-');
  fs.writeFileSync(path.join(dir, 'Corefile'), corefile);
  return buildApp({ conf: path.join(dir, 'Corefile'), port: 0 });
}

function ttls(p: { answers?: { ttl?: number }[]; authorities?: { ttl?: number }[] }): number[] {
  return [...(p.answers ?? []), ...(p.authorities ?? [])].map((a) => a.ttl ?? -1);
}

describe('cache setup (CoreDNS setup.go)', () => {
  const parse = (text: string) => parseCache(parseCorefile(text, 'Corefile')[0]!.directives[0]!, ['example.org.']);
  it('defaults', () => {
    expect(parse('example.org {\n cache\n}\n')).toMatchObject({
      zones: ['example.org.'],
      successCap: 9984,
      successMaxTtl: 3600,
      successMinTtl: 5,
      denialCap: 9984,
      denialMaxTtl: 1800,
      denialMinTtl: 5,
      servfailTtl: 5,
      prefetch: 0,
      staleUpToMs: 0,
    });
  });
  it('TTL, zones and every option', () => {
    expect(
      parse(`example.org {
  cache 30 a.example.org b.example.org {
    success 2048 60 1
    denial 1024 10 0
    prefetch 3 30s 20%
    serve_stale 2h verify
    servfail 10s
    disable success c.example.org
    disable denial
    keepttl
  }
}
`),
    ).toMatchObject({
      zones: ['a.example.org.', 'b.example.org.'],
      successCap: 2048,
      successMaxTtl: 60,
      successMinTtl: 1,
      denialCap: 1024,
      denialMaxTtl: 10,
      denialMinTtl: 0,
      prefetch: 3,
      prefetchWindowMs: 30_000,
      prefetchPercentage: 20,
      staleUpToMs: 7_200_000,
      verifyStale: true,
      servfailTtl: 10,
      disableSuccess: ['c.example.org.'],
      disableDenial: ['.'],
      keepTtl: true,
    });
  });
  it.each([
    ['cache 0', /TTL must be at least 1: 0/],
    ['cache {\n success\n}', /usage/],
    ['cache {\n prefetch 1 1m 5%\n}', /range \[10, 90\]/],
    ['cache {\n prefetch 1 1m 50\n}', /percentage/],
    ['cache {\n serve_stale 1h later\n}', /refresh mode/],
    ['cache {\n servfail 6m\n}', /5 minutes/],
    ['cache {\n disable both\n}', /cache type "both" is not one of success or denial/],
    ['cache {\n nope\n}', /unknown cache option/],
  ])('rejects %s', (line, re) => {
    expect(() => parse(`example.org {\n${line}\n}\n`)).toThrow(CorefileError);
    expect(() => parse(`example.org {\n${line}\n}\n`)).toThrow(re);
  });
});

describe('cache + forward, in process', () => {
  let up: TestDns;
  const apps: App[] = [];
  // TTLs run out on a fake clock: only Date is faked (the cache reads Date.now when each app is
  // built, so the app must be built after this), timers and sockets stay real.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  /** Moves the fake clock on, as if `ms` went by. */
  const elapse = (ms: number): void => {
    vi.setSystemTime(Date.now() + ms);
  };
  const app = async (corefile: string): Promise<App> => {
    const a = await appFor(corefile);
    apps.push(a);
    return a;
  };
  beforeAll(async () => {
    up = await upstream().start();
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
    await up.stop();
  });

  it('a hit answers from the store with AA and a TTL that counts down; denial is cached too', async () => {
    const a = await app(`. {\n  cache 30\n  forward . 127.0.0.1:${up.port}\n}\n`);
    const first = await ask(a, 'hit.cache.test.', 'A', { protocol: 'udp' });
    expect(ttls(first)).toEqual([30]);
    const nx1 = await ask(a, 'nx1.cache.test.', 'A', { protocol: 'udp' });
    expect(nx1.rcode).toBe('NXDOMAIN');
    expect(ttls(nx1)).toEqual([30]);
    elapse(1100);
    const second = await ask(a, 'hit.cache.test.', 'A', { protocol: 'udp' });
    expect(second.flags & 0x0400).toBe(0x0400);
    expect(ttls(second)).toEqual([29]);
    const nx2 = await ask(a, 'nx1.cache.test.', 'A', { protocol: 'udp' });
    expect(nx2.rcode).toBe('NXDOMAIN');
    expect(ttls(nx2)).toEqual([29]);
    expect(up.count('hit.cache.test')).toBe(1);
    expect(up.count('nx1.cache.test')).toBe(1);
  });

  it('the key ignores case, the reply echoes the question as asked', async () => {
    const a = await app(`. {\n  cache\n  forward . 127.0.0.1:${up.port}\n}\n`);
    await ask(a, 'MiXeD.cache.test.', 'A', { protocol: 'udp' });
    const r = await ask(a, 'mixed.CACHE.test.', 'A', { protocol: 'udp' });
    expect(r.questions?.[0]?.name).toBe('mixed.CACHE.test');
    expect(r.answers?.map((x) => x.data)).toEqual(['192.0.2.44']);
    expect(up.count('mixed.cache.test')).toBe(1);
  });

  it('DO and no DO are separate entries; so are types', async () => {
    const a = await app(`. {\n  cache\n  forward . 127.0.0.1:${up.port}\n}\n`);
    for (let i = 0; i < 2; i++) {
      await ask(a, 'do.cache.test.', 'A', { protocol: 'udp' });
      await ask(a, 'do.cache.test.', 'A', { protocol: 'udp', do: true });
      await ask(a, 'do.cache.test.', 'AAAA', { protocol: 'udp' });
    }
    const asked = up.asked.filter((q) => q.name === 'do.cache.test');
    expect(asked.map((q) => `${q.type} ${q.do}`).sort()).toEqual(['A false', 'A true', 'AAAA false']);
  });

  it('disable success for a zone: positive answers there are never stored, denials are', async () => {
    const a = await app(`. {\n  cache 30 {\n    disable success nocache.cache.test\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`);
    for (let i = 0; i < 2; i++) {
      await ask(a, 'x.nocache.cache.test.', 'A', { protocol: 'udp' });
      await ask(a, 'nx.nocache.cache.test.', 'A', { protocol: 'udp' });
      await ask(a, 'y.yes.cache.test.', 'A', { protocol: 'udp' });
    }
    expect(up.count('x.nocache.cache.test')).toBe(2);
    expect(up.count('nx.nocache.cache.test')).toBe(1);
    expect(up.count('y.yes.cache.test')).toBe(1);
  });

  it('zones: names outside the cache zones pass through uncached', async () => {
    const a = await app(`. {\n  cache 30 only.cache.test\n  forward . 127.0.0.1:${up.port}\n}\n`);
    for (let i = 0; i < 2; i++) {
      await ask(a, 'a.only.cache.test.', 'A', { protocol: 'udp' });
      await ask(a, 'a.elsewhere.cache.test.', 'A', { protocol: 'udp' });
    }
    expect(up.count('a.only.cache.test')).toBe(1);
    expect(up.count('a.elsewhere.cache.test')).toBe(2);
  });

  it('capacity: 256 shards of CAPACITY/256 (at least 4) items; a full shard evicts one', async () => {
    const a = await app(`. {\n  cache {\n    success 1024\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`);
    const cache = cacheOf(a);
    expect(cache.pcache.shardSize).toBe(4);
    // Five names whose keys fall in the same shard (CoreDNS's FNV-64 of DO, CD, type, name).
    const names: string[] = [];
    const target = shardOf('cap0.cache.test.', 1, false);
    for (let i = 0; names.length < 5 && i < 100_000; i++) if (shardOf(`cap${i}.cache.test.`, 1, false) === target) names.push(`cap${i}.cache.test.`);
    expect(names).toHaveLength(5);
    for (const n of names) await ask(a, n, 'A', { protocol: 'udp' });
    expect(cache.pcache.size).toBe(4);
    // The newest is always there.
    await ask(a, names[4]!, 'A', { protocol: 'udp' });
    expect(up.count(names[4]!.slice(0, -1))).toBe(1);
  });

  it('serve_stale: an expired answer is served with TTL 0 while the upstream is down', async () => {
    const own = await upstream().start();
    const a = await app(`. {\n  cache {\n    success 1024 1\n    serve_stale 1h\n  }\n  forward . 127.0.0.1:${own.port}\n}\n`);
    const fresh = await ask(a, 'stale.cache.test.', 'A', { protocol: 'udp' });
    expect(ttls(fresh)).toEqual([1]);
    await own.stop();
    elapse(2100);
    for (let i = 0; i < 2; i++) {
      const stale = await ask(a, 'stale.cache.test.', 'A', { protocol: 'udp' });
      expect(stale.rcode).toBe('NOERROR');
      expect(stale.answers?.map((x) => `${x.ttl} ${x.data}`)).toEqual(['0 192.0.2.44']);
      await cacheOf(a).settled();
    }
  }, 15_000);

  it('serve_stale verify: the upstream is asked first, stale only when it fails', async () => {
    const own = await upstream().start();
    const a = await app(`. {\n  cache {\n    success 1024 1\n    serve_stale 1h verify\n  }\n  forward . 127.0.0.1:${own.port}\n}\n`);
    await ask(a, 'v.cache.test.', 'A', { protocol: 'udp' });
    elapse(2100);
    const refreshed = await ask(a, 'v.cache.test.', 'A', { protocol: 'udp' });
    expect(ttls(refreshed)).toEqual([1]);
    expect(own.count('v.cache.test')).toBe(2);
    await own.stop();
    elapse(2100);
    const stale = await ask(a, 'v.cache.test.', 'A', { protocol: 'udp' });
    expect(stale.answers?.map((x) => `${x.ttl} ${x.data}`)).toEqual(['0 192.0.2.44']);
  }, 15_000);

  it('without serve_stale an expired entry is fetched again', async () => {
    const a = await app(`. {\n  cache {\n    success 1024 1\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`);
    await ask(a, 'exp.cache.test.', 'A', { protocol: 'udp' });
    elapse(1100);
    await ask(a, 'exp.cache.test.', 'A', { protocol: 'udp' });
    expect(up.count('exp.cache.test')).toBe(2);
  });

  it('prefetch: a popular item is refreshed before it expires', async () => {
    const a = await app(`. {\n  cache {\n    success 1024 2\n    prefetch 2 1m 50%\n  }\n  forward . 127.0.0.1:${up.port}\n}\n`);
    await ask(a, 'pf.cache.test.', 'A', { protocol: 'udp' });
    elapse(1100);
    await ask(a, 'pf.cache.test.', 'A', { protocol: 'udp' });
    await ask(a, 'pf.cache.test.', 'A', { protocol: 'udp' });
    await cacheOf(a).settled();
    expect(up.count('pf.cache.test')).toBe(2);
  });
});

describeNeeding(['dig'], 'cache through the real server with dig', () => {
  let up: TestDns | undefined;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    up = await upstream().start();
    const dir = tmpDir('clusterdns-cache-');
    fs.writeFileSync(path.join(dir, 'Corefile'), `. {\n  cache 30\n  forward . 127.0.0.1:${up.port}\n}\n`);
    server = await startServer(['--conf', path.join(dir, 'Corefile')], { timeoutMs: 30_000 });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await up?.stop();
  });
  it('miss then hit: the TTL counts down and the upstream is asked once', async () => {
    const first = await digQuery(dig!, server!.port, 'Dig.cache.test.', 'A', false);
    expect(first.answer).toEqual(['Dig.cache.test. 30 IN A 192.0.2.44']);
    // The server runs on real time: ask again (cache hits) until the TTL has gone down, at most 5 s.
    let second = first;
    await holdsWithin(
      async () => {
        second = await digQuery(dig!, server!.port, 'dig.cache.test.', 'A', true);
        return !/ 30 IN /.test(second.answer[0] ?? '');
      },
      5000,
      100,
    );
    expect(second.flags).toContain('aa');
    expect(second.answer[0]).toMatch(/^Dig\.cache\.test\. 2[89] IN A 192\.0\.2\.44$/);
    const nx = await digQuery(dig!, server!.port, 'nxdig.cache.test.', 'A', false);
    expect(nx.rcode).toBe('NXDOMAIN');
    expect(up!.count('dig.cache.test')).toBe(1);
    const raw = await udpQuery(server!.port, 'DIG.cache.test', 'A');
    expect(raw.packet.rcode).toBe('NOERROR');
    expect(raw.packet.questions?.[0]?.name).toBe('DIG.cache.test');
  });
});
