// A DNS over TLS client for the tests (node:tls): one query per exchange, every wait bounded.
import tls from 'node:tls';
import { buildQuery, decode, type Decoded } from './raw.js';

export interface DotClientOptions {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
}

/** Connects; resolves once the handshake is done, rejects when it fails or closes first. */
export function dotConnect(port: number, o: DotClientOptions, timeoutMs = 5000): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ALPNProtocols: ['dot'], ...o });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TLS handshake with 127.0.0.1:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/**
 * Sends one query on the connection and resolves with the reply; rejects when the connection
 * errors or closes first (with TLS 1.3 a refused client certificate shows only then).
 */
export function dotExchange(socket: tls.TLSSocket, name: string, type: number, timeoutMs = 5000): Promise<Decoded> {
  const q = buildQuery({ id: 0x5d07, name, type });
  const len = Buffer.alloc(2);
  len.writeUInt16BE(q.length);
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (err: Error | undefined, reply?: Decoded): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (err) reject(err);
      else resolve(reply!);
    };
    const onData = (d: Buffer): void => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) done(undefined, decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
    };
    const onError = (err: Error): void => done(err);
    const onClose = (): void => done(new Error('connection closed before the reply'));
    const timer = setTimeout(() => done(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    socket.write(Buffer.concat([len, q]));
  });
}
