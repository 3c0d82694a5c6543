// Stub resolver emulation: which queries glibc, musl or Go send for a name, in order, and what
// each makes of the replies. The three algorithms are glibc.ts, musl.ts and go.ts; this module
// adds what comes before DNS (numeric names, the hosts file) and assembles the trace.
import { isIP } from 'node:net';
import { GlibcResolver } from './glibc.js';
import { GoResolver } from './go.js';
import { lookupHosts, type HostsEntry } from './hosts.js';
import { MuslResolver } from './musl.js';
import type { Libc, ResolvConf } from '../pkg/resolvconf.js';
import { Exchange, type LookupMode, type LookupResult, type SendFn, type Trace } from './types.js';
import { maxOf } from '../pkg/arrays.js';

export interface StubOptions {
  libc: Libc;
  /** The resolv.conf as that libc parsed it (parseResolvConf). */
  conf: ResolvConf;
  /** Without a type: getaddrinfo AF_UNSPEC. A / AAAA: getaddrinfo AF_INET / AF_INET6 (what res_search A/AAAA asks too). Others: res_search. */
  type?: string;
  /** Hosts file consulted before DNS where the libc would (glibc and Go: `hosts: files dns`; musl always). Not for res_search. */
  hosts?: readonly HostsEntry[];
  send: SendFn;
  /**
   * The host has an IPv6 address besides ::1 (default true, as pods with IPv6 enabled in the
   * kernel have a link-local one). false: glibc's getaddrinfo sends no AAAA (AI_ADDRCONFIG).
   */
  ipv6?: boolean;
}

function lookupMode(type: string | undefined): LookupMode {
  const t = type?.toUpperCase();
  if (t === undefined) return { kind: 'getaddrinfo', family: 'UNSPEC' };
  if (t === 'A') return { kind: 'getaddrinfo', family: 'INET' };
  if (t === 'AAAA') return { kind: 'getaddrinfo', family: 'INET6' };
  return { kind: 'res_search', type: t };
}

/** Runs one lookup the way the libc would and returns the trace. */
export async function resolveStub(name: string, opts: StubOptions): Promise<Trace> {
  const mode = lookupMode(opts.type);
  const ex = new Exchange(opts.send);
  const trace = (result: LookupResult): Trace => ({
    name,
    type: mode.kind === 'res_search' ? mode.type : mode.family === 'UNSPEC' ? 'A+AAAA' : mode.family === 'INET' ? 'A' : 'AAAA',
    libc: opts.libc,
    mode: mode.kind,
    queries: ex.queries,
    result,
    roundTrips: ex.roundTrips,
  });
  if (mode.kind === 'getaddrinfo') {
    // Numeric names never reach the resolver.
    const fam = isIP(name.split('%')[0]!);
    if (fam !== 0) {
      const fits = mode.family === 'UNSPEC' || (mode.family === 'INET' ? fam === 4 : fam === 6);
      return trace(
        fits ? { status: 'ok', answers: [name], source: 'numeric' } : { status: 'NXDOMAIN', answers: [], error: 'EAI_ADDRFAMILY', source: 'numeric' },
      );
    }
    if (opts.hosts && opts.hosts.length > 0) {
      const found = lookupHosts(opts.hosts, name, opts.libc, mode.family);
      if (found.length > 0) return trace({ status: 'ok', answers: found, source: 'hosts' });
    }
  }
  const resolver =
    opts.libc === 'glibc'
      ? new GlibcResolver(opts.conf, ex, opts.ipv6 ?? true)
      : opts.libc === 'musl'
        ? new MuslResolver(opts.conf, ex)
        : new GoResolver(opts.conf, ex);
  return trace(await resolver.lookup(name, mode));
}

/** The trace as text: the configuration, each query, the result, the counts. */
export function formatTrace(t: Trace, header: string[] = []): string {
  const lines = [...header];
  lines.push(
    `${t.libc} ${t.mode === 'getaddrinfo' ? `getaddrinfo(${t.type === 'A+AAAA' ? 'AF_UNSPEC' : t.type === 'A' ? 'AF_INET' : 'AF_INET6'})` : `res_search(${t.type})`} ${t.name}`,
  );
  const w = maxOf(
    t.queries.map((q) => q.name.length),
    4,
  );
  const tw = maxOf(
    t.queries.map((q) => q.type.length),
    4,
  );
  const sw = maxOf(
    t.queries.map((q) => q.server.length),
    6,
  );
  t.queries.forEach((q, i) => {
    const ans = q.answers.length > 0 ? `  ${q.answers.join(', ')}` : '';
    lines.push(
      `  ${String(i + 1).padStart(2)}. ${q.name.padEnd(w)}  ${q.type.padEnd(tw)}  -> ${q.server.padEnd(sw)}  ${q.rcode}${q.malformed ? ` (malformed packet ${q.wire ?? ''})` : ''}${ans}`,
    );
  });
  if (t.queries.length === 0) lines.push('  (no queries sent)');
  const r = t.result;
  const src = r.source === 'hosts' ? ' (from the hosts file)' : r.source === 'numeric' ? ' (numeric address)' : '';
  lines.push(`result: ${r.status}${r.error ? ` (${r.error})` : ''}${r.answers.length > 0 ? ` ${r.answers.join(' ')}` : ''}${src}`);
  lines.push(`${t.queries.length} ${t.queries.length === 1 ? 'query' : 'queries'}, ${t.roundTrips} round ${t.roundTrips === 1 ? 'trip' : 'trips'}`);
  return `${lines.join('\n')}\n`;
}
