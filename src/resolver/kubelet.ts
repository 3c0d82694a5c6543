// What kubelet writes into a pod: /etc/resolv.conf (kubernetes pkg/kubelet/network/dns/dns.go)
// and the managed /etc/hosts (pkg/kubelet/kubelet_pods.go: managedHostsFileContent,
// hostsEntriesFromHostAliases, GeneratePodHostNameAndDomain).
import type { HostAlias, PodDNSConfig } from '../cluster/model/model.js';

/** The node resolv.conf used when --host-resolv-conf is not given: reproducible, not the machine's. */
export const DEFAULT_HOST_RESOLV_CONF = 'nameserver 10.0.0.2\n';
export const DEFAULT_CLUSTER_DNS = '10.96.0.10';
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';
/** api/core/validation: MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars; DNS1123SubdomainMaxLength. */
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const MAX_SEARCH_ENTRY_CHARS = 253;

/** The parts of a pod kubelet reads for DNS. */
export interface PodDNSInput {
  readonly namespace: string;
  readonly name: string;
  readonly dnsPolicy?: string;
  readonly hostNetwork?: boolean;
  readonly dnsConfig?: PodDNSConfig;
  readonly hostname?: string;
  readonly subdomain?: string;
  readonly podIPs?: readonly string[];
  readonly hostAliases?: readonly HostAlias[];
  /** spec.nodeName: a hostNetwork pod's gethostname() is its node's host name. */
  readonly nodeName?: string;
  readonly setHostnameAsFQDN?: boolean;
}

export interface KubeletDNSOptions {
  /** --cluster-dns; empty means unset (ClusterFirst then falls back to Default, dns.go:415-420). */
  readonly clusterDNS: readonly string[];
  /** --cluster-domain; '' means unset (no cluster search domains). */
  readonly clusterDomain: string;
  /**
   * Text of kubelet's --resolv-conf file; null for `--resolv-conf=""` (nameserver 127.0.0.1,
   * `search .`). Default DEFAULT_HOST_RESOLV_CONF.
   */
  readonly hostResolvConf?: string | null;
}

/** What kubelet hands the container runtime (runtimeapi.DNSConfig), plus why entries were dropped. */
export interface PodDNS {
  readonly servers: string[];
  readonly searches: string[];
  readonly options: string[];
  /** The dnsPolicy that applied after kubelet's fallbacks. */
  readonly effectivePolicy: 'ClusterFirst' | 'Default' | 'None';
  /** Events kubelet would record (limits exceeded, fallbacks). */
  readonly warnings: string[];
}

/** parseResolvConf (dns.go:225-273): nameservers accumulate, the last search line wins, options merge by name. */
export function parseHostResolvConf(text: string): { servers: string[]; searches: string[]; options: string[] } {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const raw of text.split('\n')) {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#')) continue;
    const f = trimmed.split(/\s+/).filter((x) => x !== '');
    if (f.length === 0) continue;
    if (f[0] === 'nameserver' && f.length >= 2) servers.push(f[1]!);
    if (f[0] === 'search')
      searches = f
        .slice(1)
        .filter((s) => s !== '.')
        .map((s) => (s.endsWith('.') ? s.slice(0, -1) : s));
    if (f[0] === 'options') options = appendOptions(options, f.slice(1));
    // `domain` lines are ignored by kubelet.
  }
  return { servers, searches, options };
}

const optName = (o: string): string => o.split(':')[0]!;

/**
 * appendOptions (dns.go:356-372): later options replace earlier ones with the same name. kubelet
 * rebuilds the list from a Go map (random order); here the order of first appearance is kept so
 * the output is stable.
 */
function appendOptions(options: readonly string[], add: readonly string[]): string[] {
  const m = new Map<string, string>();
  for (const o of [...options, ...add]) m.set(optName(o), o);
  return [...m.values()];
}

/** mergeDNSOptions (dns.go:326-352): the pod's dnsConfig options win; same ordering note as appendOptions. */
function mergeDNSOptions(existing: readonly string[], pod: readonly { name: string; value?: string }[]): string[] {
  const m = new Map<string, string>();
  for (const op of existing) {
    const i = op.indexOf(':');
    if (i >= 0) m.set(op.slice(0, i), op.slice(i + 1));
    else m.set(op, '');
  }
  for (const op of pod) m.set(op.name, op.value ?? '');
  return [...m.entries()].map(([k, v]) => (v !== '' ? `${k}:${v}` : k));
}

/** omitDuplicates (dns.go:88-99): keeps the first occurrence. */
const omitDuplicates = (xs: readonly string[]): string[] => [...new Set(xs)];

/** getPodDNSType (dns.go:303-320). */
function podDNSType(pod: PodDNSInput, warnings: string[]): 'cluster' | 'host' | 'none' {
  const policy = pod.dnsPolicy ?? 'ClusterFirst'; // the API server's default
  switch (policy) {
    case 'None':
      return 'none';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    case 'ClusterFirst':
      // ClusterFirst on a hostNetwork pod silently becomes Default.
      return pod.hostNetwork ? 'host' : 'cluster';
    case 'Default':
      return 'host';
    default:
      warnings.push(`invalid dnsPolicy "${policy}"; kubelet falls back to ClusterFirst`);
      return 'cluster';
  }
}

/** GetPodDNS (dns.go:385-441) followed by formDNSConfigFitsLimits (:101-162). */
export function podDNS(pod: PodDNSInput, opts: KubeletDNSOptions): PodDNS {
  const warnings: string[] = [];
  const hostText = opts.hostResolvConf === undefined ? DEFAULT_HOST_RESOLV_CONF : opts.hostResolvConf;
  const host = hostText === null ? { servers: [], searches: [], options: [] } : parseHostResolvConf(hostText);
  let servers = [...host.servers];
  let searches = [...host.searches];
  let options = [...host.options];
  let type = podDNSType(pod, warnings);
  if ((pod.dnsPolicy ?? 'ClusterFirst') === 'None' && (!pod.dnsConfig || (pod.dnsConfig.nameservers ?? []).length === 0)) {
    warnings.push('dnsPolicy None needs dnsConfig with at least one nameserver; the API server would reject this pod');
  }
  let effectivePolicy: PodDNS['effectivePolicy'] = type === 'none' ? 'None' : type === 'cluster' ? 'ClusterFirst' : 'Default';
  if (type === 'none') {
    servers = [];
    searches = [];
    options = [];
  } else if (type === 'cluster') {
    if (opts.clusterDNS.length > 0) {
      servers = [...opts.clusterDNS];
      if (opts.clusterDomain !== '') {
        const d = opts.clusterDomain;
        searches = omitDuplicates([`${pod.namespace}.svc.${d}`, `svc.${d}`, d, ...searches]);
      }
      options = ['ndots:5'];
    } else {
      warnings.push('kubelet has no --cluster-dns: ClusterFirst falls back to Default');
      type = 'host';
      effectivePolicy = 'Default';
    }
  }
  if (type === 'host' && hostText === null) {
    // --resolv-conf="" (dns.go:429-441).
    servers = ['127.0.0.1'];
    searches = ['.'];
  }
  if (pod.dnsConfig) {
    // appendDNSConfig (:377-382): pod entries after the generated ones, de-duplicated.
    servers = omitDuplicates([...servers, ...(pod.dnsConfig.nameservers ?? [])]);
    searches = omitDuplicates([...searches, ...(pod.dnsConfig.searches ?? [])]);
    options = mergeDNSOptions(options, pod.dnsConfig.options ?? []);
  }
  // formDNSNameserversFitsLimits.
  if (servers.length > MAX_DNS_NAMESERVERS) {
    servers = servers.slice(0, MAX_DNS_NAMESERVERS);
    warnings.push(`Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(' ')}`);
  }
  // formDNSSearchFitsLimits.
  let exceeded = false;
  if (searches.length > MAX_DNS_SEARCH_PATHS) {
    searches = searches.slice(0, MAX_DNS_SEARCH_PATHS);
    exceeded = true;
  }
  const fit = searches.filter((s) => s.length <= MAX_SEARCH_ENTRY_CHARS);
  if (fit.length !== searches.length) exceeded = true;
  searches = fit;
  const lineLen = searches.join(' ').length;
  if (lineLen > MAX_DNS_SEARCH_LIST_CHARS) {
    let cut = 0;
    let cutLen = 0;
    for (let i = searches.length - 1; i >= 0; i--) {
      cutLen += searches[i]!.length + 1;
      cut++;
      if (lineLen - cutLen <= MAX_DNS_SEARCH_LIST_CHARS) break;
    }
    searches = searches.slice(0, searches.length - cut);
    exceeded = true;
  }
  if (exceeded) warnings.push(`Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')}`);
  return { servers, searches, options, effectivePolicy, warnings };
}

/**
 * The file as the container runtime writes it (containerd's parseDNSOptions): `search` line,
 * one `nameserver` line each, `options` line; empty parts are left out.
 */
export function formatResolvConf(dns: Pick<PodDNS, 'servers' | 'searches' | 'options'>): string {
  let out = '';
  if (dns.searches.length > 0) out += `search ${dns.searches.join(' ')}\n`;
  for (const s of dns.servers) out += `nameserver ${s}\n`;
  if (dns.options.length > 0) out += `options ${dns.options.join(' ')}\n`;
  return out;
}

/** GeneratePodHostNameAndDomain with truncatePodHostnameIfNeeded (kubelet_pods.go). */
function podHostnameAndDomain(pod: PodDNSInput, clusterDomain: string): { hostname: string; domain: string } {
  let hostname = pod.hostname && pod.hostname.length > 0 ? pod.hostname : pod.name;
  if (hostname.length > 63) hostname = hostname.slice(0, 63).replace(/[-.]+$/, '');
  const domain = pod.subdomain ? `${pod.subdomain}.${pod.namespace}.svc.${clusterDomain}` : '';
  return { hostname, domain };
}

/**
 * What gethostname() returns inside the pod, which glibc and Go take their default search domain
 * from (the part after the first dot) when resolv.conf has no search or domain line: the node's
 * host name for a hostNetwork pod (it shares the node's UTS namespace; the node name stands in
 * for it), `hostname.subdomain.ns.svc.DOMAIN` with setHostnameAsFQDN, else the short hostname
 * (no dot: no default domain). Undefined for a hostNetwork pod with no node.
 */
export function podGethostname(pod: PodDNSInput, clusterDomain: string): string | undefined {
  if (pod.hostNetwork) return pod.nodeName || undefined;
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  return pod.setHostnameAsFQDN && domain ? `${hostname}.${domain}` : hostname;
}

/** A typical node /etc/hosts, used for hostNetwork pods (kubelet copies the node's file). */
const DEFAULT_NODE_HOSTS =
  '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' +
  'fe00::0\tip6-localnet\nff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n';

/** hostsEntriesFromHostAliases: one line per alias entry, hostnames tab-separated. */
function hostAliasLines(aliases: readonly HostAlias[] | undefined): string {
  if (!aliases || aliases.length === 0) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) out += `${a.ip}\t${a.hostnames.join('\t')}\n`;
  return out;
}

/**
 * The pod's /etc/hosts: managedHostsFileContent for pod-network pods; for hostNetwork pods the
 * node's file (nodeHostsText, default DEFAULT_NODE_HOSTS) under the host-network header.
 */
export function podHostsFile(pod: PodDNSInput, clusterDomain: string, nodeHostsText: string = DEFAULT_NODE_HOSTS): string {
  if (pod.hostNetwork) return `# Kubernetes-managed hosts file (host network).\n${nodeHostsText}${hostAliasLines(pod.hostAliases)}`;
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  let out = '# Kubernetes-managed hosts file.\n';
  out += '127.0.0.1\tlocalhost\n';
  out += '::1\tlocalhost ip6-localhost ip6-loopback\n';
  out += 'fe00::0\tip6-localnet\n';
  out += 'fe00::0\tip6-mcastprefix\n';
  out += 'fe00::1\tip6-allnodes\n';
  out += 'fe00::2\tip6-allrouters\n';
  for (const ip of pod.podIPs ?? []) out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  out += hostAliasLines(pod.hostAliases);
  return out;
}
