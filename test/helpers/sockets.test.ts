// bindUdpTcp: one port number for UDP and TCP even when the first number's TCP side is taken
// (binding UDP on port 0, then TCP on its number, failed with EADDRINUSE).
import net from 'node:net';
import dgram from 'node:dgram';
import { afterAll, describe, expect, it } from 'vitest';
import { bindUdpTcp, type UdpTcpPair } from './sockets.js';

describe('bindUdpTcp', () => {
  const opened: { close(): unknown }[] = [];
  afterAll(async () => {
    for (const o of opened) await o.close();
  });

  it('skips a number whose TCP port another socket holds, and binds both on the next', async () => {
    // A TCP listener holds port P; UDP P is free. The old pattern (UDP on P, then TCP on P) fails.
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    opened.push({ close: () => new Promise<void>((r) => blocker.close(() => r())) });
    const taken = (blocker.address() as net.AddressInfo).port;

    const udp = dgram.createSocket('udp4');
    await new Promise<void>((r) => udp.bind(taken, '127.0.0.1', () => r()));
    const tcp = net.createServer();
    const err = await new Promise<NodeJS.ErrnoException>((r) => {
      tcp.once('error', r);
      tcp.listen(taken, '127.0.0.1');
    });
    expect(err.code).toBe('EADDRINUSE');
    await new Promise<void>((r) => udp.close(() => r()));

    const pair: UdpTcpPair = await bindUdpTcp('127.0.0.1', { tryFirst: [taken] });
    opened.push(pair);
    expect(pair.port).not.toBe(taken);
    expect((pair.tcp.address() as net.AddressInfo).port).toBe(pair.port);
    expect(pair.udp.address().port).toBe(pair.port);
  });

  it('a fixed port that is taken is an error, not a silent other port', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    opened.push({ close: () => new Promise<void>((r) => blocker.close(() => r())) });
    const taken = (blocker.address() as net.AddressInfo).port;
    await expect(bindUdpTcp('127.0.0.1', { port: taken })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
