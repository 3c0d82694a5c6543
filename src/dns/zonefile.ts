// RFC 1035 section 5 master files ("zone files"), as BIND and miekg/dns (CoreDNS) read them:
// $ORIGIN, $TTL (RFC 2308), $INCLUDE (relative to the including file, as miekg/dns), `@`,
// relative names, a blank owner repeating the previous one, parentheses across lines, `;`
// comments, quoted strings, `\X` and `\DDD` escapes, TTL and class in either order, BIND's TTL
// units (`1h30m`, `2W`). Records come out in dns-packet's shapes with names in clusterdns's
// presentation form: fully qualified, owner and most RDATA names lowercased (as CoreDNS's
// zone.Insert does), special bytes escaped by the label escaper question names use too
// (pkg/names.ts).
//
// Every error is a ZoneFileError naming the file (the included file for included lines), the
// line and the reason. Nothing is guessed: an unknown type or class, a bad address, a label
// over 63 octets, a TTL out of range or a stray parenthesis stops the load.
import { readRegularText, UnreadableFile } from '../pkg/regular-file.js';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Rr } from './records.js';
import { canonicalIp, isIPv4, isIPv6 } from '../pkg/ip.js';
import { escapeLabel, NameSyntaxError, presentationLabels } from '../pkg/names.js';
import { pushAll } from '../pkg/arrays.js';

export class ZoneFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'ZoneFileError';
  }
}

/** One record and where it was written. */
export interface ZoneRecord {
  rr: Rr;
  file: string;
  line: number;
}

export interface ZoneFileOptions {
  /** Initial origin (fully qualified, any case): the zone the file is loaded for. */
  origin: string;
  /** Path of the file, for messages and as the base of relative $INCLUDE paths. */
  file: string;
  /** The file's text; read from `file` when absent. */
  text?: string;
  /** Reads an included file; default a bounded read of a regular file (pkg/regular-file). */
  readFile?: (path: string) => string;
}

export interface ParsedZoneFile {
  records: ZoneRecord[];
  /** Every file read, the main one first (reload watches all of them). */
  files: string[];
  /** Their texts, in the same order. */
  texts: string[];
}

/** Record types the parser understands. */
const SUPPORTED_TYPES = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'PTR', 'CAA', 'DNAME'] as const;
const SUPPORTED = new Set<string>(SUPPORTED_TYPES);
/** Types that exist but are not supported here, so the error can say which it is. */
const KNOWN_UNSUPPORTED = new Set([
  'HINFO',
  'MINFO',
  'RP',
  'AFSDB',
  'SIG',
  'KEY',
  'LOC',
  'NAPTR',
  'KX',
  'CERT',
  'DS',
  'SSHFP',
  'IPSECKEY',
  'RRSIG',
  'NSEC',
  'DNSKEY',
  'DHCID',
  'NSEC3',
  'NSEC3PARAM',
  'TLSA',
  'SMIMEA',
  'HIP',
  'CDS',
  'CDNSKEY',
  'OPENPGPKEY',
  'CSYNC',
  'ZONEMD',
  'SVCB',
  'HTTPS',
  'SPF',
  'URI',
  'WKS',
  'MB',
  'MG',
  'MR',
  'NULL',
  'X25',
  'ISDN',
  'RT',
  'NSAP',
  'PX',
  'GPOS',
  'A6',
  'APL',
  'EUI48',
  'EUI64',
  'L32',
  'L64',
  'LP',
  'NID',
  'TKEY',
  'TSIG',
  'MD',
  'MF',
  'AXFR',
  'IXFR',
  'ANY',
  'OPT',
]);
const OTHER_CLASSES = new Set(['CH', 'CS', 'HS', 'NONE', 'ANY']);
const MAX_TTL = 0x7fffffff;
const MAX_INCLUDE_DEPTH = 8;

// ---- lexer -------------------------------------------------------------------------------------

interface Tok {
  /** Raw text, quotes removed, escapes kept. */
  text: string;
  quoted: boolean;
  line: number;
}

/** One logical line: the tokens of a record or directive, parentheses joined. */
interface Entry {
  line: number;
  /** The line started with white space: the owner is the previous record's. */
  blankOwner: boolean;
  toks: Tok[];
}

function lex(text: string, file: string): Entry[] {
  const entries: Entry[] = [];
  const fail = (line: number, reason: string): never => {
    throw new ZoneFileError(file, line, reason);
  };
  let i = 0;
  let line = 1;
  let paren = 0;
  let parenLine = 0;
  let cur: Entry | undefined;
  let leadingSpace = false; // white space seen at the start of the current physical line
  let lineStart = true;
  const n = text.length;
  const entry = (): Entry => {
    if (!cur) {
      cur = { line, blankOwner: leadingSpace, toks: [] };
      entries.push(cur);
    }
    return cur;
  };
  while (i < n) {
    const ch = text[i]!;
    if (ch === '\n') {
      line++;
      i++;
      if (paren === 0) cur = undefined;
      lineStart = true;
      leadingSpace = false;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f' || ch === '\v') {
      if (lineStart) leadingSpace = true;
      i++;
      continue;
    }
    lineStart = false;
    if (ch === ';') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (ch === '(') {
      if (paren > 0) fail(line, `nested "(" (the one at line ${parenLine} is still open)`);
      entry();
      paren = 1;
      parenLine = line;
      i++;
      continue;
    }
    if (ch === ')') {
      if (paren === 0) fail(line, 'unbalanced ")" without an opening "("');
      paren = 0;
      i++;
      continue;
    }
    if (ch === '"') {
      const start = line;
      let val = '';
      i++;
      for (;;) {
        if (i >= n || text[i] === '\n') fail(start, 'unterminated quoted string');
        const c = text[i]!;
        if (c === '\\') {
          if (i + 1 >= n) fail(start, 'backslash at the end of the file');
          val += c + text[i + 1]!;
          i += 2;
          continue;
        }
        if (c === '"') {
          i++;
          break;
        }
        val += c;
        i++;
      }
      entry().toks.push({ text: val, quoted: true, line: start });
      continue;
    }
    let val = '';
    while (i < n) {
      const c = text[i]!;
      if (c === '\\') {
        if (i + 1 >= n || text[i + 1] === '\n') fail(line, 'backslash at the end of a line');
        val += c + text[i + 1]!;
        i += 2;
        continue;
      }
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === ';' || c === '(' || c === ')' || c === '"') break;
      val += c;
      i++;
    }
    entry().toks.push({ text: val, quoted: false, line });
  }
  if (paren > 0) fail(parenLine, '"(" is never closed');
  return entries;
}

// ---- names and strings -------------------------------------------------------------------------

/** Bytes of a character-string or label text with `\X` and `\DDD` escapes resolved. */
function unescapeText(raw: string, fail: (reason: string) => never): number[] {
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== '\\') {
      const code = c.charCodeAt(0);
      if (code < 0x80) out.push(code);
      else {
        // Take the whole code point (surrogate pairs) as UTF-8.
        const cp = raw.codePointAt(i)!;
        if (cp > 0xffff) i++;
        pushAll(out, Buffer.from(String.fromCodePoint(cp), 'utf8'));
      }
      continue;
    }
    const d = raw.slice(i + 1, i + 4);
    if (/^\d{3}$/.test(d)) {
      const v = Number(d);
      if (v > 255) fail(`escape \\${d} is over 255`);
      out.push(v);
      i += 3;
    } else if (/^\d/.test(d)) {
      fail(`escape \\${d.replace(/\D.*$/, '')} must have three decimal digits (\\DDD)`);
    } else {
      out.push(raw.charCodeAt(i + 1));
      i++;
    }
  }
  return out;
}

/**
 * Splits presentation text into labels of bytes (pkg/names presentationLabels, the encoder's
 * parser too); `absolute` when it ends in an unescaped dot. Lengths are checked by the caller,
 * once the origin is added.
 */
function nameLabels(raw: string, fail: (reason: string) => never): { labels: Uint8Array[]; absolute: boolean } {
  try {
    return presentationLabels(raw, false);
  } catch (err) {
    if (!(err instanceof NameSyntaxError)) throw err;
    switch (err.problem) {
      case 'short escape':
        return fail(`escape \\${err.digits} must have three decimal digits (\\DDD)`);
      case 'escape over 255':
        return fail(`escape \\${err.digits} is over 255`);
      case 'lone backslash':
        return fail(`name "${raw}" ends in a lone backslash`);
      default:
        return fail(`empty label in name "${raw}"`);
    }
  }
}

function lowerBytes(bytes: Uint8Array): Uint8Array {
  return bytes.map((c) => (c >= 0x41 && c <= 0x5a ? c + 32 : c));
}

/** Wire length of a presentation name in clusterdns form (escapes resolved). */
function wireLength(labels: readonly Uint8Array[]): number {
  return labels.reduce((s, l) => s + l.length + 1, 1);
}

/**
 * Parses a domain name in presentation form relative to `origin` (already canonical) into
 * clusterdns form. `@` is the origin. Lowercased unless keepCase.
 */
export function parseDomainName(raw: string, origin: string, fail: (reason: string) => never, keepCase = false): string {
  if (raw === '@') return origin;
  if (raw === '') fail('empty name');
  const { labels, absolute } = nameLabels(raw, fail);
  const originLabels = absolute || origin === '.' ? [] : nameLabels(origin, fail).labels;
  for (const l of labels) if (l.length > 63) fail(`label "${escapeLabel(l)}" is ${l.length} octets; the limit is 63`);
  const all = [...labels, ...originLabels];
  if (wireLength(all) > 255) fail(`name "${raw}" is longer than 255 octets`);
  if (all.length === 0) return '.';
  return all.map((l) => escapeLabel(keepCase ? l : lowerBytes(l))).join('.') + '.';
}

/** TTL in seconds: a number, or BIND's units (`1h30m`, `2w`), at most 2^31-1 (RFC 2181). */
export function parseTtl(raw: string): number | undefined {
  let secs: number;
  if (/^\d+$/.test(raw)) secs = Number(raw);
  else if (/^(\d+[wdhms])+$/i.test(raw)) {
    secs = 0;
    const mult: Record<string, number> = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 };
    for (const m of raw.matchAll(/(\d+)([wdhms])/gi)) secs += Number(m[1]) * mult[m[2]!.toLowerCase()]!;
  } else return undefined;
  return secs;
}

function looksLikeTtl(raw: string): boolean {
  return /^\d+$/.test(raw) || /^(\d+[wdhms])+$/i.test(raw);
}

// ---- parser ------------------------------------------------------------------------------------

interface State {
  origin: string;
  /** $TTL, once set. */
  defaultTtl?: number;
  /** The last TTL written explicitly (RFC 1035 default when there is no $TTL). */
  lastTtl?: number;
  prevOwner?: string;
}

interface Ctx {
  records: ZoneRecord[];
  files: string[];
  texts: string[];
  readFile: (path: string) => string;
}

export function parseZoneFile(opts: ZoneFileOptions): ParsedZoneFile {
  const readFile = opts.readFile ?? ((p: string) => readRegularText(p));
  const ctx: Ctx = { records: [], files: [], texts: [], readFile };
  const origin = parseDomainName(opts.origin, '.', (reason) => {
    throw new ZoneFileError(opts.file, 0, `origin "${opts.origin}": ${reason}`);
  });
  let text = opts.text;
  if (text === undefined) {
    try {
      text = readFile(opts.file);
    } catch (err) {
      throw new ZoneFileError(opts.file, 0, `cannot read the zone file: ${err instanceof UnreadableFile ? err.reason : (err as Error).message}`);
    }
  }
  parseText(text, opts.file, { origin }, ctx, [opts.file]);
  return { records: ctx.records, files: ctx.files, texts: ctx.texts };
}

function parseText(text: string, file: string, state: State, ctx: Ctx, chain: string[]): void {
  ctx.files.push(file);
  ctx.texts.push(text);
  for (const e of lex(text, file)) {
    const fail = (reason: string, line = e.line): never => {
      throw new ZoneFileError(file, line, reason);
    };
    const first = e.toks[0];
    if (!first) continue; // "( )" alone
    if (!e.blankOwner && !first.quoted && first.text.startsWith('$')) {
      directive(e, file, state, ctx, chain, fail);
      continue;
    }
    record(e, file, state, ctx, fail);
  }
}

function directive(e: Entry, file: string, state: State, ctx: Ctx, chain: string[], fail: (reason: string) => never): void {
  const [d, ...args] = e.toks;
  const name = d!.text.toUpperCase();
  switch (name) {
    case '$ORIGIN': {
      if (args.length !== 1) fail('$ORIGIN takes one domain name');
      state.origin = parseDomainName(args[0]!.text, state.origin, (r) => fail(`$ORIGIN: ${r}`));
      return;
    }
    case '$TTL': {
      if (args.length !== 1) fail('$TTL takes one TTL');
      const ttl = parseTtl(args[0]!.text);
      if (ttl === undefined) fail(`$TTL: "${args[0]!.text}" is not a TTL (seconds, or units like 1h30m)`);
      if (ttl! > MAX_TTL) fail(`$TTL: ${args[0]!.text} is over the maximum ${MAX_TTL}`);
      state.defaultTtl = ttl;
      return;
    }
    case '$INCLUDE': {
      if (args.length < 1 || args.length > 2) fail('$INCLUDE takes a file name and an optional origin');
      const rel = Buffer.from(unescapeText(args[0]!.text, (r) => fail(`$INCLUDE: ${r}`))).toString('utf8');
      const path = isAbsolute(rel) ? rel : resolve(dirname(file), rel);
      if (chain.includes(path)) fail(`$INCLUDE cycle: ${[...chain, path].join(' -> ')}`);
      if (chain.length >= MAX_INCLUDE_DEPTH) fail(`$INCLUDE nested deeper than ${MAX_INCLUDE_DEPTH} files`);
      let text: string;
      try {
        text = ctx.readFile(path);
      } catch (err) {
        fail(`$INCLUDE ${rel}: cannot read ${path}: ${(err as Error).message}`);
      }
      const origin = args[1] ? parseDomainName(args[1].text, state.origin, (r) => fail(`$INCLUDE origin: ${r}`)) : state.origin;
      // The included file gets its own origin; the parent's origin and owner are unchanged
      // after it (RFC 1035 section 5.1). TTL defaults carry through both ways: a $TTL in the
      // included file still applies after it, as named-checkzone loads it.
      const sub: State = { origin, defaultTtl: state.defaultTtl, lastTtl: state.lastTtl };
      parseText(text, path, sub, ctx, [...chain, path]);
      state.defaultTtl = sub.defaultTtl;
      state.lastTtl = sub.lastTtl;
      return;
    }
    case '$GENERATE':
      fail('$GENERATE is a BIND extension clusterdns does not support; write the records out');
      break;
    default:
      fail(`unknown directive ${d!.text} (known: $ORIGIN, $TTL, $INCLUDE)`);
  }
}

function record(e: Entry, file: string, state: State, ctx: Ctx, fail: (reason: string, line?: number) => never): void {
  const toks = e.toks;
  let k = 0;
  let owner: string;
  if (e.blankOwner) {
    if (!state.prevOwner) fail('record with no owner name and no previous record to take it from');
    owner = state.prevOwner!;
  } else {
    const t = toks[k++]!;
    owner = parseDomainName(t.text, state.origin, (r) => fail(`owner name: ${r}`));
  }
  let ttl: number | undefined;
  let cls: string | undefined;
  let type: string | undefined;
  // [TTL] [class] or [class] [TTL], then the type.
  while (k < toks.length) {
    const t = toks[k]!;
    const up = t.text.toUpperCase();
    if (!t.quoted && ttl === undefined && looksLikeTtl(t.text)) {
      ttl = parseTtl(t.text)!;
      if (ttl > MAX_TTL) fail(`TTL ${t.text} is over the maximum ${MAX_TTL}`);
      k++;
    } else if (!t.quoted && cls === undefined && (up === 'IN' || OTHER_CLASSES.has(up) || /^CLASS\d+$/.test(up))) {
      if (up !== 'IN') fail(`class ${t.text} is not supported; zone files hold class IN records`);
      cls = up;
      k++;
    } else {
      type = up;
      k++;
      break;
    }
  }
  if (type === undefined) fail('record has no type');
  if (!SUPPORTED.has(type!)) {
    if (KNOWN_UNSUPPORTED.has(type!) || /^TYPE\d+$/.test(type!)) fail(`record type ${type} is not supported (supported: ${SUPPORTED_TYPES.join(', ')})`);
    fail(`unknown record type "${toks[k - 1]!.text}" (supported: ${SUPPORTED_TYPES.join(', ')})`);
  }
  const rdata = toks.slice(k);
  const data = parseRdata(type!, rdata, state.origin, (r) => fail(`${type}: ${r}`));
  if (ttl === undefined) {
    if (state.defaultTtl !== undefined) ttl = state.defaultTtl;
    else if (state.lastTtl !== undefined) ttl = state.lastTtl;
    else if (type === 'SOA')
      ttl = (data as { minimum: number }).minimum; // BIND: "using SOA MINTTL"
    else fail('no TTL on this record and no $TTL or earlier TTL to default to; add $TTL at the top');
  }
  if (state.defaultTtl === undefined) state.lastTtl = ttl;
  state.prevOwner = owner;
  ctx.records.push({ rr: { name: owner, type, ttl, class: 'IN', data } as Rr, file, line: e.line });
}

function parseRdata(type: string, toks: Tok[], origin: string, fail: (reason: string) => never): unknown {
  const count = (n: number, usage: string): void => {
    if (toks.length !== n) fail(`expected ${usage}, got ${toks.length === 0 ? 'nothing' : toks.map((t) => (t.quoted ? `"${t.text}"` : t.text)).join(' ')}`);
  };
  const name = (t: Tok, what: string, keepCase = false): string => parseDomainName(t.text, origin, (r) => fail(`${what}: ${r}`), keepCase);
  const int = (t: Tok, what: string, max: number): number => {
    if (!/^\d+$/.test(t.text) || Number(t.text) > max) fail(`${what} "${t.text}" must be an integer from 0 to ${max}`);
    return Number(t.text);
  };
  const ttlField = (t: Tok, what: string): number => {
    const v = parseTtl(t.text);
    if (v === undefined || v > 0xffffffff) fail(`${what} "${t.text}" is not a number of seconds (units like 1h are allowed)`);
    return v!;
  };
  switch (type) {
    case 'A': {
      count(1, 'an IPv4 address');
      const t = toks[0]!.text;
      if (!isIPv4(t) || !/^\d+\.\d+\.\d+\.\d+$/.test(t)) fail(`"${t}" is not an IPv4 address`);
      return canonicalIp(t)!;
    }
    case 'AAAA': {
      count(1, 'an IPv6 address');
      const t = toks[0]!.text;
      if (!isIPv6(t) || t.includes('%')) fail(`"${t}" is not an IPv6 address`);
      return canonicalIp(t)!;
    }
    case 'NS':
    case 'CNAME':
      count(1, 'a domain name');
      return name(toks[0]!, 'target');
    case 'PTR':
    case 'DNAME':
      // CoreDNS keeps the case of PTR and DNAME targets (zone.go lowercases only NS, CNAME, MX, SRV, SOA).
      count(1, 'a domain name');
      return name(toks[0]!, 'target', true);
    case 'MX':
      count(2, 'PREFERENCE EXCHANGE');
      return { preference: int(toks[0]!, 'preference', 65535), exchange: name(toks[1]!, 'exchange') };
    case 'SRV':
      count(4, 'PRIORITY WEIGHT PORT TARGET');
      return {
        priority: int(toks[0]!, 'priority', 65535),
        weight: int(toks[1]!, 'weight', 65535),
        port: int(toks[2]!, 'port', 65535),
        target: name(toks[3]!, 'target'),
      };
    case 'SOA':
      count(7, 'MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM');
      return {
        mname: name(toks[0]!, 'mname'),
        rname: name(toks[1]!, 'rname'),
        serial: int(toks[2]!, 'serial', 0xffffffff),
        refresh: ttlField(toks[3]!, 'refresh'),
        retry: ttlField(toks[4]!, 'retry'),
        expire: ttlField(toks[5]!, 'expire'),
        minimum: ttlField(toks[6]!, 'minimum'),
      };
    case 'TXT': {
      if (toks.length === 0) fail('expected one or more character strings');
      return toks.map((t) => {
        const bytes = unescapeText(t.text, fail);
        if (bytes.length > 255) fail(`character string of ${bytes.length} octets; the limit is 255 (split it into several "quoted" "strings")`);
        return Buffer.from(bytes);
      });
    }
    case 'CAA': {
      count(3, 'FLAGS TAG VALUE');
      const flags = int(toks[0]!, 'flags', 255);
      const tag = toks[1]!.text;
      if (toks[1]!.quoted || !/^[A-Za-z0-9]+$/.test(tag) || tag.length > 255) fail(`tag "${tag}" must be letters and digits (issue, issuewild, iodef)`);
      const value = Buffer.from(unescapeText(toks[2]!.text, fail)).toString('utf8');
      return { flags, tag, value };
    }
    default:
      return fail(`record type ${type} is not supported`);
  }
}
