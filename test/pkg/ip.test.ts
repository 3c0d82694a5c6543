import { describe, it, expect } from 'vitest';
import { parseServerKey } from '../../src/chain/corefile-keys.js';
import { parseCorefile } from '../../src/chain/corefile.js';
import { cidrContains as transferCidrContains } from '../../src/plugins/transfer/config.js';
import { parseTransfer } from '../../src/plugins/transfer/setup.js';
import {
  canonicalIp,
  cidrContains,
  cidrNth,
  formatIp,
  ipToReverseName,
  isIPv4,
  isIPv6,
  parseCidr,
  parseIp,
  reverseNameToIp,
  zeroRun,
} from '../../src/pkg/ip.js';

describe('parseIp / formatIp', () => {
  it('parses IPv4 strictly', () => {
    expect(parseIp('10.96.0.10')).toEqual({ family: 4, bytes: new Uint8Array([10, 96, 0, 10]) });
    for (const bad of ['10.96.0', '10.96.0.256', '010.1.1.1', '1.2.3.4.5', '1.2.3.-4', ' 1.2.3.4', '', 'None', '1.2.3.4/32']) {
      expect(parseIp(bad), bad).toBeUndefined();
    }
  });

  it('parses IPv6 forms', () => {
    expect(parseIp('::')?.bytes).toEqual(new Uint8Array(16));
    expect(parseIp('::1')?.bytes[15]).toBe(1);
    expect(parseIp('fd00:10:96::a')?.family).toBe(6);
    expect(parseIp('::ffff:10.0.0.1')?.bytes.slice(10)).toEqual(new Uint8Array([0xff, 0xff, 10, 0, 0, 1]));
    for (const bad of ['1::2::3', ':1::', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7', 'g::1', '12345::', 'fe80::1%eth0', '1::2:']) {
      expect(parseIp(bad), bad).toBeUndefined();
    }
  });

  it('formats IPv6 per RFC 5952', () => {
    expect(canonicalIp('FD00:0010:0096:0000:0000:0000:0000:0100')).toBe('fd00:10:96::100');
    expect(canonicalIp('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1'); // first of equal runs
    expect(canonicalIp('2001:db8:0:1:1:1:1:1')).toBe('2001:db8:0:1:1:1:1:1'); // single zero group not compressed
    expect(canonicalIp('0:0:0:0:0:0:0:0')).toBe('::');
    expect(canonicalIp('2001:db8::')).toBe('2001:db8::');
    expect(canonicalIp('::ffff:0a00:0001')).toBe('::ffff:10.0.0.1');
    expect(canonicalIp('10.0.0.1')).toBe('10.0.0.1');
    expect(canonicalIp('nope')).toBeUndefined();
    expect(formatIp(new Uint8Array([192, 168, 0, 1]))).toBe('192.168.0.1');
  });

  it('tells families apart', () => {
    expect(isIPv4('10.0.0.1')).toBe(true);
    expect(isIPv4('::1')).toBe(false);
    expect(isIPv6('::1')).toBe(true);
    expect(isIPv6('x')).toBe(false);
  });
});

describe('zeroRun: the groups RFC 5952 writes as "::"', () => {
  it.each([
    [[1, 2, 3, 4, 5, 6, 7, 8], -1],
    [[1, 0, 3, 4, 5, 6, 7, 8], -1],
    [[0, 0, 0, 0, 0, 0, 0, 0], 0 * 16 + 8],
    [[1, 0, 0, 4, 0, 0, 0, 8], 4 * 16 + 3],
    [[1, 0, 0, 4, 0, 0, 7, 8], 1 * 16 + 2],
    [[0xfd00, 0, 0, 0, 0, 0, 0, 1], 1 * 16 + 6],
    [[1, 2, 3, 4, 5, 6, 0, 0], 6 * 16 + 2],
  ])('%j -> %i', (groups, run) => {
    expect(zeroRun(groups)).toBe(run);
  });
});

describe('reverse names', () => {
  it('builds in-addr.arpa names', () => {
    expect(ipToReverseName('10.96.0.10')).toBe('10.0.96.10.in-addr.arpa.');
  });

  it('builds ip6.arpa nibble names', () => {
    expect(ipToReverseName('fd00:10:96::100')).toBe('0.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.');
  });

  it('round trips IPv4 and IPv6', () => {
    for (const ip of [
      '10.96.0.10',
      '0.0.0.0',
      '255.255.255.255',
      '192.168.10.5',
      'fd00:10:96::100',
      '::1',
      '2001:db8::',
      '::ffff:10.0.0.1',
      '2001:db8:1:2:3:4:5:6',
    ]) {
      const name = ipToReverseName(ip);
      expect(reverseNameToIp(name), name).toBe(ip);
      expect(reverseNameToIp(name.toUpperCase().slice(0, -1)), 'case-insensitive, no trailing dot').toBe(ip);
    }
  });

  it('returns the canonical text', () => {
    expect(reverseNameToIp(ipToReverseName('FD00:0:0:0:0:0:0:1'))).toBe('fd00::1');
  });

  it('rejects partial and malformed names', () => {
    for (const bad of [
      '96.10.in-addr.arpa.',
      'in-addr.arpa.',
      '1.10.0.96.10.in-addr.arpa.',
      '300.0.96.10.in-addr.arpa.',
      '010.0.96.10.in-addr.arpa.',
      'a.0.96.10.in-addr.arpa.',
      '0.0.1.0.ip6.arpa.',
      '00.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.',
      'g.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa.',
      '10.0.96.10.example.com.',
    ]) {
      expect(reverseNameToIp(bad), bad).toBeUndefined();
    }
  });
});

describe('CIDRs', () => {
  it('parses and masks', () => {
    expect(parseCidr('10.96.0.0/12')?.text).toBe('10.96.0.0/12');
    expect(parseCidr('10.100.1.2/12')?.text).toBe('10.96.0.0/12');
    expect(parseCidr('fd00:10:96::/112')?.text).toBe('fd00:10:96::/112');
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('10.0.0.0')).toBeUndefined();
  });

  it('contains', () => {
    expect(cidrContains('10.96.0.0/12', '10.111.255.255')).toBe(true);
    expect(cidrContains('10.96.0.0/12', '10.112.0.0')).toBe(false);
    expect(cidrContains('10.96.0.0/12', 'fd00::1')).toBe(false);
    expect(cidrContains('fd00:10:96::/112', 'fd00:10:96::ffff')).toBe(true);
    expect(cidrContains('fd00:10:96::/112', 'fd00:10:96::1:0')).toBe(false);
    expect(cidrContains('0.0.0.0/0', '1.2.3.4')).toBe(true);
  });

  it('nth address', () => {
    expect(cidrNth('10.96.0.0/12', 10)).toBe('10.96.0.10');
    expect(cidrNth('10.96.0.0/12', 256 * 256)).toBe('10.97.0.0');
    expect(cidrNth('fd00:10:96::/112', 0x100)).toBe('fd00:10:96::100');
    expect(cidrNth('10.0.0.0/30', 4)).toBeUndefined();
    expect(cidrNth('10.0.0.0/30', -1)).toBeUndefined();
  });
});

// The Corefile's reverse keys and transfer's `to` networks use the same CIDR parser.
describe('CIDR users share pkg/ip', () => {
  it.each([
    ['10.0.0.0/8', ['10.in-addr.arpa.']],
    ['10.0.0.0/024', ['0.0.10.in-addr.arpa.']],
    ['10.1.2.3/16', ['1.10.in-addr.arpa.']],
    ['10.0.0.0/15', ['0.10.in-addr.arpa.', '1.10.in-addr.arpa.']],
    ['fd00::/15', ['0.0.d.f.ip6.arpa.', '1.0.d.f.ip6.arpa.']],
  ])('server key %s', (key, zones) => {
    expect(parseServerKey(key).map((k) => k.zone)).toEqual(zones);
  });
  it('a key off the boundary keeps its network', () => {
    expect(parseServerKey('10.0.0.128/25:53')[0]).toMatchObject({ network: '10.0.0.128/25', port: 53 });
  });
  it.each(['10.0.0.0/33', '10.0.0/8', '010.0.0.0/8', 'fd00::/129', '1::2::3/64'])('rejects server key %s', (key) => {
    expect(() => parseServerKey(key)).toThrow(/not a valid CIDR/);
  });
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/08', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['10.0.0.0/8', 'fd00::1', false],
    ['fd00::/8', 'fdff::1', true],
    ['fd00::/9', 'fd80::1', false],
  ])('transfer to %s contains %s: %s', async (net, ip, inside) => {
    const stanza = parseTransfer(parseCorefile(`. {\n transfer {\n  to ${net}\n }\n}\n`, 'Corefile')[0]!.directives[0]!, ['.']);
    const target = stanza.to[0]!;
    expect(target.kind).toBe('cidr');
    expect(target.kind === 'cidr' && transferCidrContains(target, ip)).toBe(inside);
  });
});
