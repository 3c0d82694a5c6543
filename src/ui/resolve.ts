// The Resolve view: the walk `clusterdns resolve` shows (the pod's kubelet resolv.conf and hosts
// file, the libc's stub resolver sending in process to the App) and the fixes `resolve --audit`
// suggests, from the resolver modules those commands run.
import type { App } from '../app.js';
import type { ClusterModel, Pod } from '../cluster/model/model.js';
import { fqdn } from '../pkg/names.js';
import { parseResolvConf, type Libc } from '../pkg/resolvconf.js';
import { audit } from '../resolver/audit.js';
import { parseHosts, type HostsEntry } from '../resolver/hosts.js';
import { formatResolvConf, podDNS, podGethostname, podHostsFile } from '../resolver/kubelet.js';
import { podDnsContext } from '../resolver/pods.js';
import { describeResolvConf } from '../resolver/resolvconf.js';
import { resolveStub } from '../resolver/stub.js';
import { IN_PROCESS, inProcessSend } from '../resolver/transport.js';
import { LIBCS, type QueryRecord, type Trace } from '../resolver/types.js';
import type { ResolveResponse, UiQuery } from './types.js';

/** The types the page offers: getaddrinfo (none, A, AAAA) and the record types res_search asks. */
export const QUERY_TYPES: readonly string[] = ['A', 'AAAA', 'SRV', 'TXT', 'PTR', 'MX', 'CNAME', 'NS', 'SOA', 'CAA'];

export interface ResolveInput {
  name: string;
  /** NS/NAME of a pod of the model; without it a new pod in `namespace`. */
  pod?: string;
  namespace?: string;
  libc: string;
  type?: string;
  /** resolv.conf options replacing the kubelet's `options` line (`ndots:2 edns0`). */
  options?: string;
}

/** A request the walk cannot run as given: the API answers 400 with its message. */
export class BadRequest extends Error {}

const OPTIONS_RE = /^[A-Za-z0-9:_.\- ]{0,200}$/;

/** The resolv.conf with its options line replaced by `options` (none when empty). */
function withOptions(text: string, options: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !/^options\s/.test(l));
  const opts = options.trim().split(/\s+/).filter(Boolean);
  return [...lines, ...(opts.length > 0 ? [`options ${opts.join(' ')}`] : []), ''].join('\n');
}

/** Which search domain made `q` from the name typed: '' for the name as typed. */
function searchDomain(typed: string, q: QueryRecord): string {
  const asked = q.name.toLowerCase();
  const base = typed.toLowerCase().replace(/\.$/, '');
  if (asked === fqdn(base) || asked === base) return '';
  if (asked.startsWith(`${base}.`)) return asked.slice(base.length + 1).replace(/\.$/, '') || '.';
  return '';
}

function outcome(q: QueryRecord): UiQuery['outcome'] {
  if (q.rcode === 'NXDOMAIN') return 'NXDOMAIN';
  if (q.rcode !== 'NOERROR') return 'other';
  return q.answers.length > 0 ? 'answer' : 'NODATA';
}

function callOf(t: Trace): string {
  const fn = t.mode === 'getaddrinfo' ? `getaddrinfo(${t.type === 'A+AAAA' ? 'AF_UNSPEC' : t.type === 'A' ? 'AF_INET' : 'AF_INET6'})` : `res_search(${t.type})`;
  return `${fn} ${t.name}`;
}

/** GET /api/resolve: one lookup from a pod, as `clusterdns resolve --pod ... --libc ...` makes it. */
export async function resolveView(app: App, model: ClusterModel | undefined, input: ResolveInput, generation: number): Promise<ResolveResponse> {
  const name = input.name.trim();
  if (name === '' || name.length > 1024) throw new BadRequest('type a name to look up (at most 1024 characters)');
  const libc = input.libc as Libc;
  if (!LIBCS.includes(libc)) throw new BadRequest(`libc must be one of ${LIBCS.join(', ')}`);
  const type = input.type ? input.type.toUpperCase() : undefined;
  if (type !== undefined && !QUERY_TYPES.includes(type)) throw new BadRequest(`type must be one of ${QUERY_TYPES.join(', ')}, or none for getaddrinfo`);
  if (input.options !== undefined && !OPTIONS_RE.test(input.options)) throw new BadRequest('options: resolv.conf options such as "ndots:2 edns0"');
  let ctx;
  try {
    ctx = podDnsContext(model, { ...(input.pod ? { pod: input.pod } : {}), ...(input.namespace ? { namespace: input.namespace } : {}) });
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
  const dns = podDNS(ctx.pod, { clusterDNS: ctx.clusterDNS, clusterDomain: ctx.clusterDomain, hostResolvConf: ctx.hostResolvConf });
  let text = formatResolvConf(dns);
  if (input.options !== undefined) text = withOptions(text, input.options);
  let hosts: HostsEntry[] | undefined;
  let hostname: string | undefined;
  let clientIp: string | undefined;
  if (ctx.exists) {
    const p = ctx.pod as Pod;
    hosts = parseHosts(podHostsFile(p, ctx.clusterDomain));
    hostname = podGethostname(p, ctx.clusterDomain);
    clientIp = p.podIP;
  }
  const parsed = parseResolvConf(text, libc, hostname !== undefined ? { hostname } : {});
  const conf = { ...parsed, nameservers: [IN_PROCESS] };
  const send = inProcessSend(app, clientIp);
  const trace = await resolveStub(name, { libc, conf, send, ...(type ? { type } : {}), ...(hosts ? { hosts } : {}) });
  // As `resolve` does: with autopath in the chain, the same lookup from an address that is no pod.
  const autopath = clientIp !== undefined && app.chains.some((c) => c.plugins.some((p) => p.name === 'autopath'));
  if (autopath) {
    const without = await resolveStub(name, { libc, conf, send: inProcessSend(app, '192.0.2.255'), ...(type ? { type } : {}), ...(hosts ? { hosts } : {}) });
    trace.withoutAutopath = { queries: without.queries.length, roundTrips: without.roundTrips };
  }
  const [row] = await audit({
    names: [name],
    resolvConf: text,
    send,
    ...(hosts ? { hosts } : {}),
    ...(hostname !== undefined ? { hostname } : {}),
    ...(type ? { type } : {}),
  });
  const r = trace.result;
  return {
    generation,
    from: ctx.exists ? `pod ${ctx.pod.namespace}/${ctx.pod.name}` : `a new pod in namespace ${ctx.pod.namespace}`,
    libc,
    call: callOf(trace),
    resolvConf: text,
    parsed: describeResolvConf(parsed),
    notes: [...dns.warnings, ...parsed.notes],
    queries: trace.queries.map((q) => ({
      name: q.name,
      type: q.type,
      searchDomain: searchDomain(name, q),
      rcode: q.rcode,
      outcome: outcome(q),
      answers: q.answers,
      malformed: q.malformed === true,
    })),
    result: { status: r.status, ...(r.error ? { error: r.error } : {}), answers: r.answers, source: r.source },
    roundTrips: trace.roundTrips,
    ...(trace.withoutAutopath ? { withoutAutopath: trace.withoutAutopath } : {}),
    fixes: row?.fixes ?? [],
  };
}
