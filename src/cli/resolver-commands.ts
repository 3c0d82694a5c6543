// `clusterdns resolv-conf` and `clusterdns resolve`: what kubelet writes into a pod and what its
// stub resolver (glibc, musl or Go) asks for a name.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import dnsTypes from 'dns-packet/types.js';
import pino from 'pino';
import { buildApp, clusterModel, type App } from '../app.js';
import type { ClusterModel, Pod } from '../cluster/model/model.js';
import { parseHosts, type HostsEntry } from '../resolver/hosts.js';
import { formatResolvConf, podDNS, podGethostname, podHostsFile } from '../resolver/kubelet.js';
import { parseResolvConf, type Libc } from '../pkg/resolvconf.js';
import { describeResolvConf } from '../resolver/resolvconf.js';
import { formatTrace, resolveStub } from '../resolver/stub.js';
import { audit, formatAudit, type AuditRow } from '../resolver/audit.js';
import { IN_PROCESS, inProcessSend, networkSend, parseHostPort } from '../resolver/transport.js';
import { LIBCS, type SendFn, type Trace } from '../resolver/types.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { podDnsContext, type PodContext } from '../resolver/pods.js';
import { podSpec } from './pod-ref.js';
import { pushAll } from '../pkg/arrays.js';

// Registration lives apart, in resolver-register.ts: the command line loads this module only when
// a command runs.

export interface KubeletFlags extends ClusterFlags {
  pod?: string;
  clusterDns?: string[];
  clusterDomain?: string;
  hostResolvConf?: string;
}

export interface ResolvConfFlags extends KubeletFlags {
  hosts?: boolean;
}

export interface ResolveFlags extends KubeletFlags {
  type?: string;
  resolvConf?: string;
  libc?: string;
  server?: string;
  useNameservers?: boolean;
  hosts?: string;
  hostname?: string;
  json?: boolean;
  audit?: boolean;
  /** commander's --no-ipv6 */
  ipv6?: boolean;
}

function loadModel(flags: ClusterFlags, app: App | undefined): ClusterModel | undefined {
  return clusterModel(app, flags.manifests, clusterOptions(flags));
}

/** kubelet's inputs for the target pod, from the flags. */
function podContext(flags: KubeletFlags, model: ClusterModel | undefined): PodContext {
  return podDnsContext(model, {
    pod: flags.pod !== undefined ? podSpec(flags.pod, model, flags.namespace) : undefined,
    namespace: flags.namespace,
    clusterDns: flags.clusterDns,
    clusterDomain: flags.clusterDomain,
    hostResolvConf: flags.hostResolvConf !== undefined ? readFileSync(flags.hostResolvConf, 'utf8') : undefined,
  });
}

/** `clusterdns resolv-conf`. */
export async function resolvConfCommand(
  flags: ResolvConfFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<void> {
  const app =
    flags.conf && !flags.manifests
      ? await buildApp({ conf: flags.conf, port: 53, cluster: clusterOptions(flags), corefileLimits: corefileLimits(flags), oneShot: true })
      : undefined;
  try {
    const model = loadModel(flags, app);
    const ctx = podContext(flags, model);
    if (flags.hosts) {
      if (!ctx.exists) throw new Error("--hosts needs --pod NS/NAME: the file holds the pod's own IPs");
      out.write(podHostsFile(ctx.pod, ctx.clusterDomain));
      return;
    }
    const dns = podDNS(ctx.pod, { clusterDNS: ctx.clusterDNS, clusterDomain: ctx.clusterDomain, hostResolvConf: ctx.hostResolvConf });
    for (const w of dns.warnings) err.write(`warning: ${w}\n`);
    out.write(formatResolvConf(dns));
  } finally {
    await app?.close();
  }
}

/** `clusterdns resolve --audit FILE`: every name of FILE from the pod, per libc, with fixes. */
export async function auditCommand(file: string, flags: ResolveFlags, out: NodeJS.WritableStream = process.stdout): Promise<AuditRow[]> {
  flags = { ...flags, type: checkQueryType(flags.type) };
  const names = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '');
  if (flags.server || flags.useNameservers) throw new Error('--audit runs in process against --conf/--manifests; drop --server/--use-nameservers');
  const app = await buildApp({
    conf: flags.conf,
    manifests: flags.manifests,
    port: 53,
    logger: pino({ level: 'silent' }),
    cluster: clusterOptions(flags),
    corefileLimits: corefileLimits(flags),
    oneShot: true,
  });
  try {
    const header: string[] = [];
    let text: string;
    let hosts: HostsEntry[] | undefined;
    let clientIp: string | undefined;
    let hostname = flags.hostname;
    if (flags.resolvConf) {
      text = readFileSync(flags.resolvConf, 'utf8');
      header.push(`audit of ${names.length} names with resolv.conf ${flags.resolvConf}`);
      hostname ??= os.hostname();
    } else {
      const model = loadModel(flags, app);
      const ctx = podContext(flags, model);
      text = formatResolvConf(podDNS(ctx.pod, { clusterDNS: ctx.clusterDNS, clusterDomain: ctx.clusterDomain, hostResolvConf: ctx.hostResolvConf }));
      header.push(
        `audit of ${names.length} names from ${ctx.exists ? `pod ${ctx.pod.namespace}/${ctx.pod.name}` : `a new pod in namespace ${ctx.pod.namespace}`}:`,
      );
      pushAll(
        header,
        text
          .trimEnd()
          .split('\n')
          .map((l) => `  ${l}`),
      );
      if (ctx.exists) {
        const p = ctx.pod as Pod;
        hosts = parseHosts(podHostsFile(p, ctx.clusterDomain));
        hostname ??= podGethostname(p, ctx.clusterDomain);
        clientIp = p.podIP;
      }
    }
    if (flags.hosts) hosts = parseHosts(readFileSync(flags.hosts, 'utf8'));
    const rows = await audit({
      names,
      resolvConf: text,
      send: inProcessSend(app, clientIp),
      ...(hosts ? { hosts } : {}),
      ...(hostname !== undefined ? { hostname } : {}),
      ...(flags.type ? { type: flags.type } : {}),
    });
    out.write(flags.json ? `${JSON.stringify(rows, null, 2)}\n` : formatAudit(rows, header));
    return rows;
  } finally {
    await app.close();
  }
}

/** Types a stub resolver has no business asking (transfers, EDNS pseudo-records). */
const NOT_QUERY_TYPES = new Set(['AXFR', 'IXFR', 'OPT', 'TSIG', 'TKEY']);

/**
 * --type as the resolver sends it (upper case), or an error naming the fix: a name dns-packet does
 * not know would go out as type 0.
 */
function checkQueryType(type: string | undefined): string | undefined {
  if (type === undefined) return undefined;
  const t = type.toUpperCase();
  if (dnsTypes.toType(t) === 0 || NOT_QUERY_TYPES.has(t)) {
    throw new Error(
      `--type "${type}" is not a DNS query type; use A, AAAA (getaddrinfo for one family) or a record type such as SRV, TXT, PTR, MX, CNAME, NS, SOA, CAA`,
    );
  }
  return t;
}

/** Exit status of `resolve`, as `getent hosts` has it: 0 when the lookup found something, else 2. */
export function resolveExitCode(trace: Trace): number {
  return trace.result.status === 'ok' ? 0 : 2;
}

/** `clusterdns resolve`: returns the trace (also printed). */
export async function resolveCommand(
  name: string,
  flags: ResolveFlags,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
  /** An app built from the same --conf/--manifests, for a caller resolving many names (left open). */
  built?: App,
): Promise<Trace> {
  flags = { ...flags, type: checkQueryType(flags.type) };
  const libc = (flags.libc ?? 'glibc') as Libc;
  if (!LIBCS.includes(libc)) throw new Error(`--libc "${flags.libc}" is not one of ${LIBCS.join(', ')}`);
  if (flags.server && flags.useNameservers) throw new Error('use either --server or --use-nameservers, not both');
  if (flags.resolvConf && flags.pod) throw new Error('use either --resolv-conf or --pod, not both');
  const inProcess = !flags.server && !flags.useNameservers;
  const needModel = !flags.resolvConf || inProcess;
  const app = built
    ? built
    : inProcess
      ? await buildApp({
          conf: flags.conf,
          manifests: flags.manifests,
          port: 53,
          logger: pino({ level: 'silent' }),
          cluster: clusterOptions(flags),
          corefileLimits: corefileLimits(flags),
          oneShot: true,
        })
      : flags.conf && !flags.manifests && needModel
        ? await buildApp({ conf: flags.conf, port: 53, cluster: clusterOptions(flags), corefileLimits: corefileLimits(flags), oneShot: true })
        : undefined;
  try {
    const header: string[] = [];
    let text: string;
    let hosts: HostsEntry[] | undefined;
    let hostname = flags.hostname;
    let clientIp: string | undefined;
    if (flags.resolvConf) {
      text = readFileSync(flags.resolvConf, 'utf8');
      header.push(`resolv.conf: ${flags.resolvConf}`);
      // No pod: the file is this machine's, whose libc takes a search domain it lacks from gethostname().
      hostname ??= os.hostname();
    } else {
      const model = loadModel(flags, app);
      const ctx = podContext(flags, model);
      const dns = podDNS(ctx.pod, { clusterDNS: ctx.clusterDNS, clusterDomain: ctx.clusterDomain, hostResolvConf: ctx.hostResolvConf });
      for (const w of dns.warnings) err.write(`warning: ${w}\n`);
      text = formatResolvConf(dns);
      header.push(
        `resolv.conf of ${ctx.exists ? `pod ${ctx.pod.namespace}/${ctx.pod.name}` : `a new pod in namespace ${ctx.pod.namespace}`} (kubelet, dnsPolicy ${dns.effectivePolicy}):`,
      );
      pushAll(
        header,
        text
          .trimEnd()
          .split('\n')
          .map((l) => `  ${l}`),
      );
      if (ctx.exists) {
        hosts = parseHosts(podHostsFile(ctx.pod, ctx.clusterDomain));
        const p = ctx.pod as Pod;
        hostname ??= podGethostname(p, ctx.clusterDomain);
        clientIp = p.podIP;
      }
    }
    if (flags.hosts) hosts = parseHosts(readFileSync(flags.hosts, 'utf8'));
    let conf = parseResolvConf(text, libc, hostname !== undefined ? { hostname } : {});
    header.push(`parsed: ${describeResolvConf(conf)}`);
    pushAll(
      header,
      conf.notes.map((n) => `note: ${n}`),
    );
    let send: SendFn;
    if (inProcess) {
      conf = { ...conf, nameservers: [IN_PROCESS] };
      send = inProcessSend(app!, clientIp);
      header.push('queries go in process to the chain built from --conf/--manifests');
    } else {
      const perTryMs = libc === 'musl' ? Math.max(1, Math.floor((conf.timeout * 1000) / Math.max(1, conf.attempts))) : Math.max(1, conf.timeout) * 1000;
      const net = { timeoutMs: perTryMs, tcp: conf.useVc, edns: libc === 'go' || conf.edns0 };
      if (flags.server) {
        parseHostPort(flags.server);
        conf = { ...conf, nameservers: [flags.server] };
        header.push(`queries go to ${flags.server}`);
      } else header.push(`queries go to the nameservers, port 53`);
      send = networkSend(net);
    }
    const trace = await resolveStub(name, {
      libc,
      conf,
      send,
      ipv6: flags.ipv6 !== false,
      ...(flags.type ? { type: flags.type } : {}),
      ...(hosts ? { hosts } : {}),
    });
    // With autopath in the chain, the pod's lookup is shortened on the server: show by how much
    // by asking again from an address that is no pod (autopath then stays out of the way).
    const autopath = inProcess && clientIp !== undefined && app!.chains.some((c) => c.plugins.some((p) => p.name === 'autopath'));
    if (autopath) {
      const without = await resolveStub(name, {
        libc,
        conf,
        send: inProcessSend(app!, '192.0.2.255'),
        ...(flags.type ? { type: flags.type } : {}),
        ...(hosts ? { hosts } : {}),
      });
      trace.withoutAutopath = { queries: without.queries.length, roundTrips: without.roundTrips };
      if (!flags.json) header.push(`autopath: ${trace.queries.length} queries from this pod; ${without.queries.length} without autopath`);
    }
    out.write(flags.json ? `${JSON.stringify(trace, null, 2)}\n` : formatTrace(trace, header));
    return trace;
  } finally {
    if (!built) await app?.close();
  }
}
