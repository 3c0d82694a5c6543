// forward: real upstreams on loopback (another clusterdns process, nsd, scripted test servers),
// the real server under test, dig and raw UDP clients. Behaviour after CoreDNS plugin/forward.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { buildApp, type App } from '../../../src/app.js';
import { ForwardPlugin } from '../../../src/plugins/forward/plugin.js';
import { malformed } from '../../../src/plugins/forward/wire.js';
import { parseForward, parseUpstream, resolvConfNameservers } from '../../../src/plugins/forward/setup.js';
import { parseGoDuration } from '../../../src/pkg/duration.js';
import { parseCorefile, CorefileError } from '../../../src/chain/corefile.js';
import { digQuery } from '../../helpers/clients.js';
import { freePort, repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { holdsWithin } from '../../helpers/wait.js';
import { nsdPath, startNsd, TestDns, tmpDir, udpQuery, type Nsd } from '../../fixtures/forward/upstreams.js';
import { describeNeeding, describeTool, skipOrFailInCI } from '../../helpers/tools.js';

const dig = which('dig');
const fixtures = path.join(repoRoot, 'test/fixtures/forward');
const inCI = process.env.CI === 'true';

function answerData(p: { answers?: { type: string; data?: unknown }[] }): string[] {
  return (p.answers ?? []).map((a) => `${a.type} ${String(a.data)}`);
}

function forwardOf(app: App): ForwardPlugin {
  for (const c of app.chains) for (const p of c.plugins) if (p instanceof ForwardPlugin) return p;
  throw new Error('no forward plugin');
}

async function appFor(corefile: string): Promise<App> {
  const dir = tmpDir('clusterdns-fwd-');
  const conf = path.join(dir, 'Corefile');
  fs.writeFileSync(conf, corefile);
  return buildApp({ conf, port: 0 });
}

async function serverFor(corefile: string): Promise<RunningServer> {
  const dir = tmpDir('clusterdns-fwd-');
  const conf = path.join(dir, 'Corefile');
  fs.writeFileSync(conf, corefile);
  return startServer(['--conf', conf], { timeoutMs: 30_000 });
}

// A scripted upstream: who.test answers with its own address, slow* is late, trunc* truncates
// over UDP, spoof* sends forged replies first, everything else is 192.0.2.1.
function scripted(ip: string, opts: { host?: string; neverSlow?: boolean } = {}): TestDns {
  return new TestDns(({ name, type }) => {
    const n = name.toLowerCase();
    const a = (data: string, ttl = 60) => [{ name, type: 'A' as const, ttl, data }];
    if (type === 'NS') return { answers: [] };
    if (n.startsWith('slow') && !opts.neverSlow) return { answers: a('192.0.2.3'), delayMs: 3000 };
    if (n.startsWith('trunc'))
      return { answers: Array.from({ length: 20 }, (_, i) => ({ name, type: 'A' as const, ttl: 60, data: `192.0.2.${100 + i}` })), truncateUdp: true };
    if (n.startsWith('spoof')) return { answers: a('192.0.2.99'), spoof: true, delayMs: 200 };
    if (n === 'who.test') return { answers: a(ip) };
    return { answers: a(opts.neverSlow ? ip : '192.0.2.1') };
  }, opts.host);
}

describe('forward setup (CoreDNS setup.go)', () => {
  const parse = (text: string) => {
    const blocks = parseCorefile(text, 'Corefile');
    return parseForward(blocks[0]!.directives[0]!, ['.']);
  };
  it.each([
    ['forward . 127.0.0.1', { from: '.', upstreams: ['127.0.0.1:53'] }],
    ['forward example.org dns://10.0.0.1:1053 [::1]:53 ::2', { from: 'example.org.', upstreams: ['10.0.0.1:1053', '[::1]:53', '[::2]:53'] }],
    ['forward 10.0.0.0/24 127.0.0.1:5300', { from: '0.0.10.in-addr.arpa.', upstreams: ['127.0.0.1:5300'] }],
  ])('%s', (line, want) => {
    const cfg = parse(`. {\n  ${line}\n}\n`);
    expect(cfg.from).toBe(want.from);
    expect(cfg.upstreams.map((u) => u.label)).toEqual(want.upstreams);
    expect(cfg.maxFails).toBe(2);
    expect(cfg.healthCheckMs).toBe(500);
    expect(cfg.policy).toBe('random');
    expect(cfg.expireMs).toBe(10_000);
  });
  it('reads every option', () => {
    const cfg = parse(`. {
  forward . 127.0.0.1 {
    except Example.ORG internal
    force_tcp
    prefer_udp
    expire 20s
    max_fails 5
    health_check 100ms no_rec domain example.com
    policy sequential
    max_concurrent 10
    failover SERVFAIL REFUSED
  }
}
`);
    expect(cfg).toMatchObject({
      except: ['example.org.', 'internal.'],
      forceTcp: true,
      preferUdp: true,
      expireMs: 20_000,
      maxFails: 5,
      healthCheckMs: 100,
      healthCheckRd: false,
      healthCheckDomain: 'example.com.',
      policy: 'sequential',
      maxConcurrent: 10,
      failover: [2, 5],
    });
  });
  it.each([
    ['forward .', /forward: wrong number of arguments: 1 given, at least 2 expected; usage `forward FROM TO...`/],
    ['forward . https://9.9.9.9', /'https' \(DNS over HTTPS\) is not supported/],
    ['forward . tls://dns.quad9.net', /"tls:\/\/dns.quad9.net" is not an IP address/],
    ['forward . /nonexistent/resolv.conf', /not an IP address or a readable file/],
    [`forward . ${Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 1}`).join(' ')}`, /more than 15 TOs/],
    ['forward . 127.0.0.1 {\n policy fastest\n}', /policy "fastest" is not one of random, round_robin or sequential/],
    ['forward . 127.0.0.1 {\n max_fails -1\n}', /max_fails/],
    ['forward . 127.0.0.1 {\n health_check 1x\n}', /not a duration/],
    ['forward . 127.0.0.1 {\n bogus\n}', /unknown forward option "bogus"/],
  ])('rejects %s', (line, re) => {
    expect(() => parse(`. {\n${line}\n}\n`)).toThrow(CorefileError);
    expect(() => parse(`. {\n${line}\n}\n`)).toThrow(re);
  });
  it('parses host:port, resolv.conf nameservers and Go durations', () => {
    expect(parseUpstream('dns://[fd00::1]:5353')).toEqual({ host: 'fd00::1', port: 5353, label: '[fd00::1]:5353', transport: 'dns' });
    expect(parseUpstream('tls://9.9.9.9')).toEqual({ host: '9.9.9.9', port: 853, label: '9.9.9.9:853', transport: 'tls' });
    expect(parseUpstream('tls://[::1%dns.example]:8853')).toEqual({
      host: '::1',
      port: 8853,
      label: '[::1]:8853',
      transport: 'tls',
      servername: 'dns.example',
    });
    expect(parseUpstream('tls://127.0.0.1%dns.example')).toMatchObject({ label: '127.0.0.1:853', servername: 'dns.example' });
    // The zone of a plain DNS upstream is an IPv6 zone, dropped as CoreDNS's splitZone does.
    expect(parseUpstream('[fe80::1%eth0]:53')).toEqual({ host: 'fe80::1', port: 53, label: '[fe80::1]:53', transport: 'dns' });
    expect(parseUpstream('quic://127.0.0.1')).toBeUndefined();
    expect(parseUpstream('example.com:53')).toBeUndefined();
    expect(resolvConfNameservers('# c\nsearch a b\nnameserver 10.0.0.10\nnameserver fe80::1%eth0\noptions ndots:5\n').map((u) => u.label)).toEqual([
      '10.0.0.10:53',
      '[fe80::1]:53',
    ]);
    expect([parseGoDuration('0.5s'), parseGoDuration('1m30s'), parseGoDuration('250ms'), parseGoDuration('0'), parseGoDuration('5')]).toEqual([
      500,
      90_000,
      250,
      0,
      undefined,
    ]);
  });
});

describe('forward to real upstreams through the real server', () => {
  let upstream: RunningServer | undefined;
  let nsd: Nsd | undefined;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    upstream = await startServer(['--conf', path.join(fixtures, 'Corefile.upstream'), '--manifests', path.join(fixtures, 'manifests')], { timeoutMs: 30_000 });
    if (nsdPath) nsd = await startNsd('example.test', fs.readFileSync(path.join(fixtures, 'example.test.zone'), 'utf8'));
    else if (inCI) throw new Error('nsd is missing in CI: add the Debian package nsd to .ci/run');
    else console.warn('nsd not found: the nsd upstream cases are skipped (install the Debian package nsd)');
    server = await serverFor(`cluster.local {
  forward . 127.0.0.1:${upstream.port}
}
example.test {
  forward . 127.0.0.1:${nsd?.port ?? 9}
}
`);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.stop();
    await nsd?.stop();
  });

  describeNeeding(['dig'], 'dig', () => {
    for (const tcp of [false, true]) {
      it(`a kubernetes name from another clusterdns (${tcp ? 'tcp' : 'udp'}), the question's case echoed, AA kept`, async () => {
        const obs = await digQuery(dig!, server!.port, 'WeB.Apps.svc.cluster.local.', 'A', tcp);
        expect(obs.rcode).toBe('NOERROR');
        expect(obs.flags).toContain('aa');
        expect(obs.answer).toEqual(['WeB.Apps.svc.cluster.local. 5 IN A 10.96.0.50']);
      });
    }
    it('NXDOMAIN from the upstream with its SOA', async () => {
      const obs = await digQuery(dig!, server!.port, 'nope.apps.svc.cluster.local.', 'A', false);
      expect(obs.rcode).toBe('NXDOMAIN');
      expect(obs.authority[0]).toMatch(/^cluster\.local\. \d+ IN SOA ns\.dns\.cluster\.local\. /);
    });
    it.skipIf(skipOrFailInCI(nsdPath ? undefined : describeTool('nsd'), 'nsd: A, CNAME chain, NXDOMAIN'))('nsd: A, CNAME chain, NXDOMAIN', async () => {
      const a = await digQuery(dig!, server!.port, 'www.example.test.', 'A', false);
      expect(a).toMatchObject({ rcode: 'NOERROR', answer: ['www.example.test. 300 IN A 192.0.2.10'] });
      expect(a.flags).toContain('aa');
      const c = await digQuery(dig!, server!.port, 'ALIAS.example.test.', 'A', true);
      expect(c.answer).toEqual(['ALIAS.example.test. 300 IN CNAME www.example.test.', 'www.example.test. 300 IN A 192.0.2.10']);
      const nx = await digQuery(dig!, server!.port, 'missing.example.test.', 'AAAA', false);
      expect(nx.rcode).toBe('NXDOMAIN');
      expect(nx.authority).toEqual(['example.test. 60 IN SOA ns1.example.test. hostmaster.example.test. 2024010101 7200 1800 86400 60']);
    });
  });

  it('the raw reply keeps our ID, the question as asked, RD copied', async () => {
    const r = await udpQuery(server!.port, 'wEB.apps.SVC.cluster.local', 'A');
    expect(r.packet.rcode).toBe('NOERROR');
    expect(r.packet.questions?.[0]?.name).toBe('wEB.apps.SVC.cluster.local');
    expect(answerData(r.packet)).toEqual(['A 10.96.0.50']);
  });
});

describe('forward failure handling (scripted upstreams, in process)', () => {
  const servers: TestDns[] = [];
  const apps: App[] = [];
  const start = async (ip = '192.0.2.1', neverSlow = false): Promise<TestDns> => {
    const s = await scripted(ip, { neverSlow }).start();
    servers.push(s);
    return s;
  };
  const app = async (corefile: string): Promise<App> => {
    const a = await appFor(corefile);
    apps.push(a);
    return a;
  };
  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const s of servers) await s.stop();
  });

  it('an upstream with nothing listening (ICMP refused): the next one answers, health checks mark it down', async () => {
    const good = await start();
    const dead = await freePort();
    const a = await app(`. {\n  forward . 127.0.0.1:${dead} 127.0.0.1:${good.port} {\n    policy sequential\n    health_check 100ms\n  }\n}\n`);
    const t0 = Date.now();
    const r = await ask(a, 'first.test.', 'A', { protocol: 'udp' });
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(r.rcode).toBe('NOERROR');
    expect(r.answers?.map((x) => x.data)).toEqual(['192.0.2.1']);
    const fwd = forwardOf(a);
    // max_fails 2: down after the third failed check (CoreDNS Down: fails > max_fails).
    expect(await holdsWithin(() => fwd.upstreams[0]!.down(2), 3000)).toBe(true);
    const before = good.count();
    const r2 = await ask(a, 'second.test.', 'A', { protocol: 'udp' });
    expect(r2.rcode).toBe('NOERROR');
    expect(good.count()).toBe(before + 1);
    // Something starts listening there: the next check gets a reply and the upstream is up again.
    const revived = await scripted('192.0.2.7').start(dead);
    servers.push(revived);
    expect(await holdsWithin(() => !fwd.upstreams[0]!.down(2), 3000)).toBe(true);
    expect(fwd.upstreams[0]!.fails).toBe(0);
    const r3 = await ask(a, 'who.test.', 'A', { protocol: 'udp' });
    expect(r3.answers?.map((x) => x.data)).toEqual(['192.0.2.7']);
  });

  it('every upstream down after health checks: one is tried at random and coredns_forward_healthcheck_broken_total counts it', async () => {
    const dead = await freePort();
    const a = await app(`. {\n  forward . 127.0.0.1:${dead} {\n    health_check 100ms\n  }\n}\n`);
    const broken = async (): Promise<number> => (await a.metrics.m.forwardHealthcheckBroken.get()).values[0]?.value ?? 0;
    await ask(a, 'wake.test.', 'A', { protocol: 'udp' });
    const fwd = forwardOf(a);
    expect(await holdsWithin(() => fwd.upstreams[0]!.down(2), 3000)).toBe(true);
    const before = await broken();
    const r = await ask(a, 'x.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('SERVFAIL');
    expect(await broken()).toBeGreaterThan(before);
  });

  it('every upstream down: SERVFAIL, not a hang', async () => {
    const a = await app(`. {\n  forward . 127.0.0.1:${await freePort()}\n}\n`);
    const t0 = Date.now();
    const r = await ask(a, 'x.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('SERVFAIL');
    expect(Date.now() - t0).toBeLessThan(5500);
  });

  it('a slow upstream times out (2 s) and the next answers; other queries are not blocked meanwhile', async () => {
    const slow = await start();
    const good = await start('192.0.2.2', true);
    const a = await app(`. {\n  forward . 127.0.0.1:${slow.port} 127.0.0.1:${good.port} {\n    policy sequential\n  }\n}\n`);
    const t0 = Date.now();
    const pending = ask(a, 'slow.test.', 'A', { protocol: 'udp' });
    // While that query waits on the slow upstream, others are answered at once.
    for (let i = 0; i < 5; i++) {
      const t = Date.now();
      const r = await ask(a, `fast${i}.test.`, 'A', { protocol: 'udp' });
      expect(r.rcode).toBe('NOERROR');
      expect(Date.now() - t).toBeLessThan(500);
    }
    const r = await pending;
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(3000);
    expect(r.answers?.map((x) => x.data)).toEqual(['192.0.2.2']);
    expect(good.count('slow.test')).toBe(1);
  }, 10_000);

  it('a truncated UDP reply is retried over TCP', async () => {
    const t = await start();
    const a = await app(`. {\n  forward . 127.0.0.1:${t.port}\n}\n`);
    const r = await ask(a, 'trunc.test.', 'A', { protocol: 'udp', udpSize: 1232 });
    expect(r.rcode).toBe('NOERROR');
    expect(r.flags! & 0x0200).toBe(0);
    expect(r.answers).toHaveLength(20);
    expect(t.asked.filter((q) => q.name === 'trunc.test').map((q) => q.proto)).toEqual(['udp', 'tcp']);
  });

  it('force_tcp sends every query over TCP; a TCP client is forwarded over TCP', async () => {
    const t = await start();
    const a = await app(`. {\n  forward . 127.0.0.1:${t.port} {\n    force_tcp\n  }\n}\n`);
    await ask(a, 'one.test.', 'A', { protocol: 'udp' });
    const b = await app(`. {\n  forward . 127.0.0.1:${t.port}\n}\n`);
    await ask(b, 'two.test.', 'A', { protocol: 'tcp' });
    const c = await app(`. {\n  forward . 127.0.0.1:${t.port} {\n    prefer_udp\n  }\n}\n`);
    await ask(c, 'three.test.', 'A', { protocol: 'tcp' });
    expect(t.asked.filter((q) => /^(one|two|three)\.test$/.test(q.name)).map((q) => `${q.name} ${q.proto}`)).toEqual([
      'one.test tcp',
      'two.test tcp',
      'three.test udp',
    ]);
  });

  it('spoofed replies (wrong ID, wrong question) are dropped and the real one is taken', async () => {
    const s = await start();
    const a = await app(`. {\n  forward . 127.0.0.1:${s.port}\n}\n`);
    const r = await ask(a, 'SpOoF.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('NOERROR');
    expect(r.questions?.[0]?.name).toBe('SpOoF.test');
    expect(r.answers?.map((x) => `${x.name} ${x.data}`)).toEqual(['SpOoF.test 192.0.2.99']);
  });

  it('max_concurrent: a query beyond the limit gets REFUSED at once, and the limit frees up', async () => {
    const s = await start();
    const a = await app(`. {\n  forward . 127.0.0.1:${s.port} {\n    max_concurrent 1\n  }\n}\n`);
    const pending = ask(a, 'slow1.test.', 'A', { protocol: 'udp' });
    await holdsWithin(() => forwardOf(a).inFlight === 1, 1000);
    const t = Date.now();
    const r = await ask(a, 'other.test.', 'A', { protocol: 'udp' });
    expect(r.rcode).toBe('REFUSED');
    expect(Date.now() - t).toBeLessThan(200);
    await pending;
    expect((await ask(a, 'other.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
  }, 10_000);

  it('except: names under it go to the next plugin (none here: SERVFAIL) and never upstream', async () => {
    const s = await start();
    const a = await app(`. {\n  forward . 127.0.0.1:${s.port} {\n    except internal.test\n  }\n}\n`);
    expect((await ask(a, 'a.internal.test.', 'A', { protocol: 'udp' })).rcode).toBe('SERVFAIL');
    expect((await ask(a, 'a.public.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect(s.count('a.internal.test')).toBe(0);
    expect(s.count('a.public.test')).toBe(1);
  });

  it('FROM scopes what is forwarded', async () => {
    const s = await start();
    const a = await app(`. {\n  forward sub.test 127.0.0.1:${s.port}\n}\n`);
    expect((await ask(a, 'x.sub.test.', 'A', { protocol: 'udp' })).rcode).toBe('NOERROR');
    expect((await ask(a, 'x.other.test.', 'A', { protocol: 'udp' })).rcode).toBe('SERVFAIL');
    expect(s.count('x.other.test')).toBe(0);
  });

  it.each([
    ['sequential', ['192.0.2.11', '192.0.2.11', '192.0.2.11', '192.0.2.11']],
    ['round_robin', ['192.0.2.12', '192.0.2.11', '192.0.2.12', '192.0.2.11']],
  ])('policy %s', async (policy, want) => {
    const one = await start('192.0.2.11');
    const two = await start('192.0.2.12');
    const a = await app(`. {\n  forward . 127.0.0.1:${one.port} 127.0.0.1:${two.port} {\n    policy ${policy}\n  }\n}\n`);
    const got: string[] = [];
    for (let i = 0; i < 4; i++) got.push(String((await ask(a, 'who.test.', 'A', { protocol: 'udp' })).answers?.[0]?.data));
    expect(got).toEqual(want);
  });

  it('policy random spreads queries over the upstreams', async () => {
    const one = await start('192.0.2.11');
    const two = await start('192.0.2.12');
    const a = await app(`. {\n  forward . 127.0.0.1:${one.port} 127.0.0.1:${two.port}\n}\n`);
    for (let i = 0; i < 40; i++) await ask(a, 'who.test.', 'A', { protocol: 'udp' });
    expect(one.count('who.test')).toBeGreaterThan(3);
    expect(two.count('who.test')).toBeGreaterThan(3);
  });

  it('a resolv.conf TO: its nameservers (port 53) are the upstreams', async (ctx) => {
    // A loopback address of its own, so port 53 is free whatever else runs on the machine.
    const ip = `127.53.${Math.floor(Math.random() * 200) + 1}.${Math.floor(Math.random() * 200) + 1}`;
    const s = scripted(ip, { host: ip });
    try {
      await s.start(53);
    } catch (err) {
      if (inCI) throw err;
      console.warn(`cannot bind ${ip}:53 (${(err as Error).message}): resolv.conf case skipped`);
      ctx.skip();
      return;
    }
    servers.push(s);
    const dir = tmpDir('clusterdns-fwd-');
    fs.writeFileSync(path.join(dir, 'resolv.conf'), `search example.com\nnameserver ${ip}\noptions ndots:5\n`);
    fs.writeFileSync(path.join(dir, 'Corefile'), '. {\n  forward . resolv.conf\n}\n');
    const a = await buildApp({ conf: path.join(dir, 'Corefile'), port: 0 });
    apps.push(a);
    expect(forwardOf(a).upstreams.map((u) => u.label)).toEqual([`${ip}:53`]);
    const r = await ask(a, 'who.test.', 'A', { protocol: 'udp' });
    expect(r.answers?.map((x) => x.data)).toEqual([ip]);
  });
});

describeNeeding(['dig'], 'forward through the real server: slow, truncating, spoofing upstream', () => {
  let up: TestDns | undefined;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    up = await scripted('192.0.2.1').start();
    server = await serverFor(`. {\n  forward . 127.0.0.1:${up.port}\n}\n`);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await up?.stop();
  });
  it('dig over UDP gets the full answer the upstream only gives over TCP', async () => {
    const obs = await digQuery(dig!, server!.port, 'trunc.test.', 'A', false);
    expect(obs.rcode).toBe('NOERROR');
    expect(obs.flags).not.toContain('tc');
    expect(obs.answer).toHaveLength(20);
  });
  it('spoofed replies do not reach dig', async () => {
    const obs = await digQuery(dig!, server!.port, 'spoof.test.', 'A', false);
    expect(obs.answer).toEqual(['spoof.test. 60 IN A 192.0.2.99']);
  });
  it('a query stuck on a slow upstream does not hold up the next ones', async () => {
    const slow = udpQuery(server!.port, 'slow.test', 'A', { timeoutMs: 8000 });
    expect(await holdsWithin(() => up!.count('slow.test') > 0, 5000), 'the slow query reached the upstream').toBe(true);
    const fast = await udpQuery(server!.port, 'fast.test', 'A');
    expect(fast.ms).toBeLessThan(500);
    expect(fast.packet.rcode).toBe('NOERROR');
    // The only upstream is slow: CoreDNS tries it until its 5 s deadline, then SERVFAIL.
    const s = await slow;
    expect(['SERVFAIL', 'NOERROR']).toContain(s.packet.rcode);
  }, 15_000);
});

describe('upstream replies are unpacked strictly (miekg/dns Unpack)', () => {
  const head = (an: number, ns = 0, ar = 0): Buffer => Buffer.from([0x12, 0x34, 0x81, 0x80, 0, 1, 0, an, 0, ns, 0, ar]);
  const question = Buffer.concat([Buffer.from([3, 0x77, 0x77, 0x77, 4, 0x74, 0x65, 0x73, 0x74, 0]), Buffer.from([0, 1, 0, 1])]);
  const rr = (type: number, rdata: Buffer, owner = Buffer.from([0xc0, 0x0c])): Buffer => {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt16BE(type, 0);
    fixed.writeUInt16BE(1, 2);
    fixed.writeUInt32BE(60, 4);
    fixed.writeUInt16BE(rdata.length, 8);
    return Buffer.concat([owner, fixed, rdata]);
  };
  const msg = (...records: Buffer[]): Buffer => Buffer.concat([head(records.length), question, ...records]);
  const name = (...labels: string[]): Buffer =>
    Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const soaTail = Buffer.alloc(20);

  it.each([
    ['A of 4 bytes', msg(rr(1, Buffer.from([10, 0, 0, 1])))],
    ['AAAA of 16 bytes', msg(rr(28, Buffer.alloc(16)))],
    ['CNAME with a pointer into the question', msg(rr(5, Buffer.concat([Buffer.from([1, 0x61]), Buffer.from([0xc0, 0x10])])))],
    ['MX', msg(rr(15, Buffer.concat([Buffer.from([0, 10]), name('mx', 'test')])))],
    ['SRV', msg(rr(33, Buffer.concat([Buffer.alloc(6), name('t', 'test')])))],
    ['SOA', msg(rr(6, Buffer.concat([name('ns', 'test'), name('h', 'test'), soaTail])))],
    ['TXT of two strings', msg(rr(16, Buffer.from([1, 0x61, 2, 0x62, 0x63])))],
    ['an unknown type with any RDATA', msg(rr(65280, Buffer.from([1, 2, 3])))],
  ])('accepts %s', (_what, m) => {
    expect(malformed(m)).toBeUndefined();
  });

  it.each([
    ['A of 2 bytes', msg(rr(1, Buffer.from([10, 0]))), /answer record 1: A: RDATA of 2 bytes, not 4/],
    ['A of 5 bytes', msg(rr(1, Buffer.from([10, 0, 0, 1, 9]))), /RDATA of 5 bytes/],
    ['AAAA of 4 bytes', msg(rr(28, Buffer.from([10, 0, 0, 1]))), /AAAA: RDATA of 4 bytes, not 16/],
    ['a CNAME name running past its RDATA', msg(rr(5, Buffer.from([3, 0x61, 0x62]))), /name runs past its end/],
    ['a CNAME with bytes after its name', msg(rr(5, Buffer.concat([name('a'), Buffer.from([7])]))), /does not end where its RDLENGTH says/],
    ['a pointer loop (a pointer to itself)', msg(rr(5, Buffer.from([0xc0, 0x26]))), /compression pointers|name longer/],
    ['a pointer out of the message', msg(rr(5, Buffer.from([0xff, 0xff]))), /out of the message/],
    ['SOA without its 20 bytes', msg(rr(6, Buffer.concat([name('ns'), name('h'), Buffer.alloc(8)]))), /SOA/],
    ['TXT string longer than the RDATA', msg(rr(16, Buffer.from([5, 0x61]))), /TXT/],
    [
      'RDLENGTH past the end',
      Buffer.concat([head(1), question, Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 40, 1, 2])]),
      /RDLENGTH 40 runs past the end/,
    ],
    ['a record header cut short', Buffer.concat([head(1), question, Buffer.from([0xc0, 0x0c, 0, 1])]), /record header runs past the end/],
    ['a reserved label type', msg(rr(5, Buffer.from([0x80, 0]))), /reserved label type/],
  ])('refuses %s', (_what, m, err) => {
    expect(malformed(m)).toMatch(err);
  });
});
