// forward: proxies queries to upstream resolvers, after CoreDNS's plugin/forward/forward.go
// (ServeDNS: the upstream loop, health-check kick-off, max_concurrent, failover) and
// plugin/pkg/proxy/connect.go (a new random ID per exchange, replies with another ID dropped).
import type { Logger } from 'pino';
import type { AppMetrics } from '../../metrics/index.js';
import { rcodeToString } from '../../pkg/rcode.js';
import dnsPacket from 'dns-packet';
import type { Packet } from 'dns-packet';
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { emptyResponse } from '../../chain/plugin.js';
import { optRr, Rcode, type Rr } from '../../dns/records.js';
import { fqdn, isSubdomain } from '../../pkg/names.js';
import { encodePacket } from '../../dns/encode.js';
import { typeCode } from '../../dns/query.js';
import type { ForwardConfig } from './config.js';
import { ExchangeError } from './exchange.js';
import { randomId, Upstream } from './upstream.js';
import { malformed, questionEnd } from './wire.js';

/** No upstream gave an answer: the chain turns this into SERVFAIL, as CoreDNS's (SERVFAIL, err). */
class ForwardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForwardError';
  }
}

/** Upper bound on exchanges for one query, on top of CoreDNS's 5 s deadline: tries per upstream. */
const TRIES_PER_UPSTREAM = 3;

/** Names of a decoded record written fully qualified, as the rest of clusterdns writes them. */
function normalize(rr: Rr): Rr {
  const r = { ...rr, name: fqdn(rr.name) };
  // The data is read from an upstream's reply: the checks below hold even where a record came
  // back without the data its type promises.
  switch (r.type) {
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      if (typeof r.data === 'string') r.data = fqdn(r.data);
      break;
    case 'MX':
      if (r.data && typeof r.data.exchange === 'string') r.data = { ...r.data, exchange: fqdn(r.data.exchange) };
      break;
    case 'SRV':
      if (r.data && typeof r.data.target === 'string') r.data = { ...r.data, target: fqdn(r.data.target) };
      break;
    case 'SOA':
      if (r.data) r.data = { ...r.data, mname: fqdn(r.data.mname ?? ''), rname: fqdn(r.data.rname ?? '') };
      break;
  }
  return r;
}

export class ForwardPlugin implements Plugin {
  readonly name = 'forward';
  readonly upstreams: Upstream[];
  private concurrent = 0;
  private robin = 0;
  private closed = false;

  constructor(
    readonly cfg: ForwardConfig,
    private readonly metrics: AppMetrics,
    log?: Logger,
  ) {
    const tls = { tls: cfg.tls, expireMs: cfg.expireMs, maxAgeMs: cfg.maxAgeMs, maxIdleConns: cfg.maxIdleConns, ...(log ? { log } : {}) };
    this.upstreams = cfg.upstreams.map(
      (a) =>
        new Upstream(
          a,
          {
            intervalMs: cfg.healthCheckMs,
            rd: cfg.healthCheckRd,
            domain: cfg.healthCheckDomain,
            tcp: cfg.forceTcp,
            timeoutMs: 1000,
            metrics,
          },
          tls,
        ),
    );
  }

  /** Queries in flight to upstreams now (for tests and logs). */
  get inFlight(): number {
    return this.concurrent;
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    if (!this.matches(req.qname)) return next(req);
    if (this.cfg.maxConcurrent > 0 && this.concurrent >= this.cfg.maxConcurrent) {
      // CoreDNS answers REFUSED (ErrLimitExceeded); this is no health failure.
      this.metrics.m.forwardMaxConcurrentRejects.inc();
      return emptyResponse(Rcode.REFUSED);
    }
    this.concurrent++;
    const answered = this.forward(req).finally(() => {
      this.concurrent--;
    });
    if (this.cfg.next.length === 0 && !this.cfg.nextOnNodata) return answered;
    // `next` / `next_on_nodata`: such an upstream answer goes to the next plugin (CoreDNS forward.go).
    return answered.then((res) =>
      this.cfg.next.includes(res.rcode) || (this.cfg.nextOnNodata && res.rcode === Rcode.NOERROR && res.answer.length === 0) ? next(req) : res,
    );
  }

  /** FROM matches and the name is not under an `except` name (FROM itself always forwards). */
  private matches(qname: string): boolean {
    if (!isSubdomain(qname, this.cfg.from)) return false;
    if (qname === this.cfg.from) return true;
    return !this.cfg.except.some((e) => isSubdomain(qname, e));
  }

  /** The upstreams in the order the policy tries them for one query (CoreDNS policy.go). */
  private list(): Upstream[] {
    const p = this.upstreams;
    switch (this.cfg.policy) {
      case 'sequential':
        return p;
      case 'round_robin': {
        this.robin = (this.robin + 1) >>> 0;
        const i = this.robin % p.length;
        return [p[i]!, ...p.slice(0, i), ...p.slice(i + 1)];
      }
      case 'random':
        return shuffled(p);
    }
  }

  private async forward(req: DnsRequest): Promise<DnsResponse> {
    const cfg = this.cfg;
    const n = this.upstreams.length;
    const list = this.list();
    const deadline = Date.now() + cfg.queryTimeoutMs;
    let i = 0;
    let fails = 0;
    let attempts = 0;
    let tries = 0;
    let lastErr: Error | undefined;
    let lastReply: DnsResponse | undefined;
    while (Date.now() < deadline && !this.closed && tries < n * TRIES_PER_UPSTREAM) {
      if (cfg.maxConnectAttempts > 0 && attempts >= cfg.maxConnectAttempts) break;
      if (i >= list.length) {
        i = 0;
        fails = 0;
      }
      let up = list[i++]!;
      if (up.down(cfg.maxFails)) {
        fails++;
        if (fails < n) continue;
        // Every upstream is down: health checking itself is taken to be broken.
        if (cfg.failfastAllUnhealthy) break;
        // CoreDNS's HealthcheckBrokenCount, counted where it picks the random upstream.
        this.metrics.m.forwardHealthcheckBroken.inc();
        up = this.upstreams[Math.floor(Math.random() * n)]!;
      }
      tries++;
      let reply: Packet;
      const started = process.hrtime.bigint();
      try {
        reply = await this.exchange(up, req, deadline);
      } catch (err) {
        lastErr = err as Error;
        if (cfg.maxFails !== 0) up.healthcheck();
        if (cfg.maxConnectAttempts > 0) attempts++;
        if (fails < n) continue;
        break;
      }
      const res = toResponse(reply);
      this.metrics.forwardExchange(up.label, rcodeToString(res.rcode), Number(process.hrtime.bigint() - started) / 1e9);
      if (cfg.failover.includes(res.rcode) && fails < n) {
        lastReply = res;
        fails++;
        continue;
      }
      return res;
    }
    if (lastReply) return lastReply;
    throw new ForwardError(
      lastErr ? `forward: no upstream answered ${req.name} ${req.qtype}: ${lastErr.message}` : `forward: no healthy upstreams for ${req.name} ${req.qtype}`,
    );
  }

  /**
   * One exchange with one upstream: over the client's transport unless force_tcp / prefer_udp say
   * otherwise, and again over TCP when a UDP reply is truncated. A tls:// upstream is asked over
   * TLS whatever those say (CoreDNS dials tcp-tls whenever TLS is configured).
   */
  private async exchange(up: Upstream, req: DnsRequest, deadline: number): Promise<Packet> {
    const cfg = this.cfg;
    const proto = up.tls ? 'tcp' : cfg.forceTcp ? 'tcp' : cfg.preferUdp ? 'udp' : req.protocol;
    const timeout = (): number => {
      const left = deadline - Date.now();
      if (left <= 0) throw new ExchangeError(up.label, 'query deadline passed');
      return Math.min(cfg.readTimeoutMs, left);
    };
    const first = await this.once(up, req, proto, timeout());
    if (proto === 'udp' && (first.flags ?? 0) & 0x0200) return this.once(up, req, 'tcp', timeout());
    return first;
  }

  private once(up: Upstream, req: DnsRequest, proto: 'udp' | 'tcp', timeoutMs: number): Promise<Packet> {
    const id = randomId();
    const query = buildQuery(req, id);
    return up.exchange(proto, query, (msg) => acceptReply(msg, id, req), timeoutMs);
  }

  close(): void {
    this.closed = true;
    for (const u of this.upstreams) u.close();
  }
}

/**
 * Several `forward` lines in one block, as CoreDNS 1.14 allows: each passes the names it does
 * not forward (other FROM, `except`) to the next one, and the last to the next plugin.
 */
export class ForwardChain implements Plugin {
  readonly name = 'forward';

  constructor(readonly members: readonly ForwardPlugin[]) {}

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    let step: Next = next;
    for (let i = this.members.length - 1; i >= 0; i--) {
      const member = this.members[i]!;
      const after = step;
      step = (r) => member.serve(r, after);
    }
    return step(req);
  }

  close(): void {
    for (const m of this.members) m.close();
  }
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The query sent upstream: the client's question as spelled, RD as asked, its EDNS size and DO. */
export function buildQuery(req: DnsRequest, id: number): Buffer {
  return encodePacket({
    id,
    type: 'query',
    flags: req.rd ? 0x0100 : 0,
    questions: [{ name: req.name, type: req.qtype, class: req.qclass } as NonNullable<Packet['questions']>[number]],
    additionals: req.edns ? [optRr(Math.max(512, req.edns.udpSize), req.edns.do)] : [],
  });
}

/** A reply with our ID whose records do not unpack (CoreDNS: Unpack fails, an exchange error). */
class MalformedReply extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedReply';
  }
}

/**
 * The reply to our query, or undefined to drop the message and keep waiting: it must be a
 * response with our ID and our question (name compared without regard to case, as 0x20
 * clients do; type and class exactly). Undecodable messages are dropped too. A reply with our
 * ID whose records are malformed throws MalformedReply: this upstream failed this exchange.
 */
function acceptReply(msg: Buffer, id: number, req: DnsRequest): Packet | undefined {
  if (msg.length < 12 || msg.readUInt16BE(0) !== id || (msg[2]! & 0x80) === 0) return undefined;
  let wire = msg;
  const bad = malformed(msg);
  if (bad !== undefined) {
    // A truncated reply may be cut mid-record: keep its header and question only, as CoreDNS's
    // truncateResponse does, and the exchange asks again over TCP.
    const end = (msg[2]! & 0x02) !== 0 ? questionEnd(msg) : undefined;
    if (end === undefined) throw new MalformedReply(`malformed reply to ${req.name} ${req.qtype}: ${bad}`);
    wire = Buffer.from(msg.subarray(0, end));
    wire.fill(0, 6, 12);
  }
  let p: Packet;
  try {
    p = dnsPacket.decode(wire);
  } catch {
    return undefined;
  }
  const q = p.questions?.[0];
  if (!q || p.questions!.length !== 1) return undefined;
  if (fqdn(q.name).toLowerCase() !== req.qname) return undefined;
  if (typeCode(q.type) !== typeCode(req.qtype) || (q.class ?? 'IN') !== req.qclass) return undefined;
  return p;
}

/** The upstream's reply as the chain's response: rcode (with the EDNS extended bits), AA, sections. */
export function toResponse(p: Packet): DnsResponse {
  const flags = p.flags ?? 0;
  let rcode = flags & 0x0f;
  const additional: Rr[] = [];
  for (const rr of p.additionals ?? []) {
    if (rr.type === 'OPT') {
      rcode |= ((rr as unknown as { extendedRcode?: number }).extendedRcode ?? 0) << 4;
      continue;
    }
    additional.push(normalize(rr));
  }
  return {
    rcode,
    aa: (flags & 0x0400) !== 0,
    // The upstream's recursion-available and authentic-data bits are relayed, as CoreDNS does.
    ra: (flags & 0x0080) !== 0,
    ad: (flags & 0x0020) !== 0,
    answer: (p.answers ?? []).map(normalize),
    authority: (p.authorities ?? []).map(normalize),
    additional,
    // The upstream's answer may change at any time: never reused by the server's answer cache.
    cacheable: false,
  };
}
