// kubelet's pod resolv.conf and /etc/hosts (kubelet pkg/kubelet/network/dns/dns.go, kubelet_pods.go), and hosts lookup.
import { describe, it, expect } from 'vitest';
import { formatResolvConf, parseHostResolvConf, podDNS, podHostsFile, type PodDNSInput } from '../../src/resolver/kubelet.js';
import { lookupHosts, parseHosts } from '../../src/resolver/hosts.js';

const pod = (p: Partial<PodDNSInput> = {}): PodDNSInput => ({ namespace: 'apps', name: 'web-0', ...p });
const opts = {
  clusterDNS: ['10.96.0.10'],
  clusterDomain: 'cluster.local',
  hostResolvConf: 'nameserver 10.0.0.2\nsearch corp.example.com.\noptions timeout:2\n',
};
const rc = (p: PodDNSInput, o: Omit<Partial<typeof opts>, 'hostResolvConf'> & { hostResolvConf?: string | null } = {}) =>
  formatResolvConf(podDNS(p, { ...opts, ...o }));

describe('kubelet resolv.conf', () => {
  it('ClusterFirst (default): cluster DNS only, cluster search then host search, ndots:5 only', () => {
    expect(rc(pod())).toBe('search apps.svc.cluster.local svc.cluster.local cluster.local corp.example.com\nnameserver 10.96.0.10\noptions ndots:5\n');
    expect(rc(pod({ dnsPolicy: 'ClusterFirst' }))).toBe(rc(pod()));
  });
  it('ClusterFirst on a hostNetwork pod becomes Default; ClusterFirstWithHostNet stays cluster', () => {
    expect(rc(pod({ hostNetwork: true }))).toBe('search corp.example.com\nnameserver 10.0.0.2\noptions timeout:2\n');
    expect(rc(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }))).toContain('nameserver 10.96.0.10\n');
  });
  it('Default: the host file as kubelet parses it', () => {
    expect(rc(pod({ dnsPolicy: 'Default' }))).toBe('search corp.example.com\nnameserver 10.0.0.2\noptions timeout:2\n');
  });
  it('without --cluster-dns ClusterFirst falls back to Default', () => {
    const d = podDNS(pod(), { ...opts, clusterDNS: [] });
    expect(d.effectivePolicy).toBe('Default');
    expect(d.servers).toEqual(['10.0.0.2']);
  });
  it('--resolv-conf="": nameserver 127.0.0.1 and search .', () => {
    expect(rc(pod({ dnsPolicy: 'Default' }), { hostResolvConf: null })).toBe('search .\nnameserver 127.0.0.1\n');
  });
  it('None: only dnsConfig', () => {
    expect(
      rc(
        pod({
          dnsPolicy: 'None',
          dnsConfig: { nameservers: ['1.1.1.1'], searches: ['my.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
        }),
      ),
    ).toBe('search my.example\nnameserver 1.1.1.1\noptions ndots:2 edns0\n');
  });
  it('dnsConfig merges: appended, de-duplicated, pod options win', () => {
    const d = podDNS(
      pod({
        dnsConfig: {
          nameservers: ['10.96.0.10', '8.8.8.8'],
          searches: ['svc.cluster.local', 'extra.example'],
          options: [{ name: 'ndots', value: '2' }, { name: 'single-request' }],
        },
      }),
      opts,
    );
    expect(d.servers).toEqual(['10.96.0.10', '8.8.8.8']);
    expect(d.searches).toEqual(['apps.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example.com', 'extra.example']);
    expect(d.options).toEqual(['ndots:2', 'single-request']);
  });
  it('limits: 3 nameservers, 32 search paths, 253-char entries, 2048-char line', () => {
    const d = podDNS(
      pod({
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'], searches: Array.from({ length: 40 }, (_, i) => `s${i}.example`) },
      }),
      opts,
    );
    expect(d.servers).toEqual(['1.1.1.1', '2.2.2.2', '3.3.3.3']);
    expect(d.searches).toHaveLength(32);
    expect(d.warnings.length).toBe(2);
    const long = 'a'.repeat(254);
    expect(podDNS(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['x.example', long] } }), opts).searches).toEqual(['x.example']);
    const big = Array.from({ length: 10 }, (_, i) => `${String(i).padStart(2, '0')}${'b'.repeat(248)}`); // 250 chars each
    const s = podDNS(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: big } }), opts).searches;
    expect(s.join(' ').length).toBeLessThanOrEqual(2048);
    expect(s).toEqual(big.slice(0, 8));
  });
  it('host file: last search wins, trailing dot trimmed, lone . dropped, domain ignored, options merged by name', () => {
    expect(
      parseHostResolvConf(
        'domain x\nsearch a.\nsearch b. . c\n#search z\nnameserver 1.1.1.1\nnameserver 2.2.2.2\noptions ndots:2 timeout:1\noptions ndots:3\n',
      ),
    ).toEqual({
      servers: ['1.1.1.1', '2.2.2.2'],
      searches: ['b', 'c'],
      options: ['ndots:3', 'timeout:1'],
    });
  });
});

describe('kubelet /etc/hosts', () => {
  const head =
    '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';
  it('pod IPs with hostname.subdomain.ns.svc.domain, then hostAliases', () => {
    const text = podHostsFile(
      pod({
        hostname: 'web-0',
        subdomain: 'nginx',
        podIPs: ['10.244.1.10', 'fd00:10:244::a'],
        hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo.local', 'bar.local'] }],
      }),
      'cluster.local',
    );
    expect(text).toBe(
      `${head}10.244.1.10\tweb-0.nginx.apps.svc.cluster.local\tweb-0\nfd00:10:244::a\tweb-0.nginx.apps.svc.cluster.local\tweb-0\n\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n`,
    );
  });
  it('no subdomain: IP and pod name; hostNetwork: the node file under its own header', () => {
    expect(podHostsFile(pod({ name: 'api-7d9f', podIPs: ['10.244.0.9'] }), 'cluster.local')).toBe(`${head}10.244.0.9\tapi-7d9f\n`);
    expect(podHostsFile(pod({ hostNetwork: true }), 'cluster.local', '127.0.0.1\tlocalhost\n')).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n',
    );
  });
});

describe('hosts lookup per libc', () => {
  const entries = parseHosts('127.0.0.1 localhost # loop\n10.0.0.5\tDB.local db\n::1 localhost\nfd00::5 db.local\nbogus line\n');
  it('parses addresses and names, comments anywhere', () => {
    expect(entries.map((e) => e.address)).toEqual(['127.0.0.1', '10.0.0.5', '::1', 'fd00::5']);
  });
  it('glibc: case-insensitive, exact; families', () => {
    expect(lookupHosts(entries, 'db.local', 'glibc')).toEqual(['10.0.0.5', 'fd00::5']);
    expect(lookupHosts(entries, 'db.local', 'glibc', 'INET')).toEqual(['10.0.0.5']);
    expect(lookupHosts(entries, 'db.local.', 'glibc')).toEqual([]);
  });
  it('musl: case-sensitive; Go: lower-cased and rooted', () => {
    expect(lookupHosts(entries, 'DB.local', 'musl')).toEqual(['10.0.0.5']);
    expect(lookupHosts(entries, 'db.local', 'musl')).toEqual(['fd00::5']);
    expect(lookupHosts(entries, 'DB.LOCAL.', 'go')).toEqual(['10.0.0.5', 'fd00::5']);
  });
});
