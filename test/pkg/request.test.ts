import { describe, expect, it } from 'vitest';
import { clientFamily, clientIp, doBit, requestSize } from '../../src/chain/request.js';
import { addressFamily, plainAddress } from '../../src/pkg/ip.js';

const req = (address: string, protocol: 'udp' | 'tcp' = 'udp', edns?: { udpSize: number; do: boolean }) => ({
  client: { address, port: 53 },
  protocol,
  ...(edns ? { edns } : {}),
});

// CoreDNS request.Request: IP, Family, Do, Size.
describe('request helpers', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1', 1],
    ['::ffff:10.0.0.1', '10.0.0.1', 1],
    ['::FFFF:10.0.0.1', '10.0.0.1', 1],
    ['::ffff:a00:1', '::ffff:a00:1', 2],
    ['fd00::1', 'fd00::1', 2],
    ['::1', '::1', 2],
  ])('client %s -> %s, family %d', (address, ip, family) => {
    expect(clientIp(req(address))).toBe(ip);
    expect(clientFamily(req(address))).toBe(family);
    expect(plainAddress(address)).toBe(ip);
    expect(addressFamily(address)).toBe(family);
  });
  it.each([
    ['udp', undefined, 512, false],
    ['udp', { udpSize: 100, do: false }, 512, false],
    ['udp', { udpSize: 1232, do: true }, 1232, true],
    ['udp', { udpSize: 4096, do: false }, 4096, false],
    ['tcp', undefined, 65535, false],
    ['tcp', { udpSize: 1232, do: true }, 65535, true],
  ] as const)('%s %j -> size %d, do %s', (protocol, edns, size, d) => {
    const r = req('10.0.0.1', protocol, edns);
    expect(requestSize(r)).toBe(size);
    expect(doBit(r)).toBe(d);
  });
});
