// Where the emulated queries go: in process through App.query, or over the network (UDP, TCP when
// the reply is truncated or the resolv.conf says use-vc).
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { isIP } from 'node:net';
import dnsPacket from 'dns-packet';
import type { Packet } from 'dns-packet';
import type { App } from '../app.js';
import { rdataText } from '../dns/present.js';
import { optRr } from '../dns/records.js';
import { type HostPort, isHostPortError, splitHostPort } from '../pkg/hostport.js';
import { FrameReader, frame } from '../pkg/tcp-frames.js';
import type { SendFn, SendResult } from './types.js';

/** The server label of in-process queries. */
export const IN_PROCESS = 'in-process';

function toResult(p: Packet): SendResult {
  const flags = p.flags ?? 0;
  const answers = (p.answers ?? []).filter((a) => a.type !== 'OPT').map((a) => `${a.type} ${rdataText(a)}`);
  return {
    rcode: (p as Packet & { rcode?: string }).rcode ?? 'NOERROR',
    answers,
    authoritative: (flags & dnsPacket.AUTHORITATIVE_ANSWER) !== 0,
    recursionAvailable: (flags & dnsPacket.RECURSION_AVAILABLE) !== 0,
  };
}

/** Sends through the app's full handler path, without sockets. `client` is the source address plugins see. */
export function inProcessSend(app: App, client?: string): SendFn {
  const send: SendFn = async (name, type) => {
    const p = await app.query(name, type, { protocol: 'udp', ...(client ? { client } : {}) });
    return toResult(p);
  };
  send.raw = async (message) => {
    const reply = await app.queryWire(message, { protocol: 'udp', ...(client ? { client } : {}) });
    return replyResult(reply);
  };
  return send;
}

/** A raw reply as a SendResult: no reply, or one that does not decode, is a timeout. */
function replyResult(reply: Buffer | undefined): SendResult {
  if (!reply) return { rcode: 'TIMEOUT', answers: [], timeout: true };
  try {
    return toResult(dnsPacket.decode(reply));
  } catch {
    return { rcode: 'TIMEOUT', answers: [], timeout: true };
  }
}

/** Where a server label points: HOST:PORT, [V6]:PORT, or a host or bare IP (port 53). */
export function parseHostPort(s: string): HostPort {
  const a = splitHostPort(s, { host: 'name', defaultPort: 53 });
  if (!isHostPortError(a)) return a;
  if (a.problem === 'port') throw new Error(`invalid port in "${s}"; use HOST:PORT`);
  throw new Error(`invalid server "${s}"; use HOST:PORT, [IPV6]:PORT, or a host name or IP address`);
}

let nextId = 1;

function query(name: string, type: string, edns: boolean): Buffer {
  nextId = (nextId % 65535) + 1;
  return dnsPacket.encode({
    id: nextId,
    type: 'query',
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: type as 'A', class: 'IN' }],
    additionals: edns ? [optRr(1232, false)] : [],
  });
}

function udp(host: string, port: number, msg: Buffer, timeoutMs: number): Promise<Packet | undefined> {
  return new Promise((resolve) => {
    const sock = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
    const id = msg.readUInt16BE(0);
    const done = (p: Packet | undefined): void => {
      clearTimeout(timer);
      sock.close();
      resolve(p);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on('error', () => done(undefined));
    sock.on('message', (buf) => {
      try {
        const p = dnsPacket.decode(buf);
        if (p.id === id) done(p);
      } catch {
        /* not a DNS message: keep waiting */
      }
    });
    sock.send(msg, port, host);
  });
}

function tcp(host: string, port: number, msg: Buffer, timeoutMs: number): Promise<Packet | undefined> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const frames = new FrameReader();
    const done = (p: Packet | undefined): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(p);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    sock.on('error', () => done(undefined));
    sock.on('connect', () => sock.write(frame([msg])));
    sock.on('data', (d: Buffer) => {
      frames.push(d);
      const reply = frames.next();
      if (!reply) return;
      try {
        done(dnsPacket.decode(reply));
      } catch {
        done(undefined);
      }
    });
  });
}

export interface NetworkSendOptions {
  /** Per-query timeout in ms (the resolv.conf timeout). */
  timeoutMs: number;
  /** TCP only (use-vc). */
  tcp?: boolean;
  /** Add an EDNS0 OPT record (glibc edns0, Go always). */
  edns?: boolean;
  /** Maps a server label (a resolv.conf nameserver) to where it is reached; default: HOST:PORT or IP port 53. */
  resolve?: (server: string) => { host: string; port: number };
}

/** Sends over the network: UDP, retried over TCP when truncated. */
export function networkSend(opts: NetworkSendOptions): SendFn {
  const send: SendFn = async (name, type, server) => {
    const { host, port } = opts.resolve ? opts.resolve(server) : parseHostPort(server);
    const msg = query(name, type, opts.edns ?? false);
    let p: Packet | undefined;
    if (opts.tcp) p = await tcp(host, port, msg, opts.timeoutMs);
    else {
      p = await udp(host, port, msg, opts.timeoutMs);
      if (p && ((p.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0) p = (await tcp(host, port, msg, opts.timeoutMs)) ?? p;
    }
    if (!p) return { rcode: 'TIMEOUT', answers: [], timeout: true };
    return toResult(p);
  };
  // A message as the libc built it, over UDP only (musl 1.2.3 has no TCP fallback).
  send.raw = async (message, server) => {
    const { host, port } = opts.resolve ? opts.resolve(server) : parseHostPort(server);
    const p = await udp(host, port, message, opts.timeoutMs);
    return p ? toResult(p) : { rcode: 'TIMEOUT', answers: [], timeout: true };
  };
  return send;
}
