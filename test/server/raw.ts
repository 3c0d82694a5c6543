// Raw-socket helpers for the transport/protocol tests: hand-built DNS messages (so malformed
// ones are possible), a header parser that keeps every bit, and UDP/TCP exchanges whose every
// wait is bounded.
import { createSocket, type SocketType } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { decodeReply, type Reply } from '../helpers/decode.js';
import { repoRoot } from '../helpers/server.js';
import { pace, quietFor, sleep } from '../helpers/wait.js';

export const fixtureDir = path.join(repoRoot, 'test/fixtures/protocol');
export const corefile = path.join(fixtureDir, 'Corefile');
export const corefileIpv6 = path.join(fixtureDir, 'Corefile.ipv6');
export const manifests = path.join(fixtureDir, 'manifests');
export const serverArgs = ['--conf', corefile, '--manifests', manifests];

/** Facts of the fixture manifests. */
export const fixture = {
  nginx: 'nginx.default.svc.cluster.local',
  nginxIp: '10.96.0.10',
  /** 120 endpoints: A answer ~1965 bytes (> 512 and > 1232). */
  big: 'big.proto.svc.cluster.local',
  bigCount: 120,
  /** 40 endpoints: A answer ~685 bytes compressed (> 512). */
  medium: 'medium.proto.svc.cluster.local',
  mediumCount: 40,
  /** 10 endpoints: A answer ~205 bytes compressed, ~507 uncompressed (< 512). */
  small: 'small.proto.svc.cluster.local',
  smallCount: 10,
  /** 30 endpoints, short name: A answer with OPT ~530 bytes compressed, ~1160 uncompressed: in (512, 1232]. */
  window: 'm.p.svc.cluster.local',
  windowCount: 30,
  zone: 'cluster.local',
};

export const T = { A: 1, NS: 2, CNAME: 5, SOA: 6, TXT: 16, AAAA: 28, SRV: 33, OPT: 41, TSIG: 250, IXFR: 251, AXFR: 252, ANY: 255 } as const;
export const C = { IN: 1, CH: 3, HS: 4, NONE: 254, ANY: 255 } as const;
export const Rcode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, NOTAUTH: 9, BADVERS: 16 } as const;
export const Opcode = { QUERY: 0, IQUERY: 1, STATUS: 2, NOTIFY: 4, UPDATE: 5 } as const;

// ---------------------------------------------------------------------------------------------
// Building messages

/** Wire form of a name, letter case kept, no compression. Labels are taken verbatim. */
export function encodeName(name: string): Buffer {
  const trimmed = name.replace(/\.$/, '');
  const parts: Buffer[] = [];
  if (trimmed.length > 0) {
    for (const label of trimmed.split('.')) {
      const b = Buffer.from(label, 'latin1');
      parts.push(Buffer.from([b.length]), b);
    }
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

export interface HeaderFields {
  id?: number;
  qr?: boolean;
  opcode?: number;
  aa?: boolean;
  tc?: boolean;
  rd?: boolean;
  ra?: boolean;
  z?: boolean;
  ad?: boolean;
  cd?: boolean;
  rcode?: number;
  qdcount?: number;
  ancount?: number;
  nscount?: number;
  arcount?: number;
}

export function encodeHeader(h: HeaderFields): Buffer {
  const buf = Buffer.alloc(12);
  buf.writeUInt16BE(h.id ?? 0, 0);
  let flags = 0;
  if (h.qr) flags |= 0x8000;
  flags |= ((h.opcode ?? 0) & 0xf) << 11;
  if (h.aa) flags |= 0x0400;
  if (h.tc) flags |= 0x0200;
  if (h.rd) flags |= 0x0100;
  if (h.ra) flags |= 0x0080;
  if (h.z) flags |= 0x0040;
  if (h.ad) flags |= 0x0020;
  if (h.cd) flags |= 0x0010;
  flags |= (h.rcode ?? 0) & 0xf;
  buf.writeUInt16BE(flags, 2);
  buf.writeUInt16BE(h.qdcount ?? 0, 4);
  buf.writeUInt16BE(h.ancount ?? 0, 6);
  buf.writeUInt16BE(h.nscount ?? 0, 8);
  buf.writeUInt16BE(h.arcount ?? 0, 10);
  return buf;
}

export function encodeQuestion(name: string, type: number, klass: number = C.IN): Buffer {
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(klass, 2);
  return Buffer.concat([encodeName(name), tail]);
}

/** A resource record with raw rdata. */
export function encodeRr(name: string | Buffer, type: number, klass: number, ttl: number, rdata: Buffer): Buffer {
  const owner = typeof name === 'string' ? encodeName(name) : name;
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(klass, 2);
  fixed.writeUInt32BE(ttl >>> 0, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([owner, fixed, rdata]);
}

export interface EdnsOpts {
  udpSize?: number;
  do?: boolean;
  version?: number;
  extRcode?: number;
  /** Raw options as (code, data) pairs. */
  options?: { code: number; data: Buffer }[];
  /** Raw rdata, overriding `options` (for malformed option lists). */
  rawRdata?: Buffer;
}

/** An OPT pseudo-record (root owner). */
export function encodeOpt(e: EdnsOpts = {}): Buffer {
  const rdata =
    e.rawRdata ??
    Buffer.concat(
      (e.options ?? []).map((o) => {
        const h = Buffer.alloc(4);
        h.writeUInt16BE(o.code, 0);
        h.writeUInt16BE(o.data.length, 2);
        return Buffer.concat([h, o.data]);
      }),
    );
  // OPT "class" = requestor's UDP payload size; "TTL" = ext-rcode(8) | version(8) | DO(1) | Z(15).
  const ttl = (((e.extRcode ?? 0) & 0xff) << 24) | (((e.version ?? 0) & 0xff) << 16) | (e.do ? 0x8000 : 0);
  return encodeRr(Buffer.from([0]), T.OPT, e.udpSize ?? 4096, ttl, rdata);
}

export interface QueryOpts extends HeaderFields {
  name: string;
  type?: number;
  class?: number;
  /** Adds an OPT record in the additional section. */
  edns?: EdnsOpts;
}

let nextId = 0x1234;
export function freshId(): number {
  nextId = (nextId * 1103515245 + 12345) & 0xffff;
  return nextId === 0 ? 1 : nextId;
}

/** A standard query; header fields override the defaults (RD=1, QDCOUNT=1, ARCOUNT from edns). */
export function buildQuery(q: QueryOpts): Buffer {
  const header = encodeHeader({
    rd: true,
    qdcount: 1,
    arcount: q.edns ? 1 : 0,
    ...q,
    id: q.id ?? freshId(),
  });
  const parts = [header, encodeQuestion(q.name, q.type ?? T.A, q.class ?? C.IN)];
  if (q.edns) parts.push(encodeOpt(q.edns));
  return Buffer.concat(parts);
}

export function idOf(msg: Buffer): number {
  return msg.readUInt16BE(0);
}

// ---------------------------------------------------------------------------------------------
// Reading replies

export interface Header {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  z: boolean;
  ad: boolean;
  cd: boolean;
  rcode: number;
  qdcount: number;
  ancount: number;
  nscount: number;
  arcount: number;
}

export function parseHeader(buf: Buffer): Header {
  if (buf.length < 12) throw new Error(`reply shorter than a header: ${buf.length} bytes (${buf.toString('hex')})`);
  const f = buf.readUInt16BE(2);
  return {
    id: buf.readUInt16BE(0),
    qr: (f & 0x8000) !== 0,
    opcode: (f >> 11) & 0xf,
    aa: (f & 0x0400) !== 0,
    tc: (f & 0x0200) !== 0,
    rd: (f & 0x0100) !== 0,
    ra: (f & 0x0080) !== 0,
    z: (f & 0x0040) !== 0,
    ad: (f & 0x0020) !== 0,
    cd: (f & 0x0010) !== 0,
    rcode: f & 0xf,
    qdcount: buf.readUInt16BE(4),
    ancount: buf.readUInt16BE(6),
    nscount: buf.readUInt16BE(8),
    arcount: buf.readUInt16BE(10),
  };
}

// Decoded replies are typed by test/helpers/decode.ts (dns-packet's own types omit rcode).

export type Decoded = Reply;
export const decode = decodeReply;

export interface OptInfo {
  udpSize: number;
  extRcode: number;
  version: number;
  do: boolean;
  options: { code: number; data: Buffer }[];
}

/** Skips a (possibly compressed) name; returns the offset after it. */
function skipName(buf: Buffer, off: number): number {
  for (let guard = 0; guard < 256; guard++) {
    if (off >= buf.length) throw new Error('name runs past the end');
    const len = buf[off]!;
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) return off + 2;
    off += 1 + len;
  }
  throw new Error('name too long');
}

export interface RawRr {
  section: 'answer' | 'authority' | 'additional';
  type: number;
  klass: number;
  ttl: number;
  rdata: Buffer;
  /** Offset of the owner name. */
  offset: number;
}

/** Walks every record of a reply by hand (independent of dns-packet's decoder). */
export function rawRecords(buf: Buffer): RawRr[] {
  const h = parseHeader(buf);
  let off = 12;
  for (let i = 0; i < h.qdcount; i++) off = skipName(buf, off) + 4;
  const out: RawRr[] = [];
  const sections: [RawRr['section'], number][] = [
    ['answer', h.ancount],
    ['authority', h.nscount],
    ['additional', h.arcount],
  ];
  for (const [section, count] of sections) {
    for (let i = 0; i < count; i++) {
      const start = off;
      off = skipName(buf, off);
      if (off + 10 > buf.length) throw new Error(`record header runs past the end of the reply (${section} #${i})`);
      const type = buf.readUInt16BE(off);
      const klass = buf.readUInt16BE(off + 2);
      const ttl = buf.readUInt32BE(off + 4);
      const rdlen = buf.readUInt16BE(off + 8);
      off += 10;
      if (off + rdlen > buf.length) throw new Error(`rdata runs past the end of the reply (${section} #${i})`);
      out.push({ section, type, klass, ttl, rdata: buf.subarray(off, off + rdlen), offset: start });
      off += rdlen;
    }
  }
  if (off !== buf.length) throw new Error(`reply has ${buf.length - off} bytes after its last record`);
  return out;
}

/** The OPT records of a reply, parsed by hand. */
export function optRecords(buf: Buffer): OptInfo[] {
  return rawRecords(buf)
    .filter((r) => r.type === T.OPT)
    .map((r) => {
      const options: { code: number; data: Buffer }[] = [];
      let o = 0;
      while (o + 4 <= r.rdata.length) {
        const code = r.rdata.readUInt16BE(o);
        const len = r.rdata.readUInt16BE(o + 2);
        options.push({ code, data: r.rdata.subarray(o + 4, o + 4 + len) });
        o += 4 + len;
      }
      return {
        udpSize: r.klass,
        extRcode: (r.ttl >>> 24) & 0xff,
        version: (r.ttl >>> 16) & 0xff,
        do: (r.ttl & 0x8000) !== 0,
        options,
      };
    });
}

/** The question section as (name as spelled, type, class). */
export function questions(buf: Buffer): { name: string; type: number; klass: number }[] {
  const d = decode(buf);
  const h = parseHeader(buf);
  const out: { name: string; type: number; klass: number }[] = [];
  // Types and classes by hand: dns-packet maps unknown numbers to strings.
  let off = 12;
  for (let i = 0; i < h.qdcount; i++) {
    off = skipName(buf, off);
    const q = d.questions?.[i];
    out.push({ name: q?.name ?? '', type: buf.readUInt16BE(off), klass: buf.readUInt16BE(off + 2) });
    off += 4;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// UDP

export interface Target {
  host?: string;
  port: number;
}

/**
 * Sends one datagram from a fresh socket and resolves with the first datagram that comes back,
 * or null when none arrives within timeoutMs.
 */
export function udpExchange(msg: Buffer, target: Target, timeoutMs = 2000): Promise<Buffer | null> {
  const host = target.host ?? '127.0.0.1';
  const type: SocketType = host.includes(':') ? 'udp6' : 'udp4';
  return new Promise((resolve, reject) => {
    const sock = createSocket(type);
    let done = false;
    const finish = (v: Buffer | null, err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        sock.close();
      } catch {
        /* already closed */
      }
      if (err) reject(err);
      else resolve(v);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    sock.on('error', (err) => finish(null, err));
    sock.on('message', (m, rinfo) => {
      if (rinfo.port === target.port) finish(m);
    });
    sock.send(msg, target.port, host, (err) => {
      if (err) finish(null, err);
    });
  });
}

/** Like udpExchange, but a missing reply is an error naming the query. */
export async function udpQuery(msg: Buffer, target: Target, timeoutMs = 2000): Promise<Buffer> {
  const reply = await udpExchange(msg, target, timeoutMs);
  if (!reply) throw new Error(`no UDP reply within ${timeoutMs} ms to ${msg.toString('hex')}`);
  return reply;
}

/**
 * Sends many datagrams from one socket without waiting for each reply (fuzzing); returns how
 * many were sent and every datagram that came back (collected until 300 ms after the last send).
 */
export async function udpBlast(
  msgs: Iterable<Buffer>,
  target: Target,
  opts: { deadline: number; pauseEvery?: number } = { deadline: Infinity },
): Promise<{ sent: number; replies: Buffer[] }> {
  const host = target.host ?? '127.0.0.1';
  const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  const replies: Buffer[] = [];
  sock.on('message', (m) => {
    replies.push(m);
  });
  sock.on('error', () => {
    /* ICMP errors etc. are irrelevant here */
  });
  let sent = 0;
  try {
    for (const m of msgs) {
      if (Date.now() > opts.deadline) break;
      await new Promise<void>((resolve) => sock.send(m, target.port, host, () => resolve()));
      sent++;
      if (opts.pauseEvery && sent % opts.pauseEvery === 0) await pace(2);
    }
    await quietFor(300, 'the tail: replies still coming after the last send');
  } finally {
    sock.close();
  }
  return { sent, replies };
}

export { sleep };

// ---------------------------------------------------------------------------------------------
// TCP

export function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(msg.length, 0);
  return Buffer.concat([len, msg]);
}

/** A TCP connection that splits the byte stream into length-prefixed DNS messages. */
export class TcpConn {
  readonly sock: Socket;
  private buffered = Buffer.alloc(0);
  private readonly messages: Buffer[] = [];
  private waiters: (() => void)[] = [];
  closed = false;
  closedAt = 0;
  error: Error | undefined;

  private constructor(sock: Socket) {
    this.sock = sock;
    sock.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 2) {
        const len = this.buffered.readUInt16BE(0);
        if (this.buffered.length < 2 + len) break;
        this.messages.push(this.buffered.subarray(2, 2 + len));
        this.buffered = this.buffered.subarray(2 + len);
      }
      this.wake();
    });
    const onClose = (): void => {
      if (!this.closed) {
        this.closed = true;
        this.closedAt = Date.now();
      }
      this.wake();
    };
    sock.on('end', onClose);
    sock.on('close', onClose);
    sock.on('error', (err) => {
      this.error = err;
      onClose();
    });
  }

  static open(target: Target, timeoutMs = 3000): Promise<TcpConn> {
    const host = target.host ?? '127.0.0.1';
    return new Promise((resolve, reject) => {
      const sock = connect({ host, port: target.port });
      sock.setNoDelay(true);
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error(`TCP connect to ${host}:${target.port} not done within ${timeoutMs} ms`));
      }, timeoutMs);
      sock.once('connect', () => {
        clearTimeout(timer);
        sock.removeListener('error', onErr);
        resolve(new TcpConn(sock));
      });
      const onErr = (err: Error): void => {
        clearTimeout(timer);
        reject(err);
      };
      sock.once('error', onErr);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private waitEvent(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  write(buf: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.sock.write(buf, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Writes one query with its length prefix. */
  send(msg: Buffer): Promise<void> {
    return this.write(frame(msg));
  }

  /** The next whole message, or an error when none arrives within timeoutMs or the peer closes. */
  async read(timeoutMs = 3000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.messages.shift();
      if (m) return m;
      if (this.closed) throw new Error(`TCP connection closed before a reply${this.error ? ` (${this.error.message})` : ''}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no TCP reply within ${timeoutMs} ms`);
      await this.waitEvent(left);
    }
  }

  /** Reads n messages (any order), bounded overall by timeoutMs. */
  async readN(n: number, timeoutMs = 5000): Promise<Buffer[]> {
    const deadline = Date.now() + timeoutMs;
    const out: Buffer[] = [];
    while (out.length < n) out.push(await this.read(Math.max(1, deadline - Date.now())));
    return out;
  }

  /**
   * Every message until none came for `quietMs` (the server may close, or skip a message it
   * drops), bounded overall by `maxMs`.
   */
  async readUntilQuiet(quietMs: number, maxMs: number): Promise<Buffer[]> {
    const deadline = Date.now() + maxMs;
    const out: Buffer[] = [];
    while (Date.now() < deadline && !this.closed) {
      try {
        out.push(await this.read(Math.min(quietMs, Math.max(1, deadline - Date.now()))));
      } catch {
        break;
      }
    }
    return out;
  }

  /** Messages received so far and not read. */
  pending(): number {
    return this.messages.length;
  }

  /** Resolves true when the peer closes (FIN or reset) within timeoutMs, else false. */
  async waitClosed(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await this.waitEvent(left);
    }
    return true;
  }

  destroy(): void {
    this.sock.destroy();
  }
}

/** One query over a fresh TCP connection. */
export async function tcpQuery(msg: Buffer, target: Target, timeoutMs = 3000): Promise<Buffer> {
  const c = await TcpConn.open(target, timeoutMs);
  try {
    await c.send(msg);
    return await c.read(timeoutMs);
  } finally {
    c.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Seeded PRNG (mulberry32) for the fuzz loop

export { prng } from '../helpers/prng.js';

// ---------------------------------------------------------------------------------------------
// Shared checks

/**
 * The server still answers a good query (UDP and, unless udpOnly, TCP) correctly. Used after
 * every bad packet: a reply to garbage must never cost the next client its answer.
 */
export async function expectStillServing(target: Target, opts: { udpOnly?: boolean } = {}): Promise<void> {
  const q = buildQuery({ name: fixture.nginx, type: T.A });
  const reply = await udpQuery(q, target);
  const h = parseHeader(reply);
  if (h.id !== idOf(q) || h.rcode !== Rcode.NOERROR || h.ancount !== 1) {
    throw new Error(`good UDP query after a bad packet got id=${h.id} rcode=${h.rcode} ancount=${h.ancount}`);
  }
  const a = decode(reply).answers?.[0];
  if (a?.type !== 'A' || a.data !== fixture.nginxIp) throw new Error(`good UDP query answered ${JSON.stringify(a)}`);
  if (!opts.udpOnly) {
    const tq = buildQuery({ name: fixture.nginx, type: T.A });
    const treply = await tcpQuery(tq, target);
    const th = parseHeader(treply);
    if (th.id !== idOf(tq) || th.rcode !== Rcode.NOERROR || th.ancount !== 1) {
      throw new Error(`good TCP query after a bad packet got id=${th.id} rcode=${th.rcode} ancount=${th.ancount}`);
    }
  }
}
