// resolv.conf parsing with each libc's own rules (glibc 2.36, musl 1.2.3, Go 1.19: sources below).
// Each parser is a faithful transcription of the behaviour described there, not of the man page.
// In pkg because both the client side (src/resolver) and the autopath plugin read resolv.conf.
import { isIP } from 'node:net';

export type Libc = 'glibc' | 'musl' | 'go';

/**
 * resolv.conf as one libc understands it (see parseResolvConf). Every field is what that libc
 * ends up using: limits, defaults and clamping already applied.
 */
export interface ResolvConf {
  readonly libc: Libc;
  /** IP literals in file order, at most 3, defaults applied (glibc/musl 127.0.0.1; Go 127.0.0.1 and ::1). */
  readonly nameservers: readonly string[];
  /**
   * Search entries as the libc keeps them: glibc and musl verbatim tokens (musl: every token of
   * the last domain/search line, `#` included), Go rooted (`svc.cluster.local.`).
   */
  readonly search: readonly string[];
  readonly ndots: number;
  /** Seconds. */
  readonly timeout: number;
  readonly attempts: number;
  readonly rotate: boolean;
  readonly edns0: boolean;
  readonly singleRequest: boolean;
  readonly singleRequestReopen: boolean;
  readonly useVc: boolean;
  readonly noTldQuery: boolean;
  readonly noAaaa: boolean;
  readonly trustAd: boolean;
  /** True when the search list came from the hostname (no domain/search line). */
  readonly searchFromHostname: boolean;
  /** Lines the libc ignored or reinterpreted, for the readable trace. */
  readonly notes: readonly string[];
}

export interface ParseOptions {
  /**
   * gethostname() of the machine, for glibc's and Go's default search domain (the part after
   * the first dot) when the file sets none. Default: none, so output is reproducible.
   */
  hostname?: string;
}

export function parseResolvConf(text: string, libc: Libc, opts: ParseOptions = {}): ResolvConf {
  switch (libc) {
    case 'glibc':
      return parseGlibc(text, opts);
    case 'musl':
      return parseMusl(text);
    case 'go':
      return parseGo(text, opts);
  }
}

const base = {
  rotate: false,
  edns0: false,
  singleRequest: false,
  singleRequestReopen: false,
  useVc: false,
  noTldQuery: false,
  noAaaa: false,
  trustAd: false,
};

/** C atoi: optional blanks, optional sign, digits; anything else stops (no digits -> 0). */
function atoi(s: string): number {
  const m = /^[ \t\n\v\f\r]*([+-]?)(\d*)/.exec(s);
  if (!m || m[2] === '') return 0;
  const v = Number.parseInt(m[2]!, 10);
  const n = m[1] === '-' ? -v : v;
  // Keep within C int range like a typical atoi (strtol clamps on glibc).
  return Math.max(-2147483648, Math.min(2147483647, n));
}

/** IPv4 dotted quad, or IPv6 with an optional %scope. */
function ipLiteral(s: string): boolean {
  if (isIP(s) === 4) return true;
  const i = s.indexOf('%');
  return isIP(i < 0 ? s : s.slice(0, i)) === 6;
}

/** Domain part of a hostname (after the first dot), if any. */
function hostnameDomain(hostname: string | undefined): string | undefined {
  if (!hostname) return undefined;
  const i = hostname.indexOf('.');
  if (i < 0 || i === hostname.length - 1) return undefined;
  return hostname.slice(i + 1);
}

// ---------------------------------------------------------------------------------------------
// glibc 2.36, resolv/res_init.c
// ---------------------------------------------------------------------------------------------

/** `MATCH(line, name)`: keyword at column 0 followed by a blank or tab (res_init.c). */
const glibcMatch = (line: string, kw: string): boolean => line.startsWith(kw) && (line[kw.length] === ' ' || line[kw.length] === '\t');

function parseGlibc(text: string, opts: ParseOptions): ResolvConf {
  let search: string[] = [];
  const servers: string[] = [];
  const notes: string[] = [];
  const o = { ...base, ndots: 1, timeout: 5, attempts: 2 }; // res_init.c:198, resolv.h:68,72
  const lines = text.split('\n');
  lines.forEach((line, idx) => {
    const ln = idx + 1;
    if (line[0] === ';' || line[0] === '#') return; // comment only at column 0 (res_init.c:325-326)
    if (glibcMatch(line, 'domain')) {
      // res_init.c:328-350: the first token replaces the search list.
      const rest = line.slice(6).replace(/^[ \t]+/, '');
      if (rest === '') return; // no argument: skipped (:336-337)
      const tok = rest.split(/[ \t\n]/)[0]!;
      search = [tok];
      return;
    }
    if (glibcMatch(line, 'search')) {
      // res_init.c:352-395: all blank/tab separated tokens replace the list; no limit since 2.26.
      const rest = line.slice(6).replace(/^[ \t]+/, '');
      if (rest === '') return; // :360-361
      search = rest.split(/[ \t]+/).filter((t) => t !== '');
      return;
    }
    if (glibcMatch(line, 'nameserver')) {
      const tok =
        line
          .slice(10)
          .replace(/^[ \t]+/, '')
          .split(/[ \t\n]/)[0] ?? '';
      if (!ipLiteral(tok)) {
        notes.push(`line ${ln}: nameserver "${tok}" is not an IP address; ignored`);
        return;
      }
      servers.push(tok);
      return;
    }
    if (glibcMatch(line, 'options')) {
      glibcOptions(line.slice(7), o);
      return;
    }
    if (/^[ \t]+(domain|search|nameserver|options)\b/.test(line)) notes.push(`line ${ln}: indented keyword ignored (glibc matches keywords at column 0)`);
  });
  // Only the first MAXNS=3 are used (resolv_conf.c:251-253); none -> 127.0.0.1 (res_init.c:513-522).
  if (servers.length > 3) notes.push(`only the first 3 of ${servers.length} nameservers are used`);
  const nameservers = servers.length > 0 ? servers.slice(0, 3) : ['127.0.0.1'];
  // Empty list -> the hostname's domain (res_init.c:230-248, 525-536).
  let searchFromHostname = false;
  if (search.length === 0) {
    const d = hostnameDomain(opts.hostname);
    if (d) {
      search = [d];
      searchFromHostname = true;
    }
  }
  return { libc: 'glibc', nameservers, search, searchFromHostname, notes, ...o };
}

type GlibcOpts = typeof base & { ndots: number; timeout: number; attempts: number };

/** res_setoptions (res_init.c:645-720): left to right, prefix matches, last wins. */
function glibcOptions(s: string, o: GlibcOpts): void {
  const RES_MAXNDOTS = 15;
  const RES_MAXRETRANS = 30;
  const RES_MAXRETRY = 5;
  for (const tok of s.split(/[ \t]+/)) {
    if (tok === '') continue;
    if (tok.startsWith('ndots:')) {
      const i = atoi(tok.slice(6));
      // Clamped above 15 (res_init.c:655-661); a negative value lands in the 4-bit field
      // (bits/types/res_state.h:25): ndots:-1 -> 15.
      o.ndots = i <= RES_MAXNDOTS ? i & 15 : RES_MAXNDOTS;
    } else if (tok.startsWith('timeout:')) {
      const i = atoi(tok.slice(8));
      o.timeout = Math.min(i, RES_MAXRETRANS);
    } else if (tok.startsWith('attempts:')) {
      const i = atoi(tok.slice(9));
      o.attempts = Math.min(i, RES_MAXRETRY);
    } else if (tok.startsWith('rotate')) o.rotate = true;
    else if (tok.startsWith('edns0')) o.edns0 = true;
    else if (tok.startsWith('single-request-reopen')) o.singleRequestReopen = true;
    else if (tok.startsWith('single-request')) o.singleRequest = true;
    else if (tok.startsWith('no_tld_query') || tok.startsWith('no-tld-query')) o.noTldQuery = true;
    else if (tok.startsWith('use-vc')) o.useVc = true;
    else if (tok.startsWith('trust-ad')) o.trustAd = true;
    else if (tok.startsWith('no-aaaa')) o.noAaaa = true;
    // no-reload, debug and unknown options change nothing the emulation models.
  }
}

// ---------------------------------------------------------------------------------------------
// musl 1.2.3, src/network/resolvconf.c
// ---------------------------------------------------------------------------------------------

const cSpace = (c: string | undefined): boolean => c !== undefined && ' \t\n\v\f\r'.includes(c);

/** strtoul of leading digits (the caller checked the first is a digit). */
function leadingDigits(s: string): number {
  const m = /^\d+/.exec(s);
  return m ? Number(m[0]) : 0;
}

function parseMusl(text: string): ResolvConf {
  const o = { ...base, ndots: 1, timeout: 5, attempts: 2 }; // resolvconf.c:16-18
  const servers: string[] = [];
  let searchBuf = '';
  const notes: string[] = [];
  // fgets into a 256-byte buffer: a line of 255+ characters (newline not counted) does not fit
  // and is ignored entirely (:31-40).
  const parts = text.split('\n');
  parts.forEach((raw, idx) => {
    const last = idx === parts.length - 1;
    if (last && raw === '') return;
    const line = last ? raw : `${raw}\n`;
    if (Buffer.byteLength(raw) >= 255) {
      notes.push(`line ${idx + 1}: longer than musl's 256-byte line buffer; ignored`);
      return;
    }
    if (line.startsWith('options') && cSpace(line[7])) {
      // Only the first occurrence of each option name on the line, digits only (:41-61).
      let p = line.indexOf('ndots:');
      if (p >= 0 && /\d/.test(line[p + 6] ?? '')) o.ndots = Math.min(15, leadingDigits(line.slice(p + 6)));
      p = line.indexOf('attempts:');
      if (p >= 0 && /\d/.test(line[p + 9] ?? '')) o.attempts = Math.min(10, leadingDigits(line.slice(p + 9)));
      p = line.indexOf('timeout:');
      if (p >= 0 && /\d/.test(line[p + 8] ?? '')) o.timeout = Math.min(60, leadingDigits(line.slice(p + 8)));
      return;
    }
    if (line.startsWith('nameserver') && cSpace(line[10])) {
      if (servers.length >= 3) {
        notes.push(`line ${idx + 1}: more than 3 nameservers; ignored`);
        return;
      }
      let i = 11;
      while (cSpace(line[i])) i++;
      let j = i;
      while (j < line.length && !cSpace(line[j])) j++;
      const tok = line.slice(i, j);
      if (ipLiteral(tok)) servers.push(tok);
      else notes.push(`line ${idx + 1}: nameserver "${tok}" is not an IP address; ignored`);
      return;
    }
    if ((line.startsWith('domain') || line.startsWith('search')) && cSpace(line[6])) {
      // The rest of the line is copied verbatim into one shared buffer: the last line wins,
      // and every token counts, `domain a b` included (:72-80).
      let i = 7;
      while (cSpace(line[i])) i++;
      searchBuf = line.slice(i);
    }
  });
  const nameservers = servers.length > 0 ? servers : ['127.0.0.1']; // :86-89
  const search = searchBuf.split(/[ \t\n\v\f\r]+/).filter((t) => t !== '');
  // No hostname-derived default domain in musl (resolvconf.c has no gethostname fallback).
  return { libc: 'musl', nameservers, search, searchFromHostname: false, notes, ...o };
}

// ---------------------------------------------------------------------------------------------
// Go 1.19 pure resolver, src/net/dnsconfig_unix.go:17-146
// ---------------------------------------------------------------------------------------------

/** Go's dtoi: leading decimal digits; none -> 0. Big values saturate at 0xFFFFFF. */
function dtoi(s: string): number {
  const m = /^\d+/.exec(s);
  if (!m) return 0;
  const n = Number(m[0]);
  return Math.min(n, 0xffffff);
}

const ensureRooted = (s: string): string => (s.endsWith('.') ? s : `${s}.`);

function parseGo(text: string, opts: ParseOptions): ResolvConf {
  const o = { ...base, ndots: 1, timeout: 5, attempts: 2 };
  const servers: string[] = [];
  let search: string[] = [];
  const notes: string[] = [];
  text.split('\n').forEach((line, idx) => {
    if (line.length > 0 && (line[0] === ';' || line[0] === '#')) return; // :39-43
    const f = line.split(/[ \r\t\n]+/).filter((t) => t !== ''); // getFields: leading blanks are fine
    if (f.length < 1) return;
    switch (f[0]) {
      case 'nameserver': // :49-59
        if (f.length > 1 && servers.length < 3) {
          if (ipLiteral(f[1]!)) servers.push(f[1]!);
          else notes.push(`line ${idx + 1}: nameserver "${f[1]}" is not an IP address; ignored`);
        }
        break;
      case 'domain': // :61-64
        if (f.length > 1) search = [ensureRooted(f[1]!)];
        break;
      case 'search': // :66-70
        search = f.slice(1).map(ensureRooted);
        break;
      case 'options': // :75-82 and following
        for (const s of f.slice(1)) {
          if (s.startsWith('ndots:')) o.ndots = Math.min(15, Math.max(0, dtoi(s.slice(6))));
          else if (s.startsWith('timeout:')) o.timeout = Math.max(1, dtoi(s.slice(8)));
          else if (s.startsWith('attempts:')) o.attempts = Math.max(1, dtoi(s.slice(9)));
          else if (s === 'rotate') o.rotate = true;
          else if (s === 'single-request' || s === 'single-request-reopen') o.singleRequest = true;
          else if (s === 'use-vc' || s === 'usevc' || s === 'tcp') o.useVc = true;
          else if (s === 'trust-ad') o.trustAd = true;
          else if (s === 'edns0') o.edns0 = true; // Go always sends EDNS0
          // no-reload and unknown options only matter with cgo.
        }
        break;
      default:
        break;
    }
  });
  const nameservers = servers.length > 0 ? servers : ['127.0.0.1', '::1'];
  let searchFromHostname = false;
  if (search.length === 0) {
    const d = hostnameDomain(opts.hostname);
    if (d) {
      search = [ensureRooted(d)];
      searchFromHostname = true;
    }
  }
  return { libc: 'go', nameservers, search, searchFromHostname, notes, ...o };
}
