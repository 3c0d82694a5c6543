// The shortcuts `clusterdns records` takes at scale must give exactly what the general code gives:
// the sort keys of plain names order as canonicalKey's, and the question it writes itself is the
// message App.query builds with dns-packet.
import { describe, expect, it } from 'vitest';
import dnsPacket from 'dns-packet';
import { canonicalCompare, canonicalKey, canonicalKeys } from '../../src/dns/canonical.js';
import { queryMessage } from '../../src/cli/records.js';
import { prng } from '../helpers/prng.js';

const sortBy = (names: string[], keys: string[]): string[] =>
  names
    .map((n, i) => ({ n, k: keys[i]! }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map((x) => x.n);

function randomNames(seed: number, alphabet: string[], count: number): string[] {
  const rand = prng(seed);
  return Array.from({ length: count }, () => {
    const n = 1 + Math.floor(rand() * 4);
    const name = Array.from({ length: n }, () => Array.from({ length: Math.floor(rand() * 3) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('') || 'a').join('.');
    return rand() < 0.8 ? `${name}.` : name;
  });
}

describe('canonicalKeys', () => {
  it('orders plain names as canonicalCompare and canonicalKey do', () => {
    const names = [...randomNames(11, ['a', 'b', 'A', 'Z', '-', '0', '_', '*', 'z', '~'], 600), '.', '', 'a..b.', '.a.'];
    const keys = canonicalKeys(names);
    // The plain form, not canonicalKey's: the shortcut was taken.
    expect(keys).not.toEqual(names.map((n) => canonicalKey(n)));
    const byKeys = sortBy(names, keys);
    expect(byKeys.map((n) => canonicalKey(n))).toEqual(sortBy(names, names.map((n) => canonicalKey(n))).map((n) => canonicalKey(n)));
    expect(byKeys.map((n) => canonicalKey(n))).toEqual([...names].sort(canonicalCompare).map((n) => canonicalKey(n)));
  });

  it('uses canonicalKey for every name once one name has an escape or a byte outside plain ASCII', () => {
    for (const odd of ['a\\.b.example.', '\\000.example.', 'é.example.', 'a\u0000b.example.']) {
      const names = [...randomNames(5, ['a', 'B', '-', 'z'], 50), odd];
      expect(canonicalKeys(names)).toEqual(names.map((n) => canonicalKey(n)));
    }
  });
});

describe('records question messages', () => {
  it('are byte for byte what dnsPacket.encode gives for App.query', () => {
    const names = [
      '.', '..', 'a', 'a.', '.a', '.a.', 'a..b.', 'svc-0.ns-0.svc.cluster.local.', '_http._tcp.web.apps.svc.cluster.local.',
      '1.0.128.10.in-addr.arpa.', `${'x'.repeat(70)}.y.`, 'A-B.Cluster.Local.', 'a\\.b.c.', '\u0000a.', 'a\nb.', 'é.a.', '',
      ...randomNames(3, ['a', '-', '.', '\\', 'Q', '9'], 200),
    ];
    for (const name of names) {
      for (const type of ['A', 'AAAA', 'SRV', 'PTR', 'TXT', 'SOA', 'NS', 'CNAME']) {
        const expected = dnsPacket.encode({ id: 4242, type: 'query', flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A', class: 'IN' }], additionals: [] });
        expect(queryMessage(name, type).toString('hex'), `${JSON.stringify(name)} ${type}`).toBe(expected.toString('hex'));
      }
    }
  });
});
