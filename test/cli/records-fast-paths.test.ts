// The shortcuts `clusterdns records` takes at scale must give exactly what the general code gives:
// the sort keys of plain names order as canonicalKey's, and the question it writes itself is the
// message App.query builds with dns-packet.
import { describe, expect, it } from 'vitest';
import dnsPacket from 'dns-packet';
import { canonicalCompare, canonicalKey, canonicalKeys } from '../../src/dns/canonical.js';
import { queryMessage } from '../../src/cli/records.js';
import { replySections } from '../../src/cli/records-reply.js';
import { buildApp } from '../../src/app.js';
import { isClusterDataProvider } from '../../src/chain/cluster-data.js';
import pino from 'pino';
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
    const name = Array.from(
      { length: n },
      () => Array.from({ length: Math.floor(rand() * 3) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('') || 'a',
    ).join('.');
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
    expect(byKeys.map((n) => canonicalKey(n))).toEqual(
      sortBy(
        names,
        names.map((n) => canonicalKey(n)),
      ).map((n) => canonicalKey(n)),
    );
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
      '.',
      '..',
      'a',
      'a.',
      '.a',
      '.a.',
      'a..b.',
      'svc-0.ns-0.svc.cluster.local.',
      '_http._tcp.web.apps.svc.cluster.local.',
      '1.0.128.10.in-addr.arpa.',
      `${'x'.repeat(70)}.y.`,
      'A-B.Cluster.Local.',
      'a\\.b.c.',
      '\u0000a.',
      'a\nb.',
      'é.a.',
      '',
      ...randomNames(3, ['a', '-', '.', '\\', 'Q', '9'], 200),
    ];
    for (const name of names) {
      for (const type of ['A', 'AAAA', 'SRV', 'PTR', 'TXT', 'SOA', 'NS', 'CNAME']) {
        const expected = dnsPacket.encode({
          id: 4242,
          type: 'query',
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ name, type: type as 'A', class: 'IN' }],
          additionals: [],
        });
        expect(queryMessage(name, type).toString('hex'), `${JSON.stringify(name)} ${type}`).toBe(expected.toString('hex'));
      }
    }
  });
});

describe('records reply sections', () => {
  const same = (reply: Buffer): void => {
    const packet = dnsPacket.decode(reply);
    // Key order too: JSON, not toEqual.
    expect(JSON.stringify(replySections(reply))).toBe(JSON.stringify({ answers: packet.answers ?? [], additionals: packet.additionals ?? [] }));
  };

  it('are what dnsPacket.decode gives for every question records asks of the examples', async () => {
    const app = await buildApp({
      conf: 'examples/Corefile',
      manifests: ['examples/manifests'],
      port: 0,
      logger: pino({ level: 'silent' }),
      oneShot: true,
      answerCacheBytes: 0,
    });
    try {
      let asked = 0;
      for (const plugin of app.chains.flatMap((c) => c.plugins)) {
        if (!isClusterDataProvider(plugin)) continue;
        for (const { name, type } of plugin.clusterQuestions()) {
          for (const dnssec of [false, true]) {
            const msg = dnsPacket.encode({
              id: 1,
              type: 'query',
              flags: dnsPacket.RECURSION_DESIRED,
              questions: [{ name, type: type as 'A', class: 'IN' }],
              additionals: dnssec ? [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK } as never] : [],
            });
            const reply = await app.queryWire(msg, { protocol: 'tcp' });
            same(reply!);
            asked++;
          }
        }
      }
      expect(asked).toBeGreaterThan(50);
    } finally {
      await app.close(0);
    }
  }, 60000);

  it('are what dnsPacket.decode gives for other records, classes, names and broken replies', () => {
    const reply = dnsPacket.encode({
      id: 2,
      type: 'response',
      questions: [{ name: 'Web.example.', type: 'A', class: 'IN' }],
      answers: [
        { name: 'web.example.', type: 'A', ttl: 5, class: 'IN', data: '10.0.0.1' },
        { name: 'web.example.', type: 'AAAA', ttl: 5, class: 'IN', data: 'fd00::1' },
        { name: 'web.example.', type: 'TXT', ttl: 5, class: 'IN', data: ['x"y'] },
        { name: 'web.example.', type: 'A', ttl: 5, class: 'CH', data: '10.0.0.2' },
        { name: 'web.example.', type: 'A', ttl: 5, class: 'IN', flush: true, data: '10.0.0.3' },
        { name: 'é.example.', type: 'CNAME', ttl: 5, class: 'IN', data: 'web.example.' },
        { name: '_h._tcp.web.example.', type: 'SRV', ttl: 5, class: 'IN', data: { priority: 1, weight: 2, port: 80, target: 'web.example.' } },
        { name: '1.0.0.10.in-addr.arpa.', type: 'PTR', ttl: 5, class: 'IN', data: '.' },
      ],
      authorities: [{ name: 'example.', type: 'NS', ttl: 5, class: 'IN', data: 'ns.example.' }],
      additionals: [{ name: 'ns.example.', type: 'A', ttl: 5, class: 'IN', data: '10.0.0.9' }, { type: 'OPT', name: '.', udpPayloadSize: 1232 } as never],
    });
    same(reply);
    // dns-packet compresses nothing: a name pointing back into the question.
    const pointer = Buffer.from(reply);
    const at = pointer.indexOf(Buffer.from('\x03web\x07example\x00', 'latin1'), 12 + 17);
    const compressed = Buffer.concat([pointer.subarray(0, at), Buffer.from([0xc0, 12 + 4]), pointer.subarray(at + 13)]);
    same(compressed);
    for (const cut of [5, 20, 40, reply.length - 3]) expect(() => replySections(reply.subarray(0, cut))).toThrow();
  });
});
