// CoreDNS plugin/transfer/setup_test.go, ported: several transfer stanzas per block, `to` and
// `source`, and the errors.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import { cidrContains, type TransferConfig } from '../../../src/plugins/transfer/config.js';

const stanzasOf = async (body: string, key = '.') => (await setupPlugin<{ cfg: TransferConfig }>(body, 'transfer', { key })).cfg.stanzas;

describe('transfer setup (CoreDNS setup_test.go)', () => {
  it('accepts two stanzas with to and source', async () => {
    const s = await stanzasOf(
      [
        'transfer example.net example.org {',
        '  to 1.2.3.4 5.6.7.8:1053 [1::2]:34 [fe80::1%eth0]:53',
        '  source 2001:db8::53',
        '}',
        'transfer example.com example.edu {',
        '  to * 1.2.3.4',
        '}',
      ].join('\n'),
    );
    expect(s.map((x) => x.zones)).toEqual([
      ['example.net.', 'example.org.'],
      ['example.com.', 'example.edu.'],
    ]);
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
    ['transfer example.net example.org {\n  invalid option\n}', /unknown transfer option "invalid"; valid options: to, source/],
    ['transfer example.net example.org {\n  to 1.2.3.4\n  source example.org\n}', /transfer source: "example.org" is not an IP address/],
    ['transfer example.net example.org {\n  to 1.2.3.4\n  source 192.0.2.53\n  source 2001:db8::53\n}', /source already specified/],
    ['transfer example.com example.edu {\n  to example.com 1.2.3.4\n}', /transfer to: "example.com" is not an IP address/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});

describe('transfer setup errors, word for word', () => {
  // Every message of transfer/setup.ts that the table above matches only in part or not at all.
  it.each([
    ['transfer', "2: transfer: 'to' is required, e.g. transfer { to * } or transfer { to 10.0.0.2 }"],
    ['transfer {\n  to\n}', '3: transfer to: wrong number of arguments: 0 given, at least 1 expected; usage `to ADDRESS...`, e.g. `to 10.0.0.2 192.0.2.0/24`'],
    ['transfer {\n  to 10.0.0.0/33\n}', '3: transfer to: "10.0.0.0/33" is not a valid CIDR network'],
    ['transfer {\n  to 10.0.0.0/x\n}', '3: transfer to: "10.0.0.0/x" is not a valid CIDR network'],
    ['transfer {\n  to 1.2.3.4 host.example\n}', '3: transfer to: "host.example" is not an IP address, IP:port, CIDR network or *'],
    [
      'transfer {\n  to 1.2.3.4\n  source\n}',
      '4: transfer source: wrong number of arguments: 0 given, 1 expected; usage `source ADDRESS`, e.g. `source 10.0.0.1`',
    ],
    [
      'transfer {\n  to 1.2.3.4\n  source 192.0.2.1 192.0.2.2\n}',
      '4: transfer source: wrong number of arguments: 2 given, 1 expected; usage `source ADDRESS`, e.g. `source 10.0.0.1`',
    ],
    ['transfer {\n  to 1.2.3.4\n  source 192.0.2.1\n  source 192.0.2.2\n}', '5: transfer source: source already specified'],
    ['transfer {\n  to 1.2.3.4\n  source ns.example\n}', '4: transfer source: "ns.example" is not an IP address'],
    ['transfer {\n  from 1.2.3.4\n}', '3: unknown transfer option "from"; valid options: to, source'],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('reads a CIDR with a zero-padded prefix length, as Go does', async () => {
    const [net] = (await stanzasOf('transfer {\n  to 10.0.0.0/08\n}'))[0]!.to;
    if (net?.kind !== 'cidr') throw new Error(`expected a CIDR target, got ${JSON.stringify(net)}`);
    expect([cidrContains(net, '10.255.0.1'), cidrContains(net, '11.0.0.1')]).toEqual([true, false]);
  });
});
