// CoreDNS plugin/hosts/setup_test.go (TestHostsParse, TestHostsInlineParse), ported.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../helpers/setup.js';
import type { HostsConfig } from '../../src/plugins/hosts/setup.js';

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
    expect(c.errors.join('\n')).toMatch(/unknown property "10.0.0.1" \(inline entries must come before fallthrough\)/);
  });

  it('normalises fallthrough zones like the others', async () => {
    expect((await cfgOf('hosts {\n  fallthrough 10.0.0.0/8 Example.ORG\n}')).fallthrough).toEqual(['10.in-addr.arpa.', 'example.org.']);
  });

  it.each([
    ['hosts {\n  ttl\n}', /ttl needs a time in seconds/],
    ['hosts {\n  ttl 0\n}', /ttl "0" is invalid/],
    ['hosts {\n  ttl 65536\n}', /ttl "65536" is invalid/],
    ['hosts {\n  reload\n}', /reload needs a duration/],
    ['hosts {\n  reload 5\n}', /invalid duration for reload "5"/],
    ['hosts {\n  reload -1s\n}', /invalid negative duration for reload "-1s"/],
    ['hosts /etc/hosts bad..zone', /bad zone "bad..zone"/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});
