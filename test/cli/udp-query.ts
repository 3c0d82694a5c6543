// One UDP query with dns-packet, bounded by a timeout.
import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { decodeReply, type Reply } from '../helpers/decode.js';

export function dnsQuery(port: number, name: string, type: string, timeoutMs = 3000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const sock = createSocket('udp4');
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no reply for ${name} ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('message', (msg) => {
      clearTimeout(timer);
      sock.close();
      resolve(decodeReply(msg));
    });
    sock.send(dnsPacket.encode({ id: 7, type: 'query', questions: [{ name, type: type as 'A', class: 'IN' }] }), port, '127.0.0.1');
  });
}

/** The first A record's address in the answer to `name`, or undefined (no answer, or no reply in 1 s). */
export async function firstA(port: number, name: string): Promise<string | undefined> {
  const r = await dnsQuery(port, name, 'A', 1000).catch(() => undefined);
  const a = r?.answers.find((x) => x.type === 'A');
  return a ? String(a.data) : undefined;
}
