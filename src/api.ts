// The library API for users' own tests: load a cluster from manifests (and a Corefile), ask what
// a pod's resolver gets for a name, or start a real server on a loopback port.
import pino from 'pino';
import { buildApp, clusterModel, type App } from './app.js';
import type { ClusterModel, ClusterOptions, Pod } from './cluster/model/model.js';
import type { CorefileLimits } from './chain/corefile.js';
import { parseHosts } from './resolver/hosts.js';
import { formatResolvConf, podDNS, podGethostname, podHostsFile } from './resolver/kubelet.js';
import { podDnsContext } from './resolver/pods.js';
import { parseResolvConf, type Libc } from './pkg/resolvconf.js';
import { resolveStub } from './resolver/stub.js';
import { IN_PROCESS, inProcessSend } from './resolver/transport.js';
import type { Trace } from './resolver/types.js';

export type { Trace } from './resolver/types.js';
export type { Libc } from './pkg/resolvconf.js';
export type { ClusterModel, Pod, Service } from './cluster/model/model.js';
export type { CorefileLimits } from './chain/corefile.js';

export interface LoadClusterOptions {
  /** Manifest files or directories. */
  manifests?: string[];
  /** A Corefile path; without it (and without `corefile`) the built-in kubeadm-style one. */
  conf?: string;
  /** Corefile text, instead of a path. */
  corefile?: string;
  cluster?: Partial<ClusterOptions>;
  /** Limits on reading the Corefile other than the defaults (the CLI's --max-corefile-* flags); this Cluster's alone. */
  corefileLimits?: Partial<CorefileLimits>;
}

export interface ResolveOptions {
  /** The pod that looks the name up, `namespace/name` (pods derived from workloads count). */
  from?: string;
  /** A pod that does not exist yet in this namespace (when `from` is not given). */
  namespace?: string;
  /** A record type for res_search; without it getaddrinfo (A and AAAA). */
  type?: string;
  /** The resolver to emulate; default glibc. */
  libc?: Libc;
  /** A resolv.conf text to use instead of the one kubelet would write for the pod. */
  resolvConf?: string;
}

export interface RunningServer {
  address: string;
  port: number;
  close(): Promise<void>;
}

export class Cluster {
  private constructor(
    private readonly app: App,
    /** The cluster model the kubernetes plugin serves (undefined without manifests). */
    readonly model: ClusterModel | undefined,
    private readonly opts: LoadClusterOptions,
  ) {}

  static async load(opts: LoadClusterOptions): Promise<Cluster> {
    const app = await buildApp({
      conf: opts.conf,
      corefileText: opts.corefile,
      manifests: opts.manifests,
      cluster: opts.cluster,
      corefileLimits: opts.corefileLimits,
      logger: pino({ level: 'silent' }),
    });
    return new Cluster(app, clusterModel(app, opts.manifests, opts.cluster), opts);
  }

  /** Every pod of the cluster, including those derived from workloads. */
  get pods(): readonly Pod[] {
    return this.model?.pods ?? [];
  }

  /** The resolv.conf kubelet writes for a pod (`namespace/name`), or for a new pod in `namespace`. */
  resolvConf(from: { pod?: string; namespace?: string }): string {
    const ctx = podDnsContext(this.model, from);
    return formatResolvConf(podDNS(ctx.pod, { clusterDNS: ctx.clusterDNS, clusterDomain: ctx.clusterDomain, hostResolvConf: ctx.hostResolvConf }));
  }

  /**
   * What a pod's resolver sends for a name and what it finally gets, run in process against this
   * cluster's DNS. The result has the same shape as `clusterdns resolve --json`.
   */
  async resolve(name: string, opts: ResolveOptions = {}): Promise<Trace> {
    const libc = opts.libc ?? 'glibc';
    const ctx = podDnsContext(this.model, { pod: opts.from, namespace: opts.namespace });
    const text =
      opts.resolvConf ??
      formatResolvConf(podDNS(ctx.pod, { clusterDNS: ctx.clusterDNS, clusterDomain: ctx.clusterDomain, hostResolvConf: ctx.hostResolvConf }));
    const pod = ctx.exists ? (ctx.pod as Pod) : undefined;
    const hostname = pod ? podGethostname(pod, ctx.clusterDomain) : undefined;
    const conf = { ...parseResolvConf(text, libc, hostname !== undefined ? { hostname } : {}), nameservers: [IN_PROCESS] };
    const hosts = pod ? parseHosts(podHostsFile(pod, ctx.clusterDomain)) : undefined;
    return resolveStub(name, {
      libc,
      conf,
      send: inProcessSend(this.app, pod?.podIP),
      ...(opts.type ? { type: opts.type } : {}),
      ...(hosts ? { hosts } : {}),
    });
  }

  /** Starts a real server for this cluster (port 0 picks a free one) until close(). */
  async serve(opts: { port?: number } = {}): Promise<RunningServer> {
    const app = await buildApp({
      conf: this.opts.conf,
      corefileText: this.opts.corefile,
      manifests: this.opts.manifests,
      cluster: this.opts.cluster,
      corefileLimits: this.opts.corefileLimits,
      port: opts.port ?? 0,
      logger: pino({ level: 'silent' }),
      // A server answers from the indexes alone: keeping the model would cost its memory and,
      // at every reload of a large cluster, the serving thread's time to receive it.
      retainModel: false,
    });
    const [first] = await app.listen();
    if (!first) throw new Error('the Corefile has no server block to listen for');
    return { address: first.address === '::' ? '127.0.0.1' : first.address, port: first.port, close: () => app.close() };
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}

/** Loads manifests (and optionally a Corefile) into a cluster you can query in process. */
export function loadCluster(opts: LoadClusterOptions): Promise<Cluster> {
  return Cluster.load(opts);
}
