// From bytes in to bytes out: validation (README, "Protocol behaviour"), routing to a chain, encoding, and the
// cache of encoded answers that lets repeated questions skip the chain entirely.
import type { DnsRequest, DnsResponse, Endpoint, LocalEndpoint, Protocol, QueryEvent, QueryObserver } from '../chain/plugin.js';
import type { Router } from '../chain/chain.js';
import { Rcode } from '../dns/records.js';
import { fqdn } from '../pkg/names.js';
import { parseQuery, isProblem, typeName, className, fastCacheSlot, type ParsedQuery } from '../dns/query.js';
import { encodeBare, encodeFormerr, encodeHeaderOnly, encodeResponse, udpLimit } from '../dns/response.js';
import { Encoder } from '../dns/encode.js';
import type { Logger } from 'pino';
import { AnswerCache, answerShape, CaseUse, type CachedAnswer } from './answer-cache.js';
import type { Chain } from '../chain/chain.js';
import dnsPacket from 'dns-packet';
import type { Rr } from '../dns/records.js';
import type { Counter } from 'prom-client';
import { DEFAULT_MAX_ANSWER_RECORDS } from './limits.js';

const TYPE_AXFR = 252;
const TYPE_IXFR = 251;
/** Largest DNS message one TCP frame can carry. */
const TCP_MAX = 65535;
const CLASS_IN = 1;

/**
 * A reply; over TCP a zone transfer may need several messages: `more` holds the ones to send
 * after this first one, in order (the transport writes each as its own frame).
 */
export type Reply = Buffer & { more?: Buffer[] };

export interface HandlerOptions {
  /** Byte budget of the cache of encoded answers (0 turns it off). */
  answerCacheBytes?: number;
  /** Records one answer may carry (answer, authority and additional together); see DEFAULT_MAX_ANSWER_RECORDS. */
  maxAnswerRecords?: number;
  /** Counts chains that threw and answers that could not be encoded (the App's coredns_panics_total). */
  panics?: Counter<string>;
}

export { DEFAULT_MAX_ANSWER_RECORDS };

export class QueryHandler {
  private readonly cache: AnswerCache;
  private readonly observers: QueryObserver[] = [];
  /** Which plugin wrote a reply, for observers (metrics' `plugin` label). */
  private readonly writers = new WeakMap<Buffer, string>();
  private readonly maxAnswerRecords: number;
  /** This listener's encoder scratch: another listener, or another App's, has its own. */
  private readonly encoder = new Encoder();
  private readonly panics: Counter<string> | undefined;

  constructor(
    private router: Router,
    private readonly log: Logger,
    opts: HandlerOptions = {},
  ) {
    this.cache = new AnswerCache(opts.answerCacheBytes);
    this.maxAnswerRecords = opts.maxAnswerRecords ?? DEFAULT_MAX_ANSWER_RECORDS;
    this.panics = opts.panics;
  }

  /** What the answer cache holds now and has done, for tests and tools. */
  cacheStats(): { entries: number; bytes: number; maxBytes: number; hits: number; evictions: number } {
    const c = this.cache;
    return { entries: c.size, bytes: c.bytes, maxBytes: c.maxBytes, hits: c.hits, evictions: c.evictions };
  }

  /** Forgets every encoded answer (a plugin's data changed). */
  clearCache(): void {
    this.cache.clear();
  }

  observe(observer: QueryObserver): void {
    this.observers.push(observer);
  }

  /** Returns the reply, or null when the packet gets no reply at all. */
  handle(msg: Buffer, protocol: Protocol, client: Endpoint, local: LocalEndpoint): Buffer | null | Promise<Buffer | null> {
    if (this.observers.length === 0) return this.reply(msg, protocol, client, local);
    const start = process.hrtime.bigint();
    const out = this.reply(msg, protocol, client, local);
    if (out instanceof Promise) return out.then((r) => this.notify(msg, r, protocol, client, local, start));
    return this.notify(msg, out, protocol, client, local, start);
  }

  private notify(msg: Buffer, reply: Buffer | null, protocol: Protocol, client: Endpoint, local: LocalEndpoint, start: bigint): Buffer | null {
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

  private reply(msg: Buffer, protocol: Protocol, client: Endpoint, local: LocalEndpoint): Buffer | null | Promise<Buffer | null> {
    // With the cache off (--answer-cache-bytes 0) nothing is ever stored: no lookup either.
    const caching = this.cache.maxBytes > 0;
    // Repeated plain questions are answered from the raw bytes, before any parsing.
    if (caching) {
      const slot = fastCacheSlot(msg, protocol === 'tcp');
      if (slot >= 0) {
        const hit = this.cache.get(msg, slot % 512, Math.floor(slot / 512));
        if (hit) return this.fromCache(hit, msg, (msg[0]! << 8) | msg[1]!, msg[2]! & 0x01);
      }
    }
    const parsed = parseQuery(msg);
    if (isProblem(parsed)) {
      switch (parsed.kind) {
        case 'drop':
          return null;
        case 'formerr':
          return encodeFormerr(parsed.id, parsed.flags, parsed.withOpt);
        case 'notimp':
          return encodeBare(parsed.query, Rcode.NOTIMP, false, this.encoder);
        case 'notimp-header':
          return encodeHeaderOnly(parsed.id, parsed.flags, Rcode.NOTIMP);
      }
    }
    const q = parsed;
    if (q.edns && q.edns.version > 0) return encodeBare(q, Rcode.BADVERS, false, this.encoder);
    // TSIG/SIG(0) are not supported: never answer a signed query as if it were unsigned.
    if (q.signed) return encodeBare(q, Rcode.REFUSED, false, this.encoder);
    if (q.qtype === TYPE_AXFR && protocol === 'udp') return encodeBare(q, Rcode.NOTIMP, false, this.encoder);
    if (q.qclass !== CLASS_IN) return encodeBare(q, Rcode.REFUSED, false, this.encoder);

    const limit = protocol === 'udp' ? udpLimit(q) : 65535;
    let shape = 0;
    if (caching) {
      shape = answerShape(q.edns !== undefined, q.edns?.do ?? false, limit);
      const hit = this.cache.get(msg, q.questionEnd, shape);
      if (hit) return this.fromCache(hit, msg, q.id, (q.flags >> 8) & 0x01);
    }

    const qname = q.name.toLowerCase();
    const chain = this.router.chainFor(qname);
    if (!chain) return encodeBare(q, Rcode.REFUSED, false, this.encoder);
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
        (r) => this.finish(msg, q, r, limit, shape, protocol, chain, req),
        (err: unknown) => this.failed(q, err),
      );
    }
    return this.finish(msg, q, res, limit, shape, protocol, chain, req);
  }

  private fromCache(hit: CachedAnswer, msg: Buffer, id: number, rd: number): Buffer {
    const out = patched(hit.reply, id, rd);
    // CD as this query set it (RFC 4035 3.1.6, as encodeResponse does), not as the query the entry was stored for.
    out[3] = (out[3]! & 0xef) | (msg[3]! & 0x10);
    // The client's spelling of the name goes into the question (entries that answer any spelling
    // were stored with the query's question bytes at offset 12, so lengths agree), unless it is
    // the spelling stored.
    if (hit.caseUse === CaseUse.Any && !this.cache.lastExact) {
      const end = 12 + hit.question.length - 4;
      for (let i = 12; i < end; i++) out[i] = msg[i]!;
    }
    if (this.observers.length > 0) {
      const writer = this.writers.get(hit.reply);
      if (writer) this.writers.set(out, writer);
    }
    return out;
  }

  /**
   * Decides whether one reply serves every spelling of q's name: asks the chain again with every
   * letter of the name in the other case and compares. The reply may be reused for any spelling
   * (with the question's name bytes copied in) only when (1) the two replies are byte for byte
   * the same outside the question name, so every name spelled after the question is a
   * compression pointer into it, and (2) no name that kept its spelling between the two (a name
   * from the data, not from the question) equals a suffix of the question but for case, since
   * compression, which matches case-sensitively, would then point at the question for some
   * spellings and not for others. Runs once per question whose second spelling is seen.
   */
  private checkCase(msg: Buffer, q: ParsedQuery, res: DnsResponse, out: Buffer, limit: number, shape: number, chain: Chain, req: DnsRequest): void {
    const question = Buffer.from(msg.subarray(12, q.questionEnd));
    const generation = this.cache.generation;
    const flipped = flipCase(q.name);
    const settle = (anyCase: boolean): void => this.cache.settle(question, shape, out, anyCase, generation);
    const judge = (other: DnsResponse): void => {
      try {
        const otherOut = encodeResponse({ ...q, name: flipped }, other, limit, this.encoder);
        settle(other.cacheable === true && sameButQuestionName(out, otherOut, question.length - 4) && dataNamesApart(res, other, q.name));
      } catch {
        settle(false);
      }
    };
    let again: DnsResponse | Promise<DnsResponse>;
    try {
      again = chain.serve({ ...req, name: flipped });
    } catch {
      settle(false);
      return;
    }
    if (again instanceof Promise) again.then(judge, () => settle(false));
    else judge(again);
  }

  private finish(msg: Buffer, q: ParsedQuery, res: DnsResponse, limit: number, shape: number, protocol: Protocol, chain: Chain, req: DnsRequest): Buffer {
    let out: Buffer;
    try {
      if (protocol === 'tcp' && res.more && res.more.length > 0) return encodeMessages(q, res, this.encoder);
      const capped = q.qtype === TYPE_AXFR || q.qtype === TYPE_IXFR ? undefined : capRecords(res, this.maxAnswerRecords);
      if (capped) {
        out = encodeResponse(q, capped, limit, this.encoder);
        // Records were left out, as when they do not fit the transport: the client is told so.
        out[2] = out[2]! | 0x02;
      } else out = encodeResponse(q, res, limit, this.encoder);
    } catch (err) {
      // A record no encoder can write (bad data from a plugin or an upstream): the client gets
      // SERVFAIL instead of silence, and the log names the query.
      this.panics?.inc();
      this.log.error({ err, qname: q.name, qtype: typeName(q.qtype), plugin: res.plugin }, 'answer could not be encoded; answering SERVFAIL');
      return encodeBare(q, Rcode.SERVFAIL, false, this.encoder);
    }
    if (res.plugin !== undefined && this.observers.length > 0) this.writers.set(out, res.plugin);
    if (res.cacheable && this.cache.maxBytes > 0 && this.cache.set(msg, q.questionEnd, shape, out)) {
      this.checkCase(msg, q, res, out, limit, shape, chain, req);
    }
    return out;
  }

  private failed(q: ParsedQuery, err: unknown): Buffer {
    this.panics?.inc();
    this.log.error({ err, qname: q.name, qtype: typeName(q.qtype) }, 'plugin chain failed; answering SERVFAIL');
    return encodeBare(q, Rcode.SERVFAIL, false, this.encoder);
  }
}

/**
 * `res` with at most `max` records, kept in section order (answer, then authority, then
 * additional) as the encoder keeps what fits; undefined when it has no more than `max`.
 */
export function capRecords(res: DnsResponse, max: number): DnsResponse | undefined {
  if (res.answer.length + res.authority.length + res.additional.length <= max) return undefined;
  const answer = res.answer.slice(0, max);
  const authority = answer.length < res.answer.length ? [] : res.authority.slice(0, max - answer.length);
  const additional = authority.length < res.authority.length ? [] : res.additional.slice(0, max - answer.length - authority.length);
  return { ...res, answer, authority, additional };
}

/** The authority section of an IXFR query (its SOA); undefined when it cannot be decoded. */
function queryAuthority(msg: Buffer): Rr[] | undefined {
  try {
    return dnsPacket.decode(msg).authorities ?? [];
  } catch {
    return undefined;
  }
}

/**
 * A multi-message TCP answer: `res` (its answer, authority and additional) first, then one message
 * per entry of `res.more`. A message that would not fit in a TCP frame is split in two, as often
 * as needed, so no record is ever lost to truncation.
 */
function encodeMessages(q: ParsedQuery, res: DnsResponse, encoder: Encoder): Reply {
  const out: Buffer[] = [];
  const encode = (part: DnsResponse): void => {
    const buf = encodeResponse(q, part, Number.MAX_SAFE_INTEGER, encoder);
    if (buf.length <= TCP_MAX || part.answer.length < 2) {
      out.push(buf.length <= TCP_MAX ? buf : encodeResponse(q, part, TCP_MAX, encoder));
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

/** The name with every ASCII letter in the other case. */
function flipCase(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    out += (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) ? String.fromCharCode(c ^ 0x20) : name[i];
  }
  return out;
}

/** Same length and bytes, except the question name (nameLen bytes at offset 12). */
function sameButQuestionName(a: Buffer, b: Buffer, nameLen: number): boolean {
  if (a.length !== b.length || a.length < 12 + nameLen) return false;
  return a.compare(b, 0, 12, 0, 12) === 0 && a.compare(b, 12 + nameLen, b.length, 12 + nameLen, a.length) === 0;
}

/** Owner and RDATA names of a record, in the fields the encoder writes as names. */
function namesOf(rr: Rr): unknown[] {
  const data = (rr as { data?: unknown }).data as Record<string, unknown> | string | undefined;
  switch (rr.type) {
    case 'CNAME':
    case 'DNAME':
    case 'NS':
    case 'PTR':
      return [rr.name, data];
    case 'MX':
      return [rr.name, typeof data === 'object' ? data?.exchange : undefined];
    case 'SRV':
      return [rr.name, typeof data === 'object' ? data?.target : undefined];
    case 'SOA':
      return [rr.name, typeof data === 'object' ? data?.mname : undefined, typeof data === 'object' ? data?.rname : undefined];
    default:
      return [rr.name];
  }
}

/**
 * True when the two responses (to two spellings of `qname`) have the same records, and every
 * name that is the same in both (so came from the data, not the question) shares no suffix
 * with letters in it with the question, compared without regard to case.
 */
function dataNamesApart(a: DnsResponse, b: DnsResponse, qname: string): boolean {
  const fq = (n: string): string => fqdn(n).toLowerCase();
  const suffixes = new Set<string>();
  for (let s = fq(qname); s !== '.' && s !== ''; s = s.slice(s.indexOf('.') + 1)) if (/[a-z]/.test(s)) suffixes.add(s);
  const sections: [readonly Rr[], readonly Rr[]][] = [
    [a.answer, b.answer],
    [a.authority, b.authority],
    [a.additional, b.additional],
  ];
  for (const [x, y] of sections) {
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) {
      if (x[i]!.type !== y[i]!.type) return false;
      const nx = namesOf(x[i]!);
      const ny = namesOf(y[i]!);
      for (let j = 0; j < nx.length; j++) {
        const n1 = nx[j];
        const n2 = ny[j];
        if (typeof n1 !== 'string' || typeof n2 !== 'string' || n1.includes('\\')) return false;
        if (n1 !== n2) {
          if (n1.toLowerCase() !== n2.toLowerCase()) return false;
          continue;
        }
        for (let s = fq(n1); s !== '.' && s !== ''; s = s.slice(s.indexOf('.') + 1)) if (suffixes.has(s)) return false;
      }
    }
  }
  return true;
}

function patched(cached: Buffer, id: number, rd: number): Buffer {
  const out = Buffer.allocUnsafe(cached.length);
  // TypedArray set: Buffer.copy validates its arguments and makes a view per call.
  out.set(cached);
  out[0] = id >> 8;
  out[1] = id & 0xff;
  out[2] = (out[2]! & 0xfe) | rd;
  return out;
}
