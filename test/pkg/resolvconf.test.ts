// resolv.conf parsing per libc: every rule of glibc resolv/res_init.c, musl src/network/resolvconf.c and Go net/dnsconfig_unix.go, with an example.
import { describe, it, expect } from 'vitest';
import { parseResolvConf } from '../../src/pkg/resolvconf.js';

const g = (t: string, hostname?: string) => parseResolvConf(t, 'glibc', hostname ? { hostname } : {});
const m = (t: string) => parseResolvConf(t, 'musl');
const go = (t: string, hostname?: string) => parseResolvConf(t, 'go', hostname ? { hostname } : {});

describe('glibc 2.36 (resolv/res_init.c)', () => {
  it('defaults: ndots 1, timeout 5, attempts 2, nameserver 127.0.0.1', () => {
    expect(g('')).toMatchObject({ ndots: 1, timeout: 5, attempts: 2, nameservers: ['127.0.0.1'], search: [] });
  });
  it('comments only at column 0; no trailing comments', () => {
    expect(g('# search a\n; search b\nsearch corp.example.com # old.example\n').search).toEqual(['corp.example.com', '#', 'old.example']);
  });
  it('indented keywords are ignored', () => {
    expect(g('  search x\nnameserver 10.0.0.1\n').search).toEqual([]);
  });
  it('domain takes the first token; the last domain/search line wins', () => {
    expect(g('search a b\ndomain c d\n').search).toEqual(['c']);
    expect(g('domain c\nsearch a b\n').search).toEqual(['a', 'b']);
    expect(g('search a b\nsearch\n').search).toEqual(['a', 'b']); // no argument: skipped
  });
  it('no limit on the number of search domains', () => {
    const doms = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
    expect(g(`search ${doms.join(' ')}\n`).search).toHaveLength(40);
  });
  it('empty list: the hostname domain', () => {
    expect(g('nameserver 10.0.0.1\n', 'node1.corp.example').search).toEqual(['corp.example']);
    expect(g('nameserver 10.0.0.1\n', 'node1').search).toEqual([]);
    expect(g('search x\n', 'node1.corp.example').search).toEqual(['x']);
  });
  it('first 3 nameservers', () => {
    expect(g('nameserver 10.0.0.1\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nnameserver 10.0.0.4\n').nameservers).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    expect(g('nameserver fe80::1%eth0\n').nameservers).toEqual(['fe80::1%eth0']);
  });
  it('options: last wins, atoi, clamps, the 4-bit ndots field', () => {
    expect(g('options ndots:2 ndots:3\n').ndots).toBe(3);
    expect(g('options ndots:2\noptions ndots:4\n').ndots).toBe(4);
    expect(g('options ndots:abc\n').ndots).toBe(0);
    expect(g('options ndots:20\n').ndots).toBe(15);
    expect(g('options ndots:-1\n').ndots).toBe(15);
    expect(g('options timeout:99 attempts:9\n')).toMatchObject({ timeout: 30, attempts: 5 });
    expect(g('options attempts:0\n').attempts).toBe(0);
  });
  it('flags (prefix matches, as res_setoptions)', () => {
    const c = g('options rotate edns0 single-request-reopen no-tld-query use-vc trust-ad no-aaaa\n');
    expect(c).toMatchObject({
      rotate: true,
      edns0: true,
      singleRequestReopen: true,
      singleRequest: false,
      noTldQuery: true,
      useVc: true,
      trustAd: true,
      noAaaa: true,
    });
    expect(g('options single-request\n')).toMatchObject({ singleRequest: true, singleRequestReopen: false });
    expect(g('options no_tld_query\n').noTldQuery).toBe(true);
  });
});

describe('musl 1.2.3 (src/network/resolvconf.c)', () => {
  it('defaults', () => {
    expect(m('')).toMatchObject({ ndots: 1, timeout: 5, attempts: 2, nameservers: ['127.0.0.1'], search: [] });
  });
  it('a line of 255+ characters is ignored entirely', () => {
    const long = `search ${'a'.repeat(250)}`;
    expect(long.length).toBeGreaterThanOrEqual(255);
    expect(m(`search short\n${long}\n`).search).toEqual(['short']);
    const fits = `search ${'a'.repeat(247)}`; // 254 characters
    expect(m(`${fits}\n`).search).toEqual(['a'.repeat(247)]);
  });
  it('only the first ndots: on a line, digits only, clamped to 15; later lines override', () => {
    expect(m('options ndots:abc ndots:3\n').ndots).toBe(1);
    expect(m('options ndots:-1\n').ndots).toBe(1);
    expect(m('options ndots:20\n').ndots).toBe(15);
    expect(m('options ndots:2\noptions ndots:4\n').ndots).toBe(4);
    expect(m('options timeout:99 attempts:20\n')).toMatchObject({ timeout: 60, attempts: 10 });
  });
  it('no other option is understood', () => {
    expect(m('options rotate single-request no-aaaa use-vc edns0\n')).toMatchObject({
      rotate: false,
      singleRequest: false,
      noAaaa: false,
      useVc: false,
      edns0: false,
    });
  });
  it('domain/search: rest of the line verbatim, last wins, every token counts', () => {
    expect(m('search a b\ndomain c d\n').search).toEqual(['c', 'd']);
    expect(m('search corp.example # old\n').search).toEqual(['corp.example', '#', 'old']);
    expect(m('search a b\nsearch\n').search).toEqual([]); // an empty search line clears the list
  });
  it('up to 3 nameservers; no hostname-derived domain', () => {
    expect(m('nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\nnameserver 4.4.4.4\n').nameservers).toEqual(['1.1.1.1', '2.2.2.2', '3.3.3.3']);
    expect(parseResolvConf('nameserver 1.1.1.1\n', 'musl', { hostname: 'n.corp.example' }).search).toEqual([]);
  });
});

describe('Go 1.19 (net/dnsconfig_unix.go)', () => {
  it('defaults: 127.0.0.1 and ::1', () => {
    expect(go('')).toMatchObject({ ndots: 1, timeout: 5, attempts: 2, nameservers: ['127.0.0.1', '::1'], search: [] });
  });
  it('comments at column 0, leading blanks fine, no trailing comments', () => {
    expect(go('  search a.example # b\n#search x\n').search).toEqual(['a.example.', '#.', 'b.']);
  });
  it('domain -> first token; search -> all tokens rooted; last wins', () => {
    expect(go('search a b\ndomain c d\n').search).toEqual(['c.']);
    expect(go('domain c\nsearch a b.\n').search).toEqual(['a.', 'b.']);
    expect(go('search . a\n').search).toEqual(['.', 'a.']);
  });
  it('ndots via dtoi: unparsable or negative -> 0, >15 -> 15; timeout/attempts min 1', () => {
    expect(go('options ndots:abc\n').ndots).toBe(0);
    expect(go('options ndots:-1\n').ndots).toBe(0);
    expect(go('options ndots:20\n').ndots).toBe(15);
    expect(go('options ndots:2 ndots:3\n').ndots).toBe(3);
    expect(go('options timeout:0 attempts:0\n')).toMatchObject({ timeout: 1, attempts: 1 });
  });
  it('rotate, single-request(-reopen), use-vc/tcp', () => {
    expect(go('options rotate single-request-reopen tcp\n')).toMatchObject({ rotate: true, singleRequest: true, useVc: true });
  });
  it('first 3 nameservers; empty search list -> hostname domain', () => {
    expect(go('nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\nnameserver 4.4.4.4\n').nameservers).toHaveLength(3);
    expect(go('', 'pod.corp.example').search).toEqual(['corp.example.']);
  });
});
