// The predicted side of the differential resolver test (`clusterdns resolve --json`) and the
// normalisation that puts both sides in the same shape before they are compared.
import net from 'node:net';
import { Writable } from 'node:stream';
import { resolveCommand } from '../../src/cli/resolver-commands.js';
import { canonicalIPv6 } from '../helpers/dns-format.js';
import type { ClientKind } from './differential-cases.js';
import type { ClientRun, LoggedQuery } from './differential-ns.js';

/** `clusterdns resolve --json`, as its JSON contract gives it. */
export interface ResolveJson {
  name: string;
  type: string;
  libc: string;
  queries: { name: string; type: string; server?: string; rcode: string; answers?: unknown[] }[];
  result: { status: string; answers?: unknown[] };
}

export type Prediction = { ok: true; json: ResolveJson; argv: string[] } | { ok: false; error: string; argv: string[] };

/** The libc and query type `clusterdns resolve` is asked to emulate for a client. */
export function predictionArgs(client: ClientKind): { libc: 'glibc' | 'musl' | 'go'; type?: string } {
  switch (client) {
    case 'glibc':
      return { libc: 'glibc' };
    case 'glibc-v4':
      return { libc: 'glibc', type: 'A' };
    case 'musl':
      return { libc: 'musl' };
    case 'go':
      return { libc: 'go' };
  }
}

/**
 * What `clusterdns resolve NAME ... --json` prints, in process mode (no --server): queries go to
 * the chain built from --conf/--manifests. Called through the command's own function (the CLI's
 * action calls it with these flags) in this process rather than as one process per client run:
 * 70 runs as processes cost a minute of CI, and `test/resolver/cli.test.ts` covers the CLI itself.
 */
export async function predict(name: string, client: ClientKind, resolvConf: string, conf: string, manifests: string): Promise<Prediction> {
  const { libc, type } = predictionArgs(client);
  const argv = [
    'resolve',
    name,
    ...(type ? ['--type', type] : []),
    '--resolv-conf',
    resolvConf,
    '--libc',
    libc,
    '--conf',
    conf,
    '--manifests',
    manifests,
    '--json',
  ];
  let stdout = '';
  let stderr = '';
  const collect = (append: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer | string, _enc, done) {
        append(chunk.toString());
        done();
      },
    });
  try {
    const flags = { libc, ...(type ? { type } : {}), resolvConf, conf, manifests: [manifests], json: true };
    await resolveCommand(
      name,
      flags,
      collect((s) => (stdout += s)),
      collect((s) => (stderr += s)),
    );
    const json = JSON.parse(stdout) as ResolveJson;
    if (!Array.isArray(json.queries) || !json.result) throw new Error('no "queries" array or "result" object');
    return { ok: true, json, argv };
  } catch (err) {
    return {
      ok: false,
      argv,
      error: `clusterdns ${argv.join(' ')} gave no usable JSON (${(err as Error).message})\n${stdout.slice(0, 2000)}${stderr.slice(0, 2000)}`,
    };
  }
}

/** Runs promise-returning jobs with at most `limit` in flight. */
export async function pool<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return out;
}

/** The wire name as compared: fully qualified, case kept (the clients send names as given). */
function fq(name: string): string {
  return name.endsWith('.') ? name : `${name}.`;
}

/**
 * Queries as a comparable list. glibc and musl send A then AAAA for a candidate on one socket,
 * in that order, and the server handles (and logs) packets in arrival order, so the sequence is
 * compared exactly, duplicates (retransmissions) included. Go sends A and AAAA concurrently on
 * two sockets: within one candidate (a run of queries for the same name) the types are compared
 * as a multiset; the order of candidates is still exact.
 */
export function comparable(queries: { name: string; type: string }[], client: ClientKind): string[] {
  if (client !== 'go') return queries.map((q) => `${fq(q.name)} ${q.type}`);
  const out: string[] = [];
  let i = 0;
  while (i < queries.length) {
    const name = fq(queries[i]!.name);
    const types: string[] = [];
    while (i < queries.length && fq(queries[i]!.name) === name) types.push(queries[i++]!.type);
    out.push(`${name} {${types.sort().join(',')}}`);
  }
  return out;
}

/** What a lookup ended with, on either side. */
export interface Outcome {
  found: boolean;
  addresses: string[];
  /** The client's own error where it reports one: musl's EAI_* name, Go's error text; glibc's getent does not say. */
  error?: string;
  /** Everything else the client said (exit status, Go's error flags), for the message only. */
  detail: string;
}

function canonicalAddress(a: string): string | undefined {
  const t = a.trim().replace(/\.$/, '');
  if (net.isIPv4(t)) return t;
  if (net.isIPv6(t)) return canonicalIPv6(t);
  return undefined;
}

function sortedUnique(list: string[]): string[] {
  return [...new Set(list)].sort();
}

/** The addresses of `result.answers`, whatever shape an answer has (string RR, bare address, object). */
export function answerAddresses(answers: unknown[] | undefined): string[] {
  const out: string[] = [];
  for (const a of answers ?? []) {
    if (typeof a === 'string') {
      const tokens = a.trim().split(/\s+/);
      const addr = canonicalAddress(tokens[tokens.length - 1] ?? '');
      if (addr) out.push(addr);
    } else if (a && typeof a === 'object') {
      const o = a as Record<string, unknown>;
      for (const key of ['address', 'data', 'value', 'rdata', 'ip']) {
        const v = o[key];
        if (typeof v === 'string') {
          const addr = canonicalAddress(v);
          if (addr) {
            out.push(addr);
            break;
          }
        }
      }
    }
  }
  return sortedUnique(out);
}

export function predictedOutcome(json: ResolveJson): Outcome {
  const addresses = answerAddresses(json.result.answers);
  const error = (json.result as { error?: unknown }).error;
  return { found: addresses.length > 0, addresses, error: typeof error === 'string' ? error : undefined, detail: String(json.result.status) };
}

/** Parses what a client printed. */
export function clientOutcome(client: ClientKind, run: ClientRun): Outcome {
  const out = run.stdout.trim();
  if (client === 'glibc' || client === 'glibc-v4') {
    // getent ahosts: `ADDR STREAM canonname`, `ADDR DGRAM`, `ADDR RAW` per address; exit 2 when
    // getaddrinfo failed (getent does not say with which EAI code).
    if (run.code === 0) {
      const addrs = out
        .split('\n')
        .map((l) => canonicalAddress(l.split(/\s+/)[0] ?? ''))
        .filter((a): a is string => !!a);
      return { found: addrs.length > 0, addresses: sortedUnique(addrs), detail: 'getent exit 0' };
    }
    return { found: false, addresses: [], detail: `getent exit ${run.code ?? run.signal}` };
  }
  if (out.startsWith('OK')) {
    const addrs = out
      .slice(2)
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((a) => canonicalAddress(a) ?? `?${a}`);
    return { found: addrs.length > 0, addresses: sortedUnique(addrs), detail: 'OK' };
  }
  if (out.startsWith('ERR')) {
    const rest = out.slice(3).trim();
    if (client === 'musl') return { found: false, addresses: [], error: rest.split(/\s+/)[0], detail: rest };
    // Go: `notfound=BOOL temporary=BOOL timeout=BOOL MESSAGE`
    const m = /^((?:\w+=\w+\s+)*)(.*)$/.exec(rest)!;
    return { found: false, addresses: [], error: m[2], detail: m[1]!.trim() };
  }
  return { found: false, addresses: [], detail: `no result line (exit ${run.code ?? run.signal}): ${out} ${run.stderr.trim()}` };
}

export function formatCaptured(queries: LoggedQuery[]): string {
  if (!queries.length) return '    (no query reached the server)';
  return queries.map((q, i) => `    ${String(i + 1).padStart(2)}. ${q.name} ${q.type} -> ${q.rcode} (${q.proto} from port ${q.port})`).join('\n');
}

export function formatPredicted(json: ResolveJson): string {
  if (!json.queries.length) return '    (no query)';
  return json.queries.map((q, i) => `    ${String(i + 1).padStart(2)}. ${q.name} ${q.type} -> ${q.rcode}${q.server ? ` (${q.server})` : ''}`).join('\n');
}
