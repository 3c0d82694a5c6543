// From bytes in to bytes out: validation per protocol.md, routing to a chain, encoding, and the
// cache of encoded answers that lets repeated questions skip the chain entirely.
import type { DnsRequest, DnsResponse, Protocol } from '../chain/plugin.js';
import type { Router } from '../chain/chain.js';
import { Rcode } from '../dns/records.js';
import { parseQuery, isProblem, typeName, className, fastCacheSlot, type ParsedQuery } from '../dns/query.js';
import { encodeBare, encodeFormerr, encodeHeaderOnly, encodeResponse, udpLimit } from '../dns/response.js';
import type { Logger } from 'pino';
import { AnswerCache, answerShape } from './answer-cache.js';
import dnsPacket from 'dns-packet';
import type { Rr } from '../dns/records.js';
import { metrics } from '../metrics/index.js';

const TYPE_AXFR = 252;
const TYPE_IXFR = 251;
/** Largest DNS message one TCP frame can carry. */
const TCP_MAX = 65535;
const CLASS_IN = 1;

export interface Endpoint {
  address: string;
  port: number;
}

/** What observers (query log, metrics) learn about each packet handled. */
export interface QueryEvent {
  msg: Buffer;
  /** The reply sent, or null when the packet got none. */
  reply: Buffer | null;
  protocol: Protocol;
  client: Endpoint;
  local: Endpoint;
  durationNs: bigint;
  /** The server-block zone that serves a lowercased name, or undefined (REFUSED). */
  zoneOf(qname: string): string | undefined;
  /** The plugin that wrote the answer, when a plugin did (also for answers from the cache). */
  plugin?: string;
}

/**
 * A reply; over TCP a zone transfer may need several messages: `more` holds the ones to send
 * after this first one, in order (the transport writes each as its own frame).
 */
export type Reply = Buffer & { more?: Buffer[] };

/** Called after every packet; must not throw into the serving path (errors are logged). */
export type QueryObserver = (e: QueryEvent) => void;

export class QueryHandler {
  private cache = new AnswerCache();
  private readonly observers: QueryObserver[] = [];
  /** Which plugin wrote a reply, for observers (metrics' `plugin` label). */
  private readonly writers = new WeakMap<Buffer, string>();

  constructor(
    private router: Router,
    private readonly log: Logger,
  ) {}

  /** Swaps in new chains (a reload) and forgets every encoded answer of the old ones. */
  setRouter(router: Router): void {
    this.router = router;
    this.cache.clear();
  }

  /** Forgets every encoded answer (a plugin's data changed). */
  clearCache(): void {
    this.cache.clear();
  }

  observe(observer: QueryObserver): void {
    this.observers.push(observer);
  }

  /** Returns the reply, or null when the packet gets no reply at all. */
  handle(msg: Buffer, protocol: Protocol, client: Endpoint, local: Endpoint): Buffer | null | Promise<Buffer | null> {
    if (this.observers.length === 0) return this.reply(msg, protocol, client, local);
    const start = process.hrtime.bigint();
    const out = this.reply(msg, protocol, client, local);
    if (out instanceof Promise) return out.then((r) => this.notify(msg, r, protocol, client, local, start));
    return this.notify(msg, out, protocol, client, local, start);
  }

  private notify(msg: Buffer, reply: Buffer | null, protocol: Protocol, client: Endpoint, local: Endpoint, start: bigint): Buffer | null {
    const router = this.router;
    const event: QueryEvent = {
      msg,
      reply,
      protocol,
      client,
      local,
      durationNs: process.hrtime.bigint() - start,
      zoneOf: (qname) => router.zoneFor(qname),
      plugin: reply ? this.writers.get(reply) : undefined,
    };
    for (const observer of this.observers) {
      try {
        observer(event);
      } catch (err) {
        this.log.error({ err }, 'query observer failed');
      }
    }
    return reply;
  }

  private reply(msg: Buffer, protocol: Protocol, client: Endpoint, local: Endpoint): Buffer | null | Promise<Buffer | null> {
    // Repeated plain questions are answered from the raw bytes, before any parsing.
    const slot = fastCacheSlot(msg, protocol === 'tcp');
    if (slot >= 0) {
      const hit = this.cache.get(msg, slot % 512, Math.floor(slot / 512));
      if (hit) return this.fromCache(hit, msg.readUInt16BE(0), msg[2]! & 0x01);
    }
    const parsed = parseQuery(msg);
    if (isProblem(parsed)) {
      switch (parsed.kind) {
        case 'drop':
          return null;
        case 'formerr':
          return encodeFormerr(parsed.id, parsed.flags, parsed.withOpt);
        case 'notimp':
          return encodeBare(parsed.query, Rcode.NOTIMP);
        case 'notimp-header':
          return encodeHeaderOnly(parsed.id, parsed.flags, Rcode.NOTIMP);
      }
    }
    const q = parsed;
    if (q.edns && q.edns.version > 0) return encodeBare(q, Rcode.BADVERS);
    // TSIG/SIG(0) are not supported: never answer a signed query as if it were unsigned.
    if (q.signed) return encodeBare(q, Rcode.REFUSED);
    if (q.qtype === TYPE_AXFR && protocol === 'udp') return encodeBare(q, Rcode.NOTIMP);
    if (q.qclass !== CLASS_IN) return encodeBare(q, Rcode.REFUSED);

    const limit = protocol === 'udp' ? udpLimit(q) : 65535;
    const shape = answerShape(q.edns !== undefined, q.edns?.do ?? false, limit);
    const hit = this.cache.get(msg, q.questionEnd, shape);
    if (hit) return this.fromCache(hit, q.id, (q.flags >> 8) & 0x01);

    const qname = q.name.toLowerCase();
    const chain = this.router.chainFor(qname);
    if (!chain) return encodeBare(q, Rcode.REFUSED);
    const req: DnsRequest = {
      id: q.id,
      name: q.name,
      qname,
      qtype: typeName(q.qtype),
      qclass: className(q.qclass),
      opcode: 'QUERY',
      rd: q.rd,
      edns: q.edns,
      protocol,
      client,
      local,
      queryAuthority: q.qtype === TYPE_IXFR ? queryAuthority(msg) : undefined,
    };
    let res: DnsResponse | Promise<DnsResponse>;
    try {
      res = chain.serve(req);
    } catch (err) {
      return this.failed(q, err);
    }
    if (res instanceof Promise) {
      return res.then(
        (r) => this.finish(msg, q, r, limit, shape, protocol),
        (err: unknown) => this.failed(q, err),
      );
    }
    return this.finish(msg, q, res, limit, shape, protocol);
  }

  private fromCache(hit: Buffer, id: number, rd: number): Buffer {
    const out = patched(hit, id, rd);
    if (this.observers.length > 0) {
      const writer = this.writers.get(hit);
      if (writer) this.writers.set(out, writer);
    }
    return out;
  }

  private finish(msg: Buffer, q: ParsedQuery, res: DnsResponse, limit: number, shape: number, protocol: Protocol): Buffer {
    if (protocol === 'tcp' && res.more && res.more.length > 0) return encodeMessages(q, res);
    const out = encodeResponse(q, res, limit);
    if (res.plugin !== undefined && this.observers.length > 0) this.writers.set(out, res.plugin);
    if (res.cacheable) {
      this.cache.set(msg, q.questionEnd, shape, out);
    }
    return out;
  }

  private failed(q: ParsedQuery, err: unknown): Buffer {
    metrics().panics.inc();
    this.log.error({ err, qname: q.name, qtype: typeName(q.qtype) }, 'plugin chain failed; answering SERVFAIL');
    return encodeBare(q, Rcode.SERVFAIL);
  }
}


/** The authority section of an IXFR query (its SOA); undefined when it cannot be decoded. */
function queryAuthority(msg: Buffer): Rr[] | undefined {
  try {
    return (dnsPacket.decode(msg).authorities ?? []) as Rr[];
  } catch {
    return undefined;
  }
}

/**
 * A multi-message TCP answer: `res` (its answer, authority and additional) first, then one message
 * per entry of `res.more`. A message that would not fit in a TCP frame is split in two, as often
 * as needed, so no record is ever lost to truncation.
 */
function encodeMessages(q: ParsedQuery, res: DnsResponse): Reply {
  const out: Buffer[] = [];
  const encode = (part: DnsResponse): void => {
    const buf = encodeResponse(q, part, Number.MAX_SAFE_INTEGER);
    if (buf.length <= TCP_MAX || part.answer.length < 2) {
      out.push(buf.length <= TCP_MAX ? buf : encodeResponse(q, part, TCP_MAX));
      return;
    }
    const half = Math.ceil(part.answer.length / 2);
    encode({ ...part, answer: part.answer.slice(0, half) });
    encode({ ...part, answer: part.answer.slice(half), authority: [], additional: [] });
  };
  encode({ ...res, more: undefined });
  for (const answer of res.more ?? []) encode({ rcode: res.rcode, aa: res.aa, answer, authority: [], additional: [] });
  const head = out[0]! as Reply;
  head.more = out.slice(1);
  return head;
}

function patched(cached: Buffer, id: number, rd: number): Buffer {
  const out = Buffer.allocUnsafe(cached.length);
  cached.copy(out);
  out[0] = id >> 8;
  out[1] = id & 0xff;
  out[2] = (out[2]! & 0xfe) | rd;
  return out;
}
