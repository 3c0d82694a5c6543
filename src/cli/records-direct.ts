// The answer `clusterdns records` reads for one question, taken from the chain's response
// without the wire round trip (question written, parsed, reply encoded, decoded) when the reply's
// records are provably what that round trip gives: every record of a kind whose encoding and
// decoding are known exactly here, nothing the handler would cut (record cap, 64 KiB TCP
// message), nothing it would fail on. Anything else is asked again through App.queryWire, so
// such a question is answered exactly as before; the direct reading only skips work.
import type { Answer } from 'dns-packet';
import type { App } from '../app.js';
import { Router, type Chain } from '../chain/chain.js';
import type { DnsRequest, DnsResponse } from '../chain/plugin.js';
import type { Rr } from '../dns/records.js';
import { DEFAULT_MAX_ANSWER_RECORDS } from '../server/limits.js';
import { lower } from './records-list.js';
import { fqdn } from '../pkg/names.js';

/** The question types the direct reading asks: types the handler passes to the chain as they are. */
const DIRECT_TYPES = new Set(['A', 'AAAA', 'CNAME', 'PTR', 'SRV', 'TXT', 'SOA', 'NS', 'MX']);
/** The largest TCP message, the handler's limit for the reply. */
const TCP_MAX = 65535;
const U32_MAX = 0xffffffff;

/** Octets `name` takes on the wire when it is plain (the encoder's fast path, the reply reader's too); -1 otherwise. */
export function plainNameWire(name: unknown): number {
  if (typeof name !== 'string') return -1;
  const len = name.length;
  if (len === 0 || (len === 1 && name.charCodeAt(0) === 46)) return 1;
  const end = name.charCodeAt(len - 1) === 46 ? len - 1 : len;
  // Printable ASCII but backslash and space: written byte for byte, read back as the same string.
  let label = 0;
  for (let i = 0; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c === 46) {
      if (label === 0) return -1;
      label = 0;
      continue;
    }
    if (c <= 0x20 || c > 0x7e || c === 92 || ++label > 63) return -1;
  }
  if (label === 0 || end + 2 > 255) return -1;
  return end + 2;
}

/** A plain name as the reply reader gives it back: without its trailing dot, '.' for the root. */
function decodedName(name: string): string {
  if (name.length <= 1) return '.';
  return name.charCodeAt(name.length - 1) === 46 ? name.slice(0, -1) : name;
}

function u16(v: unknown): boolean {
  return v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff);
}

function u32(v: unknown): boolean {
  return v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= U32_MAX);
}

/**
 * Whether the encoder writes `s` as an IPv4 address (1-3 digits per part, each at most 255) and
 * the reader reads it back as the same text (no part with a leading zero).
 */
function sameIpv4(s: unknown): boolean {
  if (typeof s !== 'string') return false;
  let parts = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46;
    if (c === 46) {
      if (digits === 0 || value > 255 || ++parts > 4) return false;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      if (digits === 1 && value === 0) return false;
      value = value * 10 + c - 48;
      digits++;
    } else return false;
  }
  return parts === 4;
}

/** A record's fields that need no per-type reading: false when the encoder could not write them as given. */
function plainHeader(r: Rr): boolean {
  const x = r as { class?: unknown; flush?: unknown; ttl?: unknown };
  return (x.class === undefined || x.class === 'IN') && !x.flush && u32(x.ttl);
}

type SrvData = { priority?: number; weight?: number; port?: number; target: string };

/**
 * Octets record `r` takes on the wire uncompressed, or -1 when its encoding and decoding are not
 * known exactly here; `read`: it is read back (answer and additional sections), else only written.
 */
function recordWire(r: Rr, read: boolean): number {
  if (!plainHeader(r)) return -1;
  const owner = plainNameWire(r.name);
  if (owner < 0) return -1;
  const data = (r as { data?: unknown }).data;
  switch (r.type) {
    case 'A':
      return sameIpv4(data) ? owner + 14 : -1;
    case 'CNAME':
    case 'PTR': {
      const target = plainNameWire(data);
      return target < 0 ? -1 : owner + 10 + target;
    }
    case 'SRV': {
      const d = data as { priority?: unknown; weight?: unknown; port?: unknown; target?: unknown } | null;
      if (typeof d !== 'object' || d === null || !u16(d.priority) || !u16(d.weight) || !u16(d.port)) return -1;
      const target = plainNameWire(d.target);
      return target < 0 ? -1 : owner + 16 + target;
    }
    case 'SOA': {
      // Only in the authority section, which is not read: it must only be writable.
      if (read) return -1;
      const d = data as { mname?: unknown; rname?: unknown; serial?: unknown; refresh?: unknown; retry?: unknown; expire?: unknown; minimum?: unknown } | null;
      if (typeof d !== 'object' || d === null || !u32(d.serial) || !u32(d.refresh) || !u32(d.retry) || !u32(d.expire) || !u32(d.minimum)) return -1;
      const m = plainNameWire(d.mname);
      const n = plainNameWire(d.rname);
      return m < 0 || n < 0 ? -1 : owner + 30 + m + n;
    }
    default:
      return -1;
  }
}

/** A record DirectReader vouched for, as the reply reader decodes it from the wire. */
export function decodedRecord(r: Rr): Answer {
  const ttl = (r as { ttl?: number }).ttl ?? 0;
  const data = (r as { data?: unknown }).data;
  const name = decodedName(r.name);
  if (r.type === 'SRV') {
    const d = data as SrvData;
    return {
      name,
      type: 'SRV',
      ttl,
      class: 'IN',
      flush: false,
      data: { priority: d.priority ?? 0, weight: d.weight ?? 0, port: d.port ?? 0, target: decodedName(d.target) },
    };
  }
  if (r.type === 'A') return { name, type: 'A', ttl, class: 'IN', flush: false, data: data as string };
  return { name, type: r.type as 'PTR', ttl, class: 'IN', flush: false, data: decodedName(data as string) };
}

/** rdataText(decodedRecord(r)), made without the decoded record: the names are as fully qualified. */
export function directRdata(r: Rr): string {
  const data = (r as { data?: unknown }).data;
  switch (r.type) {
    case 'A':
      return data as string;
    case 'SRV': {
      const d = data as SrvData;
      return `${d.priority ?? 0} ${d.weight ?? 0} ${d.port ?? 0} ${fqdn(d.target)}`;
    }
    default:
      return fqdn(data as string);
  }
}

/** The answer and additional records of a chain's response, vouched for by DirectReader. */
export interface DirectSections {
  direct: true;
  answer: readonly Rr[];
  additional: readonly Rr[];
}

const CLIENT = { address: '127.0.0.1', port: 5353 };

/**
 * Reads replies from the chains of `app`'s listeners directly. `sections` answers one question:
 * what replySections(App.queryWire(queryMessage(name, type), tcp)) gives, or undefined when the
 * direct reading cannot vouch for it (then the caller asks through the wire).
 */
export class DirectReader {
  private readonly routers: Router[];
  private readonly maxRecords: number;

  /** `entries`: each listener's zones and chains, as its handler routes them; `maxRecords`: the handler's cap. */
  constructor(entries: readonly (readonly { zone: string; chain: Chain }[])[], maxRecords = DEFAULT_MAX_ANSWER_RECORDS) {
    this.routers = entries.map((e) => new Router(e));
    this.maxRecords = maxRecords;
  }

  /** The reader of `app`'s listeners: the same entries in the same order as its handlers. */
  static of(app: App): DirectReader {
    return new DirectReader(
      app.specs.map((s) => s.entries),
      app.options.maxAnswerRecords,
    );
  }

  sections(name: string, type: string, listener: number): DirectSections | undefined | Promise<DirectSections | undefined> {
    if (!DIRECT_TYPES.has(type)) return undefined;
    // The name as the query parser reads it back from the question written for it.
    const wire = plainNameWire(name);
    if (wire < 0 || name.charCodeAt(0) === 46) return undefined;
    const qname = name.charCodeAt(name.length - 1) === 46 ? name : `${name}.`;
    const lowered = lower(qname);
    const chain = this.routers[listener]?.chainFor(lowered);
    if (!chain) return undefined;
    const req: DnsRequest = {
      id: 4242,
      name: qname,
      qname: lowered,
      qtype: type,
      qclass: 'IN',
      opcode: 'QUERY',
      rd: true,
      edns: undefined,
      protocol: 'tcp',
      client: CLIENT,
      local: CLIENT,
      queryAuthority: undefined,
    };
    let res: DnsResponse | Promise<DnsResponse>;
    try {
      res = chain.serve(req);
    } catch {
      // The handler answers SERVFAIL and logs why: the wire path does both.
      return undefined;
    }
    if (res instanceof Promise) {
      return res.then(
        (r) => this.read(r, wire),
        () => undefined,
      );
    }
    return this.read(res, wire);
  }

  private read(res: DnsResponse, questionWire: number): DirectSections | undefined {
    if (res.more && res.more.length > 0) return undefined;
    const { answer, authority, additional } = res;
    if (answer.length + authority.length + additional.length > this.maxRecords) return undefined;
    // Uncompressed, the message fits: the encoder, which only ever compresses, cuts nothing.
    let size = 12 + questionWire + 4;
    for (let i = 0; i < answer.length; i++) {
      const n = recordWire(answer[i]!, true);
      if (n < 0) return undefined;
      size += n;
    }
    for (let i = 0; i < authority.length; i++) {
      const n = recordWire(authority[i]!, false);
      if (n < 0) return undefined;
      size += n;
    }
    for (let i = 0; i < additional.length; i++) {
      const n = recordWire(additional[i]!, true);
      if (n < 0) return undefined;
      size += n;
    }
    if (size > TCP_MAX) return undefined;
    return { direct: true, answer, additional };
  }
}
