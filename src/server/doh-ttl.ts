// The max-age of a DNS over HTTPS answer, read from the encoded reply as CoreDNS computes it
// (plugin/pkg/response Typify, then dnsutil.MinimalTTLWithMaximum with its bounds), so an HTTP
// cache in front of the server never keeps an answer longer than its records live.

/** CoreDNS's dnsutil.MinimalDefaultTTL: errors, transfers and empty answers, seconds. */
export const DOH_MIN_MAX_AGE = 5;
/** CoreDNS's dnsutil.MaximumDefaultTTL, seconds. */
export const DOH_MAX_MAX_AGE = 3600;

const TYPE_OPT = 41;
const TYPE_SOA = 6;
const TYPE_NS = 2;
const TYPE_RRSIG = 46;
const TYPE_AXFR = 252;
const TYPE_IXFR = 251;
const OPCODE_NOTIFY = 4;
const OPCODE_UPDATE = 5;
/** miekg/dns's year68: RRSIG times are serial numbers modulo 2^32 (RFC 4034 3.1.5). */
const YEAR68 = 2 ** 31;

interface Rec {
  type: number;
  ttl: number;
  rdata: number;
  rdlen: number;
}

function skipName(buf: Buffer, at: number): number {
  let i = at;
  for (;;) {
    const len = buf[i];
    if (len === undefined) throw new RangeError('truncated name');
    if ((len & 0xc0) === 0xc0) return i + 2;
    if (len === 0) return i + 1;
    i += len + 1;
  }
}

/** The records of the three sections, each with its section (0 answer, 1 authority, 2 additional). */
function records(buf: Buffer, counts: readonly number[], start: number): Rec[][] {
  let i = start;
  const out: Rec[][] = [];
  for (const count of counts) {
    const section: Rec[] = [];
    for (let n = 0; n < count; n++) {
      i = skipName(buf, i);
      if (i + 10 > buf.length) throw new RangeError('truncated record');
      const rdlen = buf.readUInt16BE(i + 8);
      section.push({ type: buf.readUInt16BE(i), ttl: buf.readUInt32BE(i + 4), rdata: i + 10, rdlen });
      i += 10 + rdlen;
    }
    out.push(section);
  }
  return out;
}

function expired(buf: Buffer, r: Rec, now: number): boolean {
  if (r.type !== TYPE_RRSIG || r.rdlen < 16) return false;
  const expiration = buf.readUInt32BE(r.rdata + 8);
  const inception = buf.readUInt32BE(r.rdata + 12);
  const ti = inception + Math.trunc((inception - now) / YEAR68) * YEAR68;
  const te = expiration + Math.trunc((expiration - now) / YEAR68) * YEAR68;
  return !(ti <= now && now <= te);
}

/** Seconds an HTTP cache may keep this encoded reply (`Cache-Control: max-age`). */
export function dohMaxAge(reply: Buffer, nowMs = Date.now()): number {
  try {
    return maxAge(reply, Math.floor(nowMs / 1000));
  } catch {
    // A reply the server encoded is well formed; should one not be, no caching beyond the floor.
    return DOH_MIN_MAX_AGE;
  }
}

function maxAge(buf: Buffer, now: number): number {
  if (buf.length < 12) return DOH_MIN_MAX_AGE;
  const flags = buf.readUInt16BE(2);
  const opcode = (flags >> 11) & 0xf;
  const qdcount = buf.readUInt16BE(4);
  let i = 12;
  let qtype = -1;
  for (let n = 0; n < qdcount; n++) {
    i = skipName(buf, i);
    if (n === 0) qtype = buf.readUInt16BE(i);
    i += 4;
  }
  const [answer, authority, additional] = records(buf, [buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)], i) as [Rec[], Rec[], Rec[]];
  const opt = additional.find((r) => r.type === TYPE_OPT);
  // The extended RCODE's upper bits ride in the OPT record's TTL (RFC 6891 6.1.3).
  const rcode = (flags & 0xf) | (opt ? (opt.ttl >>> 24) << 4 : 0);
  const dnssecOk = opt !== undefined && (opt.ttl & 0x8000) !== 0;

  // Typify: only positive, negative and no-data answers are cached by their records.
  if (opcode === OPCODE_UPDATE || opcode === OPCODE_NOTIFY || qtype === TYPE_AXFR || qtype === TYPE_IXFR) return DOH_MIN_MAX_AGE;
  if (dnssecOk && [answer, authority, additional].some((s) => s.some((r) => expired(buf, r, now)))) return DOH_MIN_MAX_AGE;
  let cached: boolean;
  if (answer.length > 0) cached = rcode === 0;
  else if (rcode === 0 && authority.some((r) => r.type === TYPE_SOA)) cached = true;
  else if (rcode === 3) cached = true;
  // Delegations (NS in authority) are not cached by their records; a bare NOERROR is.
  else cached = rcode === 0 && !authority.some((r) => r.type === TYPE_NS);
  if (!cached) return DOH_MIN_MAX_AGE;

  // MinimalTTLWithMaximum: nothing but an OPT record is a fail safe, not a TTL.
  if (answer.length + authority.length === 0 && additional.every((r) => r.type === TYPE_OPT)) return DOH_MIN_MAX_AGE;
  let min = DOH_MAX_MAX_AGE;
  for (const r of [...answer, ...authority, ...additional]) if (r.type !== TYPE_OPT && r.ttl < min) min = r.ttl;
  return min;
}
