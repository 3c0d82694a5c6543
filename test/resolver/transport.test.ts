// The network runner: UDP to a loopback server, TCP retry when truncated, timeouts.
import { describe, it, expect, afterAll } from 'vitest';
import type { Socket } from 'node:net';
import dnsPacket from 'dns-packet';
import { networkSend, parseHostPort } from '../../src/resolver/transport.js';
import { resolveStub } from '../../src/resolver/stub.js';
import { parseResolvConf } from '../../src/pkg/resolvconf.js';
import { bindUdpTcp, type UdpTcpPair } from '../helpers/sockets.js';

function reply(msg: Buffer, truncated: boolean): Buffer {
  const q = dnsPacket.decode(msg);
  const name = q.questions![0]!.name;
  const type = q.questions![0]!.type;
  if (name === 'silent.test') return Buffer.alloc(0);
  const found = name === 'web.a.test' || name === 'big.test';
  return dnsPacket.encode({
    id: q.id,
    type: 'response',
    flags: dnsPacket.AUTHORITATIVE_ANSWER | (truncated && name === 'big.test' ? dnsPacket.TRUNCATED_RESPONSE : 0) | (found ? 0 : 3),
    questions: q.questions,
    answers:
      found && type === 'A' && !(truncated && name === 'big.test')
        ? [{ name, type: 'A', class: 'IN', ttl: 30, data: name === 'big.test' ? '10.0.0.9' : '10.0.0.1' }]
        : [],
  });
}

describe('networkSend', () => {
  let pair: UdpTcpPair | undefined;
  afterAll(async () => {
    await pair?.close();
  });

  it('UDP, TCP when truncated, and a timeout for a silent server', async () => {
    // UDP and TCP on one port number, retried until both bind (a TCP port taken by another
    // process is not an error of the code under test).
    pair = await bindUdpTcp('127.0.0.1', {
      onConnection: (sock: Socket) => {
        sock.on('data', (d) => {
          const out = reply(d.subarray(2), false);
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          sock.end(Buffer.concat([len, out]));
        });
      },
    });
    const { udp, port } = pair;
    udp.on('message', (msg, rinfo) => {
      const out = reply(msg, true);
      if (out.length > 0) udp.send(out, rinfo.port, rinfo.address);
    });
    const send = networkSend({ timeoutMs: 300 });
    const server = `127.0.0.1:${port}`;
    expect(await send('web.a.test.', 'A', server)).toMatchObject({ rcode: 'NOERROR', answers: ['A 10.0.0.1'] });
    expect(await send('nope.test.', 'A', server)).toMatchObject({ rcode: 'NXDOMAIN', answers: [] });
    expect(await send('big.test.', 'A', server)).toMatchObject({ rcode: 'NOERROR', answers: ['A 10.0.0.9'] });
    expect(await send('silent.test.', 'A', server)).toMatchObject({ timeout: true });
    const t = await resolveStub('web', { libc: 'glibc', conf: { ...parseResolvConf('search a.test\n', 'glibc'), nameservers: [server] }, send, type: 'A' });
    expect(t.queries.map((q) => `${q.name} ${q.server} ${q.rcode}`)).toEqual([`web.a.test. ${server} NOERROR`]);
  });

  it('parses HOST:PORT', () => {
    expect(parseHostPort('127.0.0.1:1053')).toEqual({ host: '127.0.0.1', port: 1053 });
    expect(parseHostPort('[::1]:53')).toEqual({ host: '::1', port: 53 });
    expect(parseHostPort('10.0.0.1')).toEqual({ host: '10.0.0.1', port: 53 });
    expect(parseHostPort('dns.example')).toEqual({ host: 'dns.example', port: 53 });
    expect(() => parseHostPort('10.0.0.1:0x35')).toThrow('invalid port in "10.0.0.1:0x35"; use HOST:PORT');
    expect(() => parseHostPort(':53')).toThrow('invalid server ":53"; use HOST:PORT, [IPV6]:PORT, or a host name or IP address');
    expect(() => parseHostPort('1.2.3.4:53:53')).toThrow(/invalid server/);
  });
});
