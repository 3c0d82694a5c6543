// One UDP query with dns-packet, bounded by a timeout.
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

export function dnsQuery(port: number, name: string, type: string, timeoutMs = 3000): Promise<dnsPacket.Packet & { rcode?: string; answers: dnsPacket.Answer[] }> {
  return new Promise((resolve, reject) => {
    const sock = createSocket('udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no reply for ${name} ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('message', (msg) => {
      clearTimeout(timer);
      sock.close();
      const p = dnsPacket.decode(msg) as dnsPacket.Packet & { rcode?: string; answers: dnsPacket.Answer[] };
      resolve(p);
    });
    sock.send(dnsPacket.encode({ id: 7, type: 'query', questions: [{ name, type: type as 'A', class: 'IN' }] }), port, '127.0.0.1');
  });
}
