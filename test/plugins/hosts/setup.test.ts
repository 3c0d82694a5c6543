// CoreDNS plugin/hosts/setup_test.go (TestHostsParse, TestHostsInlineParse), ported.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { HostsConfig } from '../../../src/plugins/hosts/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: HostsConfig }>(body, 'hosts')).cfg;

describe('hosts setup (CoreDNS setup_test.go)', () => {
  it.each([
    ['hosts', '/etc/hosts', ['.'], undefined],
    ['hosts /tmp', '/tmp', ['.'], undefined],
    ['hosts /etc/hosts miek.nl.', '/etc/hosts', ['miek.nl.'], undefined],
    ['hosts /etc/hosts miek.nl. pun.gent.', '/etc/hosts', ['miek.nl.', 'pun.gent.'], undefined],
    ['hosts {\n  fallthrough\n}', '/etc/hosts', ['.'], []],
    ['hosts /tmp {\n  fallthrough\n}', '/tmp', ['.'], []],
    ['hosts /etc/hosts miek.nl. {\n  fallthrough\n}', '/etc/hosts', ['miek.nl.'], []],
    ['hosts /etc/hosts miek.nl 10.0.0.9/8 {\n  fallthrough\n}', '/etc/hosts', ['miek.nl.', '10.in-addr.arpa.'], []],
  ])('accepts %j', async (body, file, origins, fallthrough) => {
    const cfg = await cfgOf(body);
    expect([cfg.path, cfg.origins, cfg.fallthrough]).toEqual([file, origins, fallthrough]);
  });

  it('rejects two hosts lines in a block', async () => {
    expect((await setupBlock('hosts /etc/hosts {\n  fallthrough\n}\nhosts /etc/hosts {\n  fallthrough\n}')).errors.join('\n')).toMatch(/appears twice/);
  });

  it('reads inline entries before fallthrough (TestHostsInlineParse)', async () => {
    const a = await cfgOf('hosts highly_unlikely_to_exist_hosts_file example.org {\n  10.0.0.1 example.org\n  fallthrough\n}');
    expect([a.inline, a.fallthrough]).toEqual([['10.0.0.1 example.org'], []]);
    const b = await cfgOf('hosts highly_unlikely_to_exist_hosts_file example.org {\n  10.0.0.1 example.org\n}');
    expect([b.inline, b.fallthrough]).toEqual([['10.0.0.1 example.org'], undefined]);
    const c = await setupBlock('hosts highly_unlikely_to_exist_hosts_file example.org {\n  fallthrough\n  10.0.0.1 example.org\n}');
    expect(c.errors.join('\n')).toMatch(
      /unknown hosts option "10.0.0.1"; valid options: ttl, no_reverse, reload, fallthrough; or a hosts entry `IP NAME...` before fallthrough/,
    );
  });

  it('normalises fallthrough zones like the others', async () => {
    expect((await cfgOf('hosts {\n  fallthrough 10.0.0.0/8 Example.ORG\n}')).fallthrough).toEqual(['10.in-addr.arpa.', 'example.org.']);
  });

  it.each([
    ['hosts {\n  ttl\n}', /hosts ttl: wrong number of arguments: 0 given, 1 expected; usage `ttl SECONDS`/],
    ['hosts {\n  ttl 0\n}', /hosts ttl: ttl must be in range \[1, 65535\]: 0/],
    ['hosts {\n  ttl 65536\n}', /hosts ttl: ttl must be in range \[1, 65535\]: 65536/],
    ['hosts {\n  reload\n}', /hosts reload: wrong number of arguments: 0 given, 1 expected; usage `reload DURATION`/],
    ['hosts {\n  reload 5\n}', /hosts reload: "5" is not a duration/],
    ['hosts {\n  reload -1s\n}', /hosts reload: "-1s" must not be negative/],
    ['hosts /etc/hosts bad..zone', /bad zone "bad..zone"/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});

describe('hosts setup errors, word for word', () => {
  // Every message of hosts/setup.ts that the tables above match only in part or not at all.
  const options = 'ttl, no_reverse, reload, fallthrough';
  const entry = 'or a hosts entry `IP NAME...` before fallthrough';
  it.each([
    ['hosts {\n  ttl 1 2\n}', '3: hosts ttl: wrong number of arguments: 2 given, 1 expected; usage `ttl SECONDS`, e.g. `ttl 3600`'],
    ['hosts {\n  ttl 1h\n}', '3: hosts ttl: ttl "1h" is not an integer'],
    ['hosts {\n  no_reverse 1\n}', '3: hosts no_reverse takes no arguments, got "1"'],
    ['hosts {\n  reload\n}', '3: hosts reload: wrong number of arguments: 0 given, 1 expected; usage `reload DURATION`, e.g. `reload 10s`'],
    ['hosts {\n  reload soon\n}', '3: hosts reload: "soon" is not a duration; write e.g. 300ms, 5s or 0 to disable'],
    ['hosts {\n  reload -1s\n}', '3: hosts reload: "-1s" must not be negative'],
    ['hosts {\n  fallthrough\n  ttl2 5\n}', `4: unknown hosts option "ttl2" (did you mean ttl?); valid options: ${options}; ${entry}`],
    ['hosts {\n  10.0.0.1\n}', `3: unknown hosts option "10.0.0.1"; valid options: ${options}; ${entry}`],
    ['hosts {\n  tll 10\n}', `3: unknown hosts option "tll" (did you mean ttl?); valid options: ${options}; ${entry}`],
    ['hosts {\n  10.0.0.1 a.example {\n    x\n  }\n}', '3: hosts 10.0.0.1 takes no option block'],
    ['hosts /etc/hosts/x', `2: hosts: unable to access hosts file "/etc/hosts/x": ENOTDIR: not a directory, stat '/etc/hosts/x'`],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('accepts a missing hosts file (it may appear later), no_reverse, reload 0 and the TTL bounds', async () => {
    const cfg = await cfgOf('hosts /nonexistent/hosts {\n  ttl 65535\n  no_reverse\n  reload 0\n}');
    expect([cfg.path, cfg.ttl, cfg.autoReverse, cfg.reloadMs]).toEqual(['/nonexistent/hosts', 65535, false, 0]);
    expect((await cfgOf('hosts {\n  ttl 1\n}')).ttl).toBe(1);
    expect((await cfgOf('hosts {\n  fe80::1%eth0 link.example\n}')).inline).toEqual(['fe80::1%eth0 link.example']);
  });
});
