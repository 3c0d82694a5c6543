// The server's own addresses behind ns.dns.<zone> when no kube-system DNS Service names it
// (CoreDNS's local.go boundIPs and ns.go nsAddrs fallback), for the bind cases a table with one
// Corefile cannot show. The served answer with `bind 127.0.0.1` is a row of kubernetes.test.ts.
import type os from 'node:os';
import { describe, expect, it } from 'vitest';
import { serverAddresses } from '../../../src/plugins/kubernetes/ns.js';

const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false): os.NetworkInterfaceInfo =>
  ({ address, family, internal, netmask: '', mac: '', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as os.NetworkInterfaceInfo;

const host = {
  lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
  eth0: [iface('192.0.2.10', 'IPv4'), iface('2001:db8::10', 'IPv6'), iface('fe80::1', 'IPv6')],
};
const loopbackOnly = { lo: host.lo };

describe('kubernetes: the addresses of ns.dns.<zone> without a kube-dns Service', () => {
  it('bound to a routable address: that address (CoreDNS boundIPs)', () => {
    expect(serverAddresses(['192.0.2.10', '127.0.0.1'], host)).toEqual(['192.0.2.10']);
  });
  it('bound to all (no bind): every interface address but loopback and IPv6 link-local', () => {
    expect(serverAddresses([], host)).toEqual(['192.0.2.10', '2001:db8::10']);
    expect(serverAddresses(['0.0.0.0'], host)).toEqual(['192.0.2.10', '2001:db8::10']);
  });
  it('bound to loopback only: the loopback addresses (CoreDNS would have no NS at all)', () => {
    expect(serverAddresses(['127.0.0.1'], host)).toEqual(['127.0.0.1']);
    expect(serverAddresses(['127.0.0.1', '::1'], host)).toEqual(['127.0.0.1', '::1']);
  });
  it('bound to all on a machine with loopback only: 127.0.0.1', () => {
    expect(serverAddresses([], loopbackOnly)).toEqual(['127.0.0.1']);
    expect(serverAddresses(['::'], loopbackOnly)).toEqual(['127.0.0.1']);
  });
});

describe('records: ns.dns.<zone> without a kube-dns Service is the same on every machine', () => {
  it("no bind: 127.0.0.1, never this machine's interface addresses", async () => {
    const { execFileSync } = await import('node:child_process');
    const { launcher, repoRoot } = await import('../../helpers/server.js');
    // The built-in default Corefile has no bind: serving, the NS would name the interfaces.
    const out = execFileSync(process.execPath, [launcher, 'records', '--manifests', 'test/fixtures/k8s/manifests', '--zone', 'cluster.local'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    const ns = out.split('\n').filter((l) => l.startsWith('ns.dns.cluster.local.'));
    expect(ns).toEqual(['ns.dns.cluster.local.\t30\tIN\tA\t127.0.0.1']);
    expect(out).toContain('cluster.local.\t30\tIN\tNS\tns.dns.cluster.local.');
  });
});
