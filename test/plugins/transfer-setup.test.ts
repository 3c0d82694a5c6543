// CoreDNS plugin/transfer/setup_test.go, ported: several transfer stanzas per block, `to` and
// `source`, and the errors.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../helpers/setup.js';
import type { TransferConfig } from '../../src/plugins/transfer/setup.js';

const stanzasOf = async (body: string, key = '.') => (await setupPlugin<{ cfg: TransferConfig }>(body, 'transfer', { key })).cfg.stanzas;

describe('transfer setup (CoreDNS setup_test.go)', () => {
  it('accepts two stanzas with to and source', async () => {
    const s = await stanzasOf([
      'transfer example.net example.org {',
      '  to 1.2.3.4 5.6.7.8:1053 [1::2]:34 [fe80::1%eth0]:53',
      '  source 2001:db8::53',
      '}',
      'transfer example.com example.edu {',
      '  to * 1.2.3.4',
      '}',
    ].join('\n'));
    expect(s.map((x) => x.zones)).toEqual([['example.net.', 'example.org.'], ['example.com.', 'example.edu.']]);
    expect(s[0]!.to).toHaveLength(4);
    expect(s[0]!.source).toBe('2001:db8::53');
    expect(s[1]!.to.map((t) => t.kind)).toEqual(['any', 'ip']);
  });

  it('takes the server block zones without arguments', async () => {
    const s = await stanzasOf('transfer {\n  to 1.2.3.4 5.6.7.8:1053 [1::2]:34\n}');
    expect(s.map((x) => x.zones)).toEqual([['.']]);
  });

  it('normalises a CIDR zone to its reverse zone, as OriginsFromArgsOrServerBlock', async () => {
    const s = await stanzasOf('transfer 10.0.0.0/8 {\n  to *\n}');
    expect(s[0]!.zones).toEqual(['10.in-addr.arpa.']);
  });

  it.each([
    ['transfer example.net example.org {\n}', /'to' is required/],
    ['transfer example.net example.org {\n  invalid option\n}', /unknown property "invalid"/],
    ['transfer example.net example.org {\n  to 1.2.3.4\n  source example.org\n}', /invalid source address "example.org"/],
    ['transfer example.net example.org {\n  to 1.2.3.4\n  source 192.0.2.53\n  source 2001:db8::53\n}', /source already specified/],
    ['transfer example.com example.edu {\n  to example.com 1.2.3.4\n}', /"example.com" in to is not an IP address/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});
