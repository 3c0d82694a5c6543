// What a DNS over HTTPS request carries (RFC 8484), checked as CoreDNS's plugin/pkg/doh reads it:
// the path, the method, the `dns=` value or the body, and the message's header against the
// request filter miekg/dns applies before any plugin sees a message (DefaultMsgAcceptFunc).
import { isProblem, parseQuery } from '../dns/query.js';

export const DOH_PATH = '/dns-query';
export const DOH_MIME = 'application/dns-message';
/** The largest DNS message a request may carry: what one TCP frame can (RFC 1035 4.2.2). */
export const DOH_MAX_MESSAGE_BYTES = 65_535;
/** The longest `dns=` value: the largest message in unpadded base64url. */
export const DOH_MAX_DNS_PARAM = Math.ceil((DOH_MAX_MESSAGE_BYTES * 4) / 3);

/** Why a request gets no DNS answer: the HTTP status and the reason (for the debug log). */
export interface Refusal {
  status: 400 | 404 | 415;
  reason: string;
}

/** 404 off /dns-query, whatever the method or query string (CoreDNS checks the path first). */
export function checkPath(url: string | undefined): Refusal | undefined {
  const u = url ?? '';
  const q = u.indexOf('?');
  const path = q === -1 ? u : u.slice(0, q);
  return path === DOH_PATH ? undefined : { status: 404, reason: `path ${path.slice(0, 64)} is not ${DOH_PATH}` };
}

/** The message of a GET: exactly one `dns=` value, unpadded base64url (Go's RawURLEncoding, as CoreDNS decodes it). */
export function fromGet(url: string | undefined): Buffer | Refusal {
  const u = url ?? '';
  const q = u.indexOf('?');
  // A query string longer than the largest value (and a little for other parameters) is refused before parsing it.
  if (q !== -1 && u.length - q > DOH_MAX_DNS_PARAM + 1024) return { status: 400, reason: 'query string too long' };
  const values = new URLSearchParams(q === -1 ? '' : u.slice(q + 1)).getAll('dns');
  if (values.length === 0) return { status: 400, reason: "no 'dns' query parameter" };
  if (values.length > 1) return { status: 400, reason: "several 'dns' query parameters" };
  const b64 = values[0]!;
  if (b64.length > DOH_MAX_DNS_PARAM) return { status: 400, reason: 'dns query too large' };
  // Node's decoder skips what is not base64url; Go's rejects it, padding included.
  if (!/^[A-Za-z0-9_-]*$/.test(b64) || b64.length % 4 === 1) return { status: 400, reason: "'dns' is not unpadded base64url" };
  return Buffer.from(b64, 'base64url');
}

/** A POST's media type must be application/dns-message (parameters aside). */
export function checkContentType(header: string | undefined): Refusal | undefined {
  const type = (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === DOH_MIME ? undefined : { status: 415, reason: `content type ${JSON.stringify((header ?? '').slice(0, 64))} is not ${DOH_MIME}` };
}

/**
 * The request filter of miekg/dns (DefaultMsgAcceptFunc), which CoreDNS's DoH applies by
 * unpacking with dnsutil.UnpackRequest: responses, opcodes other than QUERY and NOTIFY (UPDATE
 * among them), and section counts no query has are a bad request, as is a message that does not
 * parse. NOTIFY passes here and gets its NOTIMP from the handler, as over UDP.
 */
export function checkMessage(msg: Buffer): Refusal | undefined {
  if (msg.length < 12) return { status: 400, reason: 'shorter than a DNS header' };
  const flags = msg.readUInt16BE(2);
  if (flags & 0x8000) return { status: 400, reason: 'a response, not a query' };
  const opcode = (flags >> 11) & 0xf;
  if (opcode !== 0 && opcode !== 4) return { status: 400, reason: `opcode ${opcode} is not served` };
  if (msg.readUInt16BE(4) !== 1 || msg.readUInt16BE(6) > 1 || msg.readUInt16BE(8) > 1 || msg.readUInt16BE(10) > 2)
    return { status: 400, reason: 'section counts of no query' };
  const parsed = parseQuery(msg);
  if (isProblem(parsed) && parsed.kind !== 'notimp') return { status: 400, reason: 'not a DNS message' };
  return undefined;
}
