// What the query observers (prometheus, log) read from the raw packets, spelled as CoreDNS
// (miekg/dns) spells it.
import typesTable from 'dns-packet/types.js';

/** Types dns-packet does not name but miekg/dns does. */
const EXTRA_TYPES: Record<number, string> = { 64: 'SVCB', 65: 'HTTPS', 62: 'CSYNC', 63: 'ZONEMD', 108: 'EUI48', 109: 'EUI64', 256: 'URI', 261: 'RESINFO' };

/** A type's mnemonic as CoreDNS prints it: 'A', 'HTTPS', 'TYPE65280' for unknown codes. */
export function typeString(code: number): string {
  const name = typesTable.toString(code);
  if (!name.startsWith('UNKNOWN_')) return name;
  return EXTRA_TYPES[code] ?? `TYPE${code}`;
}

/** A dns-packet type name ('A', 'UNKNOWN_65') as CoreDNS prints it. */
export function typeStringFromName(name: string): string {
  const m = /^UNKNOWN_(\d+)$/.exec(name);
  return m ? typeString(Number(m[1])) : name;
}

const CLASSES: Record<number, string> = { 1: 'IN', 3: 'CH', 4: 'HS', 254: 'NONE', 255: 'ANY' };

export function classString(code: number): string {
  return CLASSES[code] ?? `CLASS${code}`;
}

/** The types CoreDNS counts by name in coredns_dns_requests_total; every other type is "other". */
const MONITORED = new Set([1, 28, 5, 48, 43, 15, 50, 47, 2, 12, 46, 6, 33, 16, 65, 251, 252, 255]);

export function typeLabel(code: number): string {
  return MONITORED.has(code) ? typeString(code) : 'other';
}

/** RCODE of a reply (the header's four bits). */
export function replyRcode(reply: Buffer): number {
  return reply.length >= 4 ? reply[3]! & 0x0f : 2;
}

/** Header flags of a message as CoreDNS's {>rflags} prints them: 'qr,aa,rd'. */
export function flagsString(msg: Buffer): string {
  if (msg.length < 4) return '-';
  const hi = msg[2]!;
  const lo = msg[3]!;
  const out: string[] = [];
  if (hi & 0x80) out.push('qr');
  if (hi & 0x04) out.push('aa');
  if (hi & 0x02) out.push('tc');
  if (hi & 0x01) out.push('rd');
  if (lo & 0x80) out.push('ra');
  if (lo & 0x40) out.push('z');
  if (lo & 0x20) out.push('ad');
  if (lo & 0x10) out.push('cd');
  return out.join(',');
}

/** Nanoseconds as Go's strconv.FormatFloat(seconds, 'f', -1): '0.000123456', '1.5', '0'. */
export function secondsString(ns: bigint): string {
  const whole = ns / 1_000_000_000n;
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
}
