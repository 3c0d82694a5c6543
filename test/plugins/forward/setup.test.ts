// CoreDNS plugin/forward/setup_test.go (TestSetup), ported, plus what the audit added: several
// forward lines per block, next / next_on_nodata, read_timeout and max_age. The behaviour tests
// run the real server against a scripted upstream on loopback.
import { describe, it, expect, afterEach } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Rcode } from '../../../src/dns/records.js';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { TestDns, tmpDir, udpQuery } from '../../fixtures/forward/upstreams.js';
import type { ForwardConfig } from '../../../src/plugins/forward/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: ForwardConfig }>(body, 'forward')).cfg;
const rejected = async (body: string) => (await setupBlock(body)).errors.join('\n');

describe('forward setup (CoreDNS TestSetup)', () => {
  it.each([
    ['forward . 127.0.0.1', '.', 2],
    ['forward . 127.0.0.1 {\n  health_check 0.5s domain example.org\n}', '.', 2],
    ['forward . 127.0.0.1 {\n  except miek.nl\n}', '.', 2],
    ['forward . 127.0.0.1 {\n  max_fails 3\n}', '.', 3],
    ['forward . 127.0.0.1 {\n  force_tcp\n}', '.', 2],
    ['forward . 127.0.0.1 {\n  prefer_udp\n}', '.', 2],
    ['forward . 127.0.0.1 {\n  force_tcp\n  prefer_udp\n}', '.', 2],
    ['forward . 127.0.0.1:53', '.', 2],
    ['forward . 127.0.0.1:8080', '.', 2],
    ['forward . [::1]:53', '.', 2],
    ['forward . [2003::1]:53', '.', 2],
    ['forward 10.9.3.0/18 127.0.0.1', '0.9.10.in-addr.arpa.', 2],
  ])('accepts %j', async (body, from, maxFails) => {
    const c = await cfgOf(body);
    expect([c.from, c.maxFails]).toEqual([from, maxFails]);
  });

  it('reads the health check domain and the flags', async () => {
    expect((await cfgOf('forward . 127.0.0.1 {\n  health_check 0.5s domain example.org\n}')).healthCheckDomain).toBe('example.org.');
    const c = await cfgOf('forward . 127.0.0.1 {\n  force_tcp\n  prefer_udp\n}');
    expect([c.forceTcp, c.preferUdp]).toEqual([true, true]);
  });

  it('accepts two forward lines in a block, as CoreDNS 1.14', async () => {
    const r = await setupBlock('forward . ::1\nforward com ::2');
    expect(r.errors).toEqual([]);
    const chain = r.plugins.find((p) => p.name === 'forward') as unknown as { members: { cfg: ForwardConfig }[] };
    expect(chain.members.map((m) => m.cfg.from)).toEqual(['.', 'com.']);
  });

  it.each([
    // DNS over HTTPS is not implemented; CoreDNS 1.14.5 and later accept these two.
    ['forward . https://127.0.0.1', /'https' \(DNS over HTTPS\) is not supported as a destination protocol/],
    ['forward . https://1.1.1.1/', /'https' \(DNS over HTTPS\) is not supported/],
    ['forward . a27.0.0.1', /"a27.0.0.1" is not an IP address or a readable file/],
    ['forward . 127.0.0.1 {\n  blaatl\n}', /unknown forward option "blaatl"/],
    ['forward . 127.0.0.1 {\n  health_check 0.5s domain\n}', /health_check: missing FQDN after domain/],
    [`forward ${'x'.repeat(64)} 127.0.0.1`, /longer than 63 characters/],
    ['forward . 127.0.0.1 {\n  read_timeout 0s\n}', /read_timeout: "0s" must be more than 0/],
    ['forward . 127.0.0.1 {\n  max_age 5s\n}', /max_age: "5s" must not be less than expire/],
    ['forward . 127.0.0.1 {\n  max_age -1s\n}', /max_age: "-1s" must not be negative/],
    ['forward . 127.0.0.1 {\n  next_on_nodata x\n}', /next_on_nodata takes no arguments/],
    ['forward . 127.0.0.1 {\n  next BOGUS\n}', /unknown RCODE "BOGUS"/],
    ['forward . 127.0.0.1 {\n  source_address 127.0.0.1\n}', /source_address is not supported/],
  ])('rejects %j', async (body, reason) => {
    expect(await rejected(body)).toMatch(reason);
  });

  it('reads read_timeout, max_age, next and next_on_nodata', async () => {
    const c = await cfgOf('forward . 127.0.0.1 {\n  read_timeout 300ms\n  max_age 1m\n  next NXDOMAIN SERVFAIL\n  next_on_nodata\n}');
    expect([c.readTimeoutMs, c.next, c.nextOnNodata]).toEqual([300, [Rcode.NXDOMAIN, Rcode.SERVFAIL], true]);
  });
});

describe('forward lines and next, on a real server', () => {
  let server: RunningServer | undefined;
  const ups: TestDns[] = [];
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    for (const u of ups.splice(0)) await u.stop();
  });

  async function run(corefile: string): Promise<RunningServer> {
    const dir = tmpDir('clusterdns-fwd-setup-');
    const conf = path.join(dir, 'Corefile');
    fs.writeFileSync(conf, corefile);
    server = await startServer(['--conf', conf], { timeoutMs: 30_000 });
    return server;
  }

  it('a second forward line serves what the first does not, and next hands NXDOMAIN on', async () => {
    const first = await new TestDns(({ name }) =>
      name.toLowerCase().startsWith('gone') ? { rcode: 3 } : { answers: [{ name, type: 'A', ttl: 60, data: '192.0.2.1' }] },
    ).start();
    const second = await new TestDns(({ name }) => ({ answers: [{ name, type: 'A', ttl: 60, data: '192.0.2.2' }] })).start();
    ups.push(first, second);
    const s = await run(`. {
  forward a.test 127.0.0.1:${first.port} {
    next NXDOMAIN
  }
  forward b.test 127.0.0.1:${second.port}
}
`);
    const a = await udpQuery(s.port, 'x.a.test', 'A');
    const b = await udpQuery(s.port, 'x.b.test', 'A');
    expect(a.packet.answers?.[0]?.data).toBe('192.0.2.1');
    expect(b.packet.answers?.[0]?.data).toBe('192.0.2.2');
    // NXDOMAIN from the first upstream goes to the next plugin; b.test's forward does not take
    // gone.a.test and nothing follows, so the chain ends in SERVFAIL (without `next`: NXDOMAIN).
    const gone = await udpQuery(s.port, 'gone.a.test', 'A');
    expect(gone.packet.rcode).toBe('SERVFAIL');
    expect(first.count('gone.a.test')).toBeGreaterThan(0);
  }, 30_000);
});

describe('forward option tables (CoreDNS TestSetupMaxConcurrent ... TestSetupReadTimeout, policy)', () => {
  it.each([
    ['policy random', (c: ForwardConfig) => c.policy, 'random'],
    ['policy round_robin', (c: ForwardConfig) => c.policy, 'round_robin'],
    ['policy sequential', (c: ForwardConfig) => c.policy, 'sequential'],
    ['max_concurrent 1000', (c: ForwardConfig) => c.maxConcurrent, 1000],
    ['max_connect_attempts 0', (c: ForwardConfig) => c.maxConnectAttempts, 0],
    ['max_connect_attempts 5', (c: ForwardConfig) => c.maxConnectAttempts, 5],
    ['max_idle_conns 10', () => true, true],
    ['max_idle_conns 0', () => true, true],
    ['health_check 0.5s', (c: ForwardConfig) => [c.healthCheckRd, c.healthCheckDomain], [true, '.']],
    ['health_check 0.5s no_rec', (c: ForwardConfig) => [c.healthCheckRd, c.healthCheckDomain], [false, '.']],
    ['health_check 0.5s no_rec domain example.org', (c: ForwardConfig) => [c.healthCheckRd, c.healthCheckDomain], [false, 'example.org.']],
    ['health_check 0.5s domain .', (c: ForwardConfig) => c.healthCheckDomain, '.'],
    ['health_check 0.5s domain example.org.', (c: ForwardConfig) => c.healthCheckDomain, 'example.org.'],
    ['next NXDOMAIN SERVFAIL REFUSED', (c: ForwardConfig) => c.next, [Rcode.NXDOMAIN, Rcode.SERVFAIL, Rcode.REFUSED]],
    ['failfast_all_unhealthy_upstreams', (c: ForwardConfig) => c.failfastAllUnhealthy, true],
    ['max_age 30s', () => true, true],
    ['expire 10s\n  max_age 10s', () => true, true],
    ['read_timeout 5s', (c: ForwardConfig) => c.readTimeoutMs, 5000],
    ['read_timeout 500ms', (c: ForwardConfig) => c.readTimeoutMs, 500],
  ])('accepts %j', async (opt, get, want) => {
    expect(get(await cfgOf(`forward . 127.0.0.1 {\n  ${opt}\n}`))).toEqual(want);
  });

  it.each([
    ['policy random2', /policy "random2" is not one of random, round_robin or sequential/],
    ['max_concurrent many', /value "many" is not an integer/],
    ['max_concurrent -4', /value must be at least 0: -4/],
    ['max_connect_attempts many', /value "many" is not an integer/],
    ['max_idle_conns -1', /value must be at least 0: -1/],
    ['health_check no_rec', /"no_rec" is not a duration/],
    ['health_check domain example.org', /"domain" is not a duration/],
    ['health_check 0.5s rec', /health_check: unknown option "rec"; write no_rec or domain FQDN/],
    ['health_check 0.5s domain example..org', /health_check: invalid domain name "example..org"/],
    ['failfast_all_unhealthy_upstreams false', /failfast_all_unhealthy_upstreams takes no arguments/],
  ])('rejects %j', async (opt, reason) => {
    expect(await rejected(`forward . 127.0.0.1 {\n  ${opt}\n}`)).toMatch(reason);
  });
});

describe('forward setup errors, word for word', () => {
  // Every message of forward/setup.ts that the tables above match only in part or not at all.
  const usage = (n: number) =>
    `forward: wrong number of arguments: ${n} given, at least 2 expected; usage \`forward FROM TO...\`, e.g. \`forward . 127.0.0.1:1053\``;
  it.each([
    ['forward', `2: ${usage(0)}`],
    ['forward .', `2: ${usage(1)}`],
    [
      'forward . 127.0.0.1 {\n  except\n}',
      '3: forward except: wrong number of arguments: 0 given, at least 1 expected; usage `except DOMAIN...`, e.g. `except internal.example.org`',
    ],
    [
      'forward . 127.0.0.1 {\n  except bad..name\n}',
      `3: forward except: bad name "bad..name": zone in key 'bad..name' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)`,
    ],
    ['forward . 127.0.0.1 {\n  expire\n}', '3: forward expire: wrong number of arguments: 0 given, 1 expected; usage `expire DURATION`, e.g. `expire 10s`'],
    ['forward . 127.0.0.1 {\n  expire 5\n}', '3: forward expire: "5" is not a duration; write e.g. 500ms, 5s or 1m'],
    [
      'forward . 127.0.0.1 {\n  read_timeout\n}',
      '3: forward read_timeout: wrong number of arguments: 0 given, 1 expected; usage `read_timeout DURATION`, e.g. `read_timeout 2s`',
    ],
    [
      'forward . 127.0.0.1 {\n  max_age 1m 2m\n}',
      '3: forward max_age: wrong number of arguments: 2 given, 1 expected; usage `max_age DURATION`, e.g. `max_age 10s`',
    ],
    ['forward . 127.0.0.1 {\n  max_fails\n}', '3: forward max_fails: wrong number of arguments: 0 given, 1 expected; usage `max_fails INTEGER`'],
    ['forward . 127.0.0.1 {\n  max_fails x\n}', '3: forward max_fails: value "x" is not an integer'],
    ['forward . 127.0.0.1 {\n  max_concurrent\n}', '3: forward max_concurrent: wrong number of arguments: 0 given, 1 expected; usage `max_concurrent MAX`'],
    [
      'forward . 127.0.0.1 {\n  max_connect_attempts\n}',
      '3: forward max_connect_attempts: wrong number of arguments: 0 given, 1 expected; usage `max_connect_attempts INTEGER`',
    ],
    [
      'forward . 127.0.0.1 {\n  max_idle_conns 1 2\n}',
      '3: forward max_idle_conns: wrong number of arguments: 2 given, 1 expected; usage `max_idle_conns INTEGER`',
    ],
    ['forward . 127.0.0.1 {\n  force_tcp yes\n}', '3: forward force_tcp takes no arguments, got "yes"'],
    ['forward . 127.0.0.1 {\n  prefer_udp yes\n}', '3: forward prefer_udp takes no arguments, got "yes"'],
    [
      'forward . 127.0.0.1 {\n  health_check\n}',
      '3: forward health_check: wrong number of arguments: 0 given, 1 to 4 expected; usage `health_check DURATION [no_rec] [domain FQDN]`, e.g. `health_check 5s no_rec`',
    ],
    ['forward . 127.0.0.1 {\n  policy\n}', '3: forward policy: wrong number of arguments: 0 given, 1 expected; usage `policy random|round_robin|sequential`'],
    [
      'forward . 127.0.0.1 {\n  failover\n}',
      '3: forward failover: wrong number of arguments: 0 given, at least 1 expected; usage `failover RCODE...`, e.g. `failover SERVFAIL`',
    ],
    [
      'forward . 127.0.0.1 {\n  next\n}',
      '3: forward next: wrong number of arguments: 0 given, at least 1 expected; usage `next RCODE...`, e.g. `next SERVFAIL`',
    ],
    ['forward . 127.0.0.1 {\n  failover NOERROR\n}', '3: forward failover: NOERROR cannot be used'],
    ['forward . 127.0.0.1 {\n  failover NOPE\n}', '3: forward failover: unknown RCODE "NOPE"; write e.g. SERVFAIL or REFUSED'],
    [
      'forward . 127.0.0.1 {\n  source_address 127.0.0.1\n}',
      '3: forward source_address is not supported: upstream queries leave from the address the system picks',
    ],
    ['forward . 127.0.0.1 {\n  max_age 5s\n}', '3: forward max_age: "5s" must not be less than expire'],
    ['forward . 127.0.0.1 {\n  read_timeout 0s\n}', '3: forward read_timeout: "0s" must be more than 0; write e.g. 500ms or 2s'],
    ['forward . 127.0.0.1 {\n  expire -1s\n}', '3: forward expire: "-1s" must not be negative'],
    [
      'forward . https://127.0.0.1',
      "2: forward: 'https' (DNS over HTTPS) is not supported as a destination protocol by clusterdns (https://127.0.0.1); use tls:// (DNS over TLS) or dns://",
    ],
    [
      'forward . 127.0.0.1 {\n  bogus\n}',
      '3: unknown forward option "bogus"; valid options: except, force_tcp, prefer_udp, expire, max_fails, health_check, policy, ' +
        'max_concurrent, max_connect_attempts, failfast_all_unhealthy_upstreams, failover, next, next_on_nodata, max_idle_conns, max_age, tls, tls_servername, read_timeout',
    ],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('rejects more than 15 TOs, counted after resolv.conf files are read', async () => {
    const tos = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 1}`).join(' ');
    expect((await setupBlock(`forward . ${tos}`)).errors).toEqual(['2: forward: more than 15 TOs configured: 16']);
    expect((await cfgOf(`forward . ${tos.split(' ').slice(0, 15).join(' ')}`)).upstreams).toHaveLength(15);
  });

  it('rejects a resolv.conf without nameservers, and one that cannot be read', async () => {
    const dir = tmpDir('clusterdns-fwd-setup-');
    const file = path.join(dir, 'resolv.conf');
    fs.writeFileSync(file, 'search example.org\n# no nameserver line\n');
    expect((await setupBlock(`forward . ${file}`)).errors).toEqual([`2: forward: no nameservers found in ${file}`]);
    fs.writeFileSync(file, 'nameserver 192.0.2.53\n');
    expect((await cfgOf(`forward . ${file}`)).upstreams.map((u) => u.label)).toEqual(['192.0.2.53:53']);
    // Relative to the Corefile's directory: the working directory for a Corefile given as text.
    const gone = path.resolve('no-such-resolv.conf');
    expect((await setupBlock('forward . no-such-resolv.conf')).errors).toEqual([
      `2: forward: "no-such-resolv.conf" is not an IP address or a readable file (ENOENT: no such file or directory, open '${gone}')`,
    ]);
  });
});
