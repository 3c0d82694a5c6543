// The listing `clusterdns records` prints is each zone's records deduplicated by owner|type|data
// (last one kept, in the first one's place) and sorted. ZoneListing keeps no map of keys and, for
// plain names, deduplicates after the sort; its order must be the one a map of keys, sorted, gives.
import { describe, expect, it } from 'vitest';
import type { Answer } from 'dns-packet';
import { canonicalKeys } from '../../src/dns/canonical.js';
import { rdataText, recordTextWith } from '../../src/dns/present.js';
import { fqdn } from '../../src/pkg/names.js';
import { ZoneListing, lower, plainSortKey } from '../../src/cli/records-list.js';
import { prng } from '../helpers/prng.js';

const TYPE_ORDER = ['SOA', 'NS', 'A', 'AAAA', 'CNAME', 'DNAME', 'MX', 'SRV', 'PTR', 'TXT', 'CAA'];

interface Added {
  owner: string;
  rr: Answer;
}

/** The listing as a map of keys gives it: the map's order, each key's last record, then sorted. */
function reference(added: readonly Added[]): string[] {
  const kept = new Map<string, { rr: Answer; rdata: string }>();
  for (const { owner, rr } of added) {
    const rdata = rdataText(rr);
    kept.set(`${owner}|${rr.type}|${rdata}`, { rr, rdata });
  }
  const listed = [...kept.values()];
  const names = canonicalKeys(listed.map((l) => l.rr.name));
  const keyed = listed.map((l, i) => ({ l, soa: l.rr.type === 'SOA' ? 0 : 1, name: names[i]!, type: TYPE_ORDER.indexOf(l.rr.type) }));
  keyed.sort((a, b) => {
    if (a.soa !== b.soa) return a.soa - b.soa;
    if (a.name !== b.name) return a.name < b.name ? -1 : 1;
    if (a.type !== b.type) return a.type - b.type;
    return a.l.rdata < b.l.rdata ? -1 : a.l.rdata > b.l.rdata ? 1 : 0;
  });
  return keyed.map((k) => recordTextWith(k.l.rr, k.l.rdata));
}

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

const PLAIN = [
  'web.example',
  'Web.Example',
  'a.web.example',
  'b.web.example',
  'example',
  'x-1.example',
  '_http._tcp.web.example',
  'z.example',
  'Z.example',
  'a.example',
];
const ODD = ['a\\.b.example', 'é.example', '\u212a.example', 'k.example', 'a\\066.example', 'ab.example', ''];

describe('ZoneListing', () => {
  it('orders and deduplicates as a map of keys, sorted, does', () => {
    const rand = prng(7);
    for (let round = 0; round < 300; round++) {
      // Odd names in a third of the zones; the root and '' among plain names in another third.
      const pool = round % 3 === 0 ? [...PLAIN, ...ODD] : round % 3 === 1 ? [...PLAIN, '', '.', '.'] : PLAIN;
      const list = new ZoneListing();
      const added: Added[] = [];
      const count = 1 + Math.floor(rand() * 60);
      for (let i = 0; i < count; i++) {
        const base = pick(rand, pool);
        const type = pick(rand, ['A', 'A', 'SRV', 'PTR', 'CNAME', 'SOA', 'TXT', 'HINFO', 'NAPTR']);
        const data =
          type === 'A'
            ? pick(rand, ['10.0.0.1', '10.0.0.2', '10.0.0.10'])
            : type === 'SRV'
              ? { priority: 0, weight: pick(rand, [10, 50]), port: 80, target: `${pick(rand, PLAIN)}` }
              : type === 'SOA'
                ? { mname: 'ns.example', rname: 'h.example', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 }
                : type === 'TXT'
                  ? [Buffer.from(pick(rand, ['a', 'b']))]
                  : pick(rand, PLAIN);
        const ttl = pick(rand, [5, 30]);
        const kind = plainName(base) ? pick(rand, ['decoded', 'direct', 'file']) : pick(rand, ['decoded', 'file']);
        if (kind === 'direct' && (type === 'A' || type === 'SRV' || type === 'PTR' || type === 'CNAME')) {
          // A record of a chain's response: a plain, fully qualified name; decoded, it loses the dot.
          const rr = { name: base, type, ttl, class: 'IN', flush: false, data } as Answer;
          const rdata = rdataText(rr);
          list.addDirect(fqdn(base), type, ttl, rdata);
          added.push({ owner: base.toLowerCase(), rr });
        } else if (kind === 'file') {
          const name = pick(rand, [base, `${base}.`]);
          const rr = { name, type, ttl, class: 'IN', data } as Answer;
          list.add(fqdn(name.toLowerCase()), rr, rdataText(rr));
          added.push({ owner: fqdn(name.toLowerCase()), rr });
        } else {
          const rr = { name: base === '' ? '.' : base, type, ttl, class: 'IN', flush: false, data } as Answer;
          list.add(rr.name.toLowerCase(), rr, rdataText(rr));
          added.push({ owner: rr.name.toLowerCase(), rr });
        }
      }
      const order = list.order();
      expect(
        order.map((r) => r.line()),
        `round ${round}`,
      ).toEqual(reference(added));
      for (const r of order) expect(r.line().endsWith(`\t${r.rdata}`)).toBe(true);
    }
  });

  it('writes the plain keys canonicalKeys gives', () => {
    const rand = prng(3);
    const alphabet = 'abcXYZ-_09*~.';
    for (let i = 0; i < 2000; i++) {
      const n = 1 + Math.floor(rand() * 30);
      let name = '';
      for (let j = 0; j < n; j++) name += alphabet[Math.floor(rand() * alphabet.length)];
      const fq = `${name.replace(/^\.+/, '')}.`;
      expect(plainSortKey(fq), JSON.stringify(fq)).toBe(canonicalKeys([fq])[0]);
    }
    expect(plainSortKey('.')).toBe(canonicalKeys(['.'])[0]);
  });

  it('lowercases as toLowerCase does, returning the name itself when nothing changes', () => {
    const plain = 'web-0.apps.svc.cluster.local.';
    expect(lower(plain)).toBe(plain);
    for (const s of ['Web.Example.', 'É.example.', '\u212a.x.', 'İ.', 'abc']) expect(lower(s)).toBe(s.toLowerCase());
  });
});

function plainName(name: string): boolean {
  return /^[\x21-\x5b\x5d-\x7e]+$/.test(name) && !name.includes('..');
}
