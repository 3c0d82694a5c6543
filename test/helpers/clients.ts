// Client wrappers for the behaviour tests. Each returns what one kind of client saw:
//  - in process: src/app.ts's buildApp(...).query(...) (the full handler path, no sockets);
//  - `dig` over UDP or TCP against the real server (bind9-dnsutils);
//  - Node's dns.promises.Resolver (c-ares) against the real server.
import { execFile } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Packet } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packetToObserved, parseDig, canonicalIPv6, resolveWildcards, sorted, type Observed } from './dns-format.js';
import { repoRoot, startServer, which, type RunningServer } from './server.js';
import { describeNeeding } from './tools.js';

export interface QueryOptions {
  do?: boolean;
  udpSize?: number;
  protocol?: 'udp' | 'tcp';
}

/** The in-process API of src/app.ts, as these tests use it. */
export interface AppLike {
  query(name: string, type: string, opts?: QueryOptions): Promise<Packet>;
  close(): Promise<void> | void;
}

interface AppModule {
  buildApp(opts: { conf: string; manifests: string[]; port: number }): Promise<AppLike>;
}

/** Imports src/app.ts lazily, so these helpers type-check before it exists. */
export async function loadApp(conf: string, manifests: string[]): Promise<AppLike> {
  const modPath = path.join(repoRoot, 'src/app.ts');
  const mod = (await import(pathToFileURL(modPath).href)) as AppModule;
  return mod.buildApp({ conf, manifests, port: 0 });
}

export async function queryInProcess(app: AppLike, name: string, type: string, opts: QueryOptions = {}): Promise<Observed> {
  return packetToObserved(await app.query(name, type, opts));
}

/**
 * `dig @127.0.0.1 -p PORT +norec +noall +comments +answer +authority +additional NAME TYPE`
 * (+tcp for TCP), one try with a short timeout so a missing answer fails fast.
 */
export function digQuery(dig: string, port: number, name: string, type: string, tcp: boolean): Promise<Observed> {
  const args = ['@127.0.0.1', '-p', String(port), '+norec', '+noall', '+comments', '+answer', '+authority', '+additional', '+time=3', '+tries=1'];
  if (tcp) args.push('+tcp');
  args.push(name, type);
  return new Promise((resolve, reject) => {
    execFile(dig, args, { timeout: 10000 }, (err, stdout, stderr) => {
      const obs = parseDig(stdout);
      if (obs.rcode === '') {
        reject(new Error(`dig ${args.join(' ')} gave no answer: ${err?.message ?? ''}\n${stdout}${stderr}`));
        return;
      }
      resolve(obs);
    });
  });
}

/** What c-ares returned: the data (normalized to strings) or the error code. */
export type CaresResult = { data: string[] } | { code: string };

/** c-ares query of one type; names are sent without the trailing dot (ares_query, no search list). */
export async function caresQuery(port: number, name: string, type: string): Promise<CaresResult> {
  const r = new Resolver({ timeout: 3000, tries: 1 });
  r.setServers([`127.0.0.1:${port}`]);
  const host = name.endsWith('.') ? name.slice(0, -1) : name;
  try {
    switch (type) {
      case 'A':
        return { data: (await r.resolve4(host)).map(String) };
      case 'AAAA':
        return { data: (await r.resolve6(host)).map((a) => canonicalIPv6(String(a))) };
      case 'SRV':
        return { data: (await r.resolveSrv(host)).map((s) => `${s.priority} ${s.weight} ${s.port} ${s.name}.`) };
      case 'TXT':
        return { data: (await r.resolveTxt(host)).map((chunks) => chunks.map((c) => `"${c}"`).join(' ')) };
      case 'PTR':
        return { data: (await r.resolvePtr(host)).map((n) => `${n}.`) };
      case 'CNAME':
        return { data: (await r.resolveCname(host)).map((n) => `${n}.`) };
      default:
        throw new Error(`c-ares wrapper: type ${type} not supported`);
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (typeof code === 'string') return { code };
    throw err;
  } finally {
    r.cancel();
  }
}

export const CARES_TYPES = new Set(['A', 'AAAA', 'SRV', 'TXT', 'PTR', 'CNAME']);

/** c-ares error code for a response code, as c-ares maps it. */
const CARES_CODES: Record<string, string> = {
  NXDOMAIN: 'ENOTFOUND',
  SERVFAIL: 'ESERVFAIL',
  REFUSED: 'EREFUSED',
  NOTIMP: 'ENOTIMP',
  FORMERR: 'EFORMERR',
};

/**
 * What c-ares should return for an expected response: the rdata of the answer records of the
 * queried type; a NOERROR answer with none of them is ENODATA, except that an A/AAAA answer holding
 * only a CNAME yields [] (c-ares accepts a CNAME-only reply to an address query).
 */
export function expectedCares(type: string, rcode: string, answer: readonly string[]): CaresResult {
  if (rcode !== 'NOERROR') return { code: CARES_CODES[rcode] ?? rcode };
  const data = answer
    .map((l) => l.trim().split(/\s+/))
    .filter((t) => t[3]?.toUpperCase() === type)
    .map((t) => (type === 'AAAA' ? canonicalIPv6(t[4]!) : t.slice(4).join(' ')));
  if (data.length > 0) return { data };
  if ((type === 'A' || type === 'AAAA') && answer.some((l) => l.trim().split(/\s+/)[3]?.toUpperCase() === 'CNAME')) return { data: [] };
  return { code: 'ENODATA' };
}

export type { Observed };

// ---------------------------------------------------------------------------------------------
// The table runner: one table, three ways (in process; dig over UDP and TCP; c-ares).

export interface Case {
  /** `NAME TYPE`, e.g. `svc1.testns.svc.cluster.local. A`. */
  q: string;
  rcode: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED';
  answer?: readonly string[];
  authority?: readonly string[];
  additional?: readonly string[];
  /** Expected AA bit; default: set for NOERROR and NXDOMAIN (the plugin answered), else clear. */
  aa?: boolean;
  /** Why this row expects what it does (CoreDNS file:line), shown in the test name. */
  why?: string;
}

/** `zone TTL IN SOA ns.dns.zone hostmaster.zone * 7200 1800 86400 ttl` as CoreDNS builds it. */
export function soa(zone: string, ttl = 5): string {
  return `${zone} ${Math.min(ttl, 300)} IN SOA ns.dns.${zone} hostmaster.${zone} * 7200 1800 86400 ${ttl}`;
}

export function splitQ(q: string): [string, string] {
  const [name, type] = q.trim().split(/\s+/);
  if (!name || !type) throw new Error(`bad case question: ${q}`);
  return [name, type.toUpperCase()];
}

function caseTitle(c: Case): string {
  return `${c.q} -> ${c.rcode}${c.why ? ` (${c.why})` : ''}`;
}

/** Compares what a client saw with a row: rcode, AA, and the three sections as sets of lines. */
export function checkObserved(obs: Observed, c: Case): void {
  expect(obs.rcode, `rcode of ${c.q}`).toBe(c.rcode);
  const aa = c.aa ?? (c.rcode === 'NOERROR' || c.rcode === 'NXDOMAIN');
  expect(obs.flags.includes('aa'), `AA flag of ${c.q} (flags: ${obs.flags.join(' ')})`).toBe(aa);
  for (const section of ['answer', 'authority', 'additional'] as const) {
    const want = resolveWildcards(c[section] ?? [], obs[section]);
    expect(sorted(obs[section]), `${section} section of ${c.q}`).toEqual(sorted(want));
  }
}

export interface TableSpec {
  conf: string;
  manifests: string[];
  cases: Case[];
}

const dig = which('dig');

export function runTable(title: string, spec: TableSpec): void {
  const { conf, manifests, cases } = spec;
  describe(`${title} [in process]`, () => {
    let app: AppLike | undefined;
    beforeAll(async () => {
      app = await loadApp(conf, manifests);
    }, 60_000);
    afterAll(async () => {
      await app?.close();
    });
    for (const c of cases) {
      it(caseTitle(c), async () => {
        const [name, type] = splitQ(c.q);
        checkObserved(await queryInProcess(app!, name, type), c);
      });
    }
  });

  describe(`${title} [real server]`, () => {
    let server: RunningServer | undefined;
    beforeAll(async () => {
      server = await startServer(['--conf', conf, ...manifests.flatMap((m) => ['--manifests', m])], { timeoutMs: 30_000 });
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
    });

    describeNeeding(['dig'], 'dig over UDP', () => {
      for (const c of cases) {
        it(caseTitle(c), async () => {
          const [name, type] = splitQ(c.q);
          checkObserved(await digQuery(dig!, server!.port, name, type, false), c);
        });
      }
    });

    describeNeeding(['dig'], 'dig over TCP', () => {
      for (const c of cases) {
        it(caseTitle(c), async () => {
          const [name, type] = splitQ(c.q);
          checkObserved(await digQuery(dig!, server!.port, name, type, true), c);
        });
      }
    });

    describe('c-ares (node:dns Resolver)', () => {
      for (const c of cases.filter((k) => CARES_TYPES.has(splitQ(k.q)[1]))) {
        it(caseTitle(c), async () => {
          const [name, type] = splitQ(c.q);
          const got = await caresQuery(server!.port, name, type);
          const want = expectedCares(type, c.rcode, c.answer ?? []);
          // c-ares (1.34) lowercases the question name it sends, so the server rightly answers in
          // lowercase: names in the data are compared without regard to case here (the in-process
          // and dig runs check the spelling).
          const lower = (xs: string[]): string[] => sorted(xs.map((x) => x.toLowerCase()));
          if ('data' in got && 'data' in want) expect(lower(got.data), c.q).toEqual(lower(want.data));
          else expect(got, c.q).toEqual(want);
        });
      }
    });
  });
}
