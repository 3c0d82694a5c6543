// `clusterdns resolve --audit`: for the names an application looks up, how many queries each
// resolver sends from a given pod, which lookups fail, and what would cut the queries down.
import { parseResolvConf, type Libc } from '../pkg/resolvconf.js';
import { resolveStub } from './stub.js';
import type { HostsEntry } from './hosts.js';
import { LIBCS, type SendFn, type Trace } from './types.js';
import { maxOf } from '../pkg/arrays.js';

export interface AuditRow {
  name: string;
  /** Per libc: the trace of the lookup as the pod does it. */
  traces: Record<Libc, Trace>;
  /** The name that answered (fully qualified), when any libc found it. */
  answeredAs?: string;
  fixes: string[];
}

export interface AuditInput {
  names: string[];
  resolvConf: string;
  send: SendFn;
  hosts?: readonly HostsEntry[];
  hostname?: string;
  type?: string;
}

const withNdots = (text: string, ndots: number): string => {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !/^options\s/.test(l));
  const options =
    /^options\s+(.*)$/m
      .exec(text)?.[1]
      ?.split(/\s+/)
      .filter((o) => !o.startsWith('ndots:')) ?? [];
  return [...lines, `options ${['ndots:' + ndots, ...options].join(' ')}`, ''].join('\n');
};

export async function audit(input: AuditInput): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  for (const name of input.names) {
    const traces = {} as Record<Libc, Trace>;
    for (const libc of LIBCS) {
      const conf = parseResolvConf(input.resolvConf, libc, input.hostname !== undefined ? { hostname: input.hostname } : {});
      traces[libc] = await resolveStub(name, {
        libc,
        conf,
        send: input.send,
        ...(input.type ? { type: input.type } : {}),
        ...(input.hosts ? { hosts: input.hosts } : {}),
      });
    }
    // The candidate that gave the final answer, for a lookup that succeeded.
    const answered = LIBCS.filter((l) => traces[l].result.status === 'ok')
      .map((l) => [...traces[l].queries].reverse().find((q) => q.answers.length > 0)?.name)
      .find((n) => n !== undefined);
    const fixes: string[] = [];
    const most = maxOf(LIBCS.map((l) => traces[l].queries.length));
    if (answered && !name.endsWith('.') && most > 2) {
      const fq = await resolveStub(answered, {
        libc: 'glibc',
        conf: parseResolvConf(input.resolvConf, 'glibc'),
        send: input.send,
        ...(input.type ? { type: input.type } : {}),
      });
      fixes.push(`use the fully qualified name ${answered} (trailing dot): ${fq.queries.length} queries`);
    }
    if (!name.endsWith('.') && most > 2) {
      const conf = parseResolvConf(withNdots(input.resolvConf, 1), 'glibc');
      const low = await resolveStub(name, { libc: 'glibc', conf, send: input.send, ...(input.type ? { type: input.type } : {}) });
      const same = low.result.status === traces.glibc.result.status && low.result.answers.join() === traces.glibc.result.answers.join();
      if (low.queries.length < traces.glibc.queries.length && same) {
        fixes.push(`set dnsConfig options ndots: "1" on the pod: ${low.queries.length} queries with glibc, same answer`);
      }
    }
    if (answered && most > 2) {
      const perCandidate = traces.glibc.mode === 'getaddrinfo' && !input.type ? 2 : 1;
      fixes.push(`autopath @kubernetes (with pods verified) answers the first query: ${perCandidate} queries`);
    }
    const failing = LIBCS.filter((l) => traces[l].result.status !== 'ok');
    if (failing.length === LIBCS.length) {
      const statuses = [...new Set(LIBCS.map((l) => traces[l].result.status))].join('/');
      fixes.push(
        `fails with every resolver (${statuses}); ${statuses.includes('REFUSED') ? 'names outside the cluster zones need a forward plugin in the Corefile' : 'check the name with `clusterdns records`'}`,
      );
    } else if (failing.length > 0) {
      fixes.push(
        `resolves with ${LIBCS.filter((l) => !failing.includes(l)).join(', ')} but not with ${failing.join(', ')}: see \`clusterdns resolve ${name} --libc ${failing[0]}\``,
      );
    }
    rows.push({ name, traces, ...(answered ? { answeredAs: answered } : {}), fixes });
  }
  return rows;
}

export function formatAudit(rows: AuditRow[], header: string[]): string {
  const out = [...header, ''];
  const width = maxOf(
    rows.map((r) => r.name.length),
    4,
  );
  out.push(`${'name'.padEnd(width)}  ${LIBCS.map((l) => l.padStart(5)).join(' ')}  result`);
  let total = 0;
  for (const r of rows) {
    const counts = LIBCS.map((l) => String(r.traces[l].queries.length).padStart(5)).join(' ');
    total += r.traces.glibc.queries.length;
    const results = [
      ...new Set(LIBCS.map((l) => `${r.traces[l].result.status}${r.traces[l].result.answers.length ? ' ' + r.traces[l].result.answers.join(',') : ''}`)),
    ];
    out.push(`${r.name.padEnd(width)}  ${counts}  ${results.length === 1 ? results[0] : LIBCS.map((l) => `${l}: ${r.traces[l].result.status}`).join('; ')}`);
    for (const f of r.fixes) out.push(`${' '.repeat(width)}    fix: ${f}`);
  }
  out.push('', `${rows.length} names, ${total} queries with glibc (${(total / Math.max(1, rows.length)).toFixed(1)} per name)`);
  return out.join('\n') + '\n';
}
