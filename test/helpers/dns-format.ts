// Presentation-format helpers for the behaviour tests: a decoded dns-packet response or a `dig`
// output becomes the same shape (rcode, flags, sections as normalized presentation lines), so one
// expectation table can be checked against every client.
//
// Line format (single spaces): `owner TTL CLASS TYPE RDATA`, e.g.
//   `svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1`
//   `_http._tcp.svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local.`
//   `dns-version.cluster.local. 28800 IN TXT "1.1.0"`
// Names keep their letter case (the tests check that answers echo the question's spelling).
// In an expected line a token `*` matches any one token (used for the SOA serial).
import type { Packet, Answer } from 'dns-packet';

export type Section = 'answer' | 'authority' | 'additional';

/** What a client saw, in comparable form. */
export interface Observed {
  rcode: string;
  /** Header flags that were set, lowercase (`qr`, `aa`, `tc`, `rd`, `ra`, `ad`, `cd`). */
  flags: string[];
  answer: string[];
  authority: string[];
  additional: string[];
}

function fqdn(name: string): string {
  if (name === '' || name === '.') return '.';
  return name.endsWith('.') ? name : `${name}.`;
}

/** RFC 5952 text form of an IPv6 address (lowercase, longest zero run compressed). */
export function canonicalIPv6(addr: string): string {
  let text = addr.toLowerCase();
  const zoneAt = text.indexOf('%');
  if (zoneAt >= 0) text = text.slice(0, zoneAt);
  // An embedded IPv4 tail becomes two hex groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  let groups: string[];
  if (text.includes('::')) {
    const [head, tail] = text.split('::') as [string, string];
    const h = head === '' ? [] : head.split(':');
    const t = tail === '' ? [] : tail.split(':');
    groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  } else {
    groups = text.split(':');
  }
  if (groups.length !== 8) return addr;
  const nums = groups.map((g) => parseInt(g, 16).toString(16));
  // Longest run of at least two zero groups; the first one wins a tie.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (nums[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && nums[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return nums.join(':');
  return `${nums.slice(0, bestStart).join(':')}::${nums.slice(bestStart + bestLen).join(':')}`;
}

/** Reverse-lookup owner name of an IPv4 or IPv6 address, with the trailing dot. */
export function reverseName(ip: string): string {
  if (ip.includes(':')) {
    const full = canonicalIPv6(ip);
    const [head, tail] = full.includes('::') ? (full.split('::') as [string, string]) : [full, ''];
    const h = head === '' ? [] : head.split(':');
    const t = tail === '' ? [] : tail.split(':');
    const groups = full.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
    const nibbles = groups
      .map((g) => g.padStart(4, '0'))
      .join('')
      .split('');
    return `${nibbles.reverse().join('.')}.ip6.arpa.`;
  }
  return `${ip.split('.').reverse().join('.')}.in-addr.arpa.`;
}

function quoteTxt(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function rdataOf(rr: Answer): string {
  const data = (rr as { data?: unknown }).data;
  switch (rr.type) {
    case 'A':
      return String(data);
    case 'AAAA':
      return canonicalIPv6(String(data));
    case 'CNAME':
    case 'PTR':
    case 'NS':
    case 'DNAME':
      return fqdn(String(data));
    case 'SRV': {
      const d = data as { priority?: number; weight?: number; port: number; target: string };
      return `${d.priority ?? 0} ${d.weight ?? 0} ${d.port} ${fqdn(d.target)}`;
    }
    case 'MX': {
      const d = data as { preference?: number; exchange: string };
      return `${d.preference ?? 0} ${fqdn(d.exchange)}`;
    }
    case 'SOA': {
      const d = data as { mname: string; rname: string; serial?: number; refresh?: number; retry?: number; expire?: number; minimum?: number };
      return `${fqdn(d.mname)} ${fqdn(d.rname)} ${d.serial ?? 0} ${d.refresh ?? 0} ${d.retry ?? 0} ${d.expire ?? 0} ${d.minimum ?? 0}`;
    }
    case 'TXT': {
      const parts = Array.isArray(data) ? data : [data];
      return parts.map((p) => quoteTxt(Buffer.isBuffer(p) ? p.toString('utf8') : String(p))).join(' ');
    }
    default:
      return Buffer.isBuffer(data) ? `\\# ${data.length} ${data.toString('hex')}` : JSON.stringify(data);
  }
}

/** One record of a decoded packet as a presentation line. */
export function rrToLine(rr: Answer): string {
  const cls = (rr as { class?: string }).class ?? 'IN';
  const ttl = (rr as { ttl?: number }).ttl ?? 0;
  return `${fqdn(rr.name)} ${ttl} ${cls} ${rr.type} ${rdataOf(rr)}`;
}

const FLAG_BITS: Array<[string, number]> = [
  ['qr', 1 << 15],
  ['aa', 1 << 10],
  ['tc', 1 << 9],
  ['rd', 1 << 8],
  ['ra', 1 << 7],
  ['ad', 1 << 5],
  ['cd', 1 << 4],
];

/** A decoded response packet (from app.query or a socket) in comparable form. */
export function packetToObserved(p: Packet): Observed {
  const flagsNum = (p as { flags?: number }).flags ?? 0;
  const flags = FLAG_BITS.filter(([, bit]) => (flagsNum & bit) !== 0).map(([n]) => n);
  if ((p as { type?: string }).type === 'response' && !flags.includes('qr')) flags.unshift('qr');
  const rcode = (p as { rcode?: string }).rcode ?? 'NOERROR';
  const lines = (rrs: readonly Answer[] | undefined): string[] => (rrs ?? []).filter((rr) => rr.type !== 'OPT').map((rr) => normalizeLine(rrToLine(rr)));
  return {
    rcode,
    flags,
    answer: lines(p.answers),
    authority: lines(p.authorities),
    additional: lines(p.additionals),
  };
}

/** Tokenizes a presentation line, keeping a quoted TXT string as one token. */
function tokens(line: string): string[] {
  const out: string[] = [];
  const re = /"(?:[^"\\]|\\.)*"|\S+/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) out.push(m[0]);
  return out;
}

/** Single spaces, uppercase class and type, canonical IPv6 in AAAA rdata. */
export function normalizeLine(line: string): string {
  const t = tokens(line.trim());
  if (t.length >= 4) {
    t[2] = t[2]!.toUpperCase();
    t[3] = t[3]!.toUpperCase();
    if (t[3] === 'AAAA' && t[4] && t[4] !== '*') t[4] = canonicalIPv6(t[4]);
  }
  return t.join(' ');
}

/**
 * Parses `dig +noall +comments +answer +authority +additional` output: the `status:` and `flags:`
 * of the header comment and the records of each section. The OPT pseudo-section is ignored.
 */
export function parseDig(out: string): Observed {
  const obs: Observed = { rcode: '', flags: [], answer: [], authority: [], additional: [] };
  let section: Section | undefined;
  for (const raw of out.split('\n')) {
    const line = raw.trimEnd();
    const status = /status:\s*([A-Z0-9]+)/.exec(line);
    if (line.includes('->>HEADER<<-') && status) obs.rcode = status[1]!;
    const flags = /^;; flags:([^;]*);/.exec(line);
    if (flags) obs.flags = flags[1]!.trim().split(/\s+/).filter(Boolean);
    if (line.startsWith(';; ANSWER SECTION')) section = 'answer';
    else if (line.startsWith(';; AUTHORITY SECTION')) section = 'authority';
    else if (line.startsWith(';; ADDITIONAL SECTION')) section = 'additional';
    else if (line.startsWith(';;') && line.includes('SECTION')) section = undefined;
    else if (line === '') section = undefined;
    else if (!line.startsWith(';') && section) obs[section].push(normalizeLine(line));
  }
  return obs;
}

function tokenMatch(expected: string, actual: string): boolean {
  const e = tokens(expected);
  const a = tokens(actual);
  return e.length === a.length && e.every((tok, i) => tok === '*' || tok === a[i]);
}

/**
 * Resolves the `*` wildcards of the expected lines against the actual lines (each actual line
 * used once), so that `expect(sorted(actual)).toEqual(sorted(result))` passes exactly when the
 * two are equal as sets modulo wildcards, and otherwise shows a readable diff.
 */
export function resolveWildcards(expected: readonly string[], actual: readonly string[]): string[] {
  const pool = [...actual];
  return expected.map((raw) => {
    const e = normalizeLine(raw);
    if (!tokens(e).includes('*')) return e;
    const i = pool.findIndex((a) => tokenMatch(e, a));
    if (i < 0) return e;
    const [hit] = pool.splice(i, 1);
    return hit!;
  });
}

export function sorted(lines: readonly string[]): string[] {
  return [...lines].sort();
}
