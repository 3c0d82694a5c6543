// `clusterdns records` reads most answers from the chain's response instead of the wire. Whatever
// a chain returns, the records it then lists must be exactly what the handler's reply, decoded,
// holds; what it cannot vouch for it must leave to the wire. Checked against a real QueryHandler
// answering from a chain whose plugin returns generated responses, odd ones included.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Chain, Router } from '../../src/chain/chain.js';
import type { DnsRequest, DnsResponse } from '../../src/chain/plugin.js';
import type { Rr } from '../../src/dns/records.js';
import { rdataText } from '../../src/dns/present.js';
import { QueryHandler } from '../../src/server/handler.js';
import { queryMessage } from '../../src/cli/records.js';
import { replySections } from '../../src/cli/records-reply.js';
import { DirectReader, decodedRecord, directRdata, plainNameWire } from '../../src/cli/records-direct.js';
import { prng } from '../helpers/prng.js';
import { buildApp } from '../../src/app.js';
import { isClusterDataProvider } from '../../src/chain/cluster-data.js';
import { isRecordLister } from '../../src/chain/plugin.js';

const NAMES = [
  'web.example.',
  'Web.EXAMPLE.',
  'a.b.c.example.',
  'example.',
  '.',
  'x.example',
  '_http._tcp.web.example.',
  'a\\.b.example.',
  '\\000.example.',
  'é.example.',
  'a..example.',
  'a b.example.',
  `${'l'.repeat(63)}.example.`,
  `${'l'.repeat(64)}.example.`,
  `${'abcdefghi.'.repeat(24)}example.`,
  `${'abcdefghi.'.repeat(25)}example.`,
  '1.0.0.10.in-addr.arpa.',
];
const IPS: unknown[] = ['10.0.0.1', '0.0.0.0', '255.255.255.255', '010.0.0.1', '10.0.0.256', '1.2.3', '1.2.3.4.5', '1..2.3', 'x', 7, '00.1.2.3', '1.2.3.0009'];
const U16S: unknown[] = [undefined, 0, 1, 80, 65535, 65536, -1, 1.5, Number.NaN, '5'];
const TTLS: unknown[] = [5, 0, 30, undefined, 2 ** 32 - 1, 2 ** 32, -1, 1.5, Number.NaN];

// Responses are mostly of what a cluster serves, with odd values mixed in at `oddness`.
let oddness = 0;

function pick<T>(rand: () => number, list: readonly T[]): T {
  // The first entries of each list are the usual ones.
  const usual = Math.min(list.length, 3);
  return list[Math.floor(rand() * (rand() < oddness ? list.length : usual))]!;
}

function record(rand: () => number, authority: boolean): Rr {
  const type = pick(rand, authority ? ['SOA', 'SOA', 'SOA', 'NS', 'A'] : ['A', 'A', 'A', 'CNAME', 'PTR', 'SRV', 'SRV', 'AAAA', 'TXT', 'MX', 'SOA']);
  let data: unknown;
  switch (type) {
    case 'A':
      data = pick(rand, IPS);
      break;
    case 'AAAA':
      data = pick(rand, ['fd00::1', '::', 'FD00:0:0::1']);
      break;
    case 'CNAME':
    case 'PTR':
    case 'NS':
      data = pick(rand, NAMES);
      break;
    case 'SRV':
      data = { priority: pick(rand, U16S), weight: pick(rand, U16S), port: pick(rand, U16S), target: pick(rand, NAMES) };
      break;
    case 'SOA':
      data = {
        mname: pick(rand, NAMES),
        rname: pick(rand, NAMES),
        serial: pick(rand, TTLS),
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: pick(rand, TTLS),
      };
      break;
    case 'MX':
      data = { preference: 10, exchange: pick(rand, NAMES) };
      break;
    default:
      data = ['v=1'];
  }
  const rr: Record<string, unknown> = { name: pick(rand, NAMES), type, data };
  const klass = pick(rand, ['IN', 'IN', undefined, 'CH']);
  if (klass !== undefined) rr.class = klass;
  const ttl = pick(rand, TTLS);
  if (ttl !== undefined || rand() < 0.5) rr.ttl = ttl;
  if (rand() < 0.05) rr.flush = true;
  return rr as unknown as Rr;
}

function response(rand: () => number, big: boolean): DnsResponse {
  const count = (max: number): number => Math.floor(rand() * (max + 1));
  const answer = Array.from({ length: big ? 1500 + count(1500) : count(5) }, () => record(rand, false));
  if (big) {
    // Large but otherwise plain: only the size can stop the direct reading.
    for (const rr of answer)
      Object.assign(rr, {
        name: 'web.example.',
        type: 'SRV',
        class: 'IN',
        ttl: 5,
        flush: false,
        data: { priority: 0, weight: 1, port: 80, target: `${'t'.repeat(20)}-${Math.floor(rand() * 1e6)}.example.` },
      });
  }
  const res: DnsResponse = {
    rcode: rand() < 0.8 ? 0 : 3,
    aa: true,
    answer,
    authority: Array.from({ length: count(2) }, () => record(rand, true)),
    additional: Array.from({ length: count(3) }, () => record(rand, false)),
  };
  if (rand() < 0.03) res.more = [[record(rand, false)]];
  return res;
}

describe('records direct reading', () => {
  it('lists what the handler reply holds, or leaves the question to the wire', async () => {
    const rand = prng(22);
    let current: DnsResponse | Error = { rcode: 0, aa: true, answer: [], authority: [], additional: [] };
    const plugin = {
      name: 'generated',
      serve(_req: DnsRequest): DnsResponse | Promise<DnsResponse> {
        if (current instanceof Error) throw current;
        // Now and then asynchronously, as a plugin that looks something up answers.
        return rand() < 0.1 ? Promise.resolve(current) : current;
      },
    };
    const chain = new Chain(['example.', 'in-addr.arpa.'], [plugin]);
    const entries = [
      { zone: 'example.', chain },
      { zone: 'in-addr.arpa.', chain },
    ];
    let vouched = 0;
    let declined = 0;
    for (const max of [8, 4096]) {
      const handler = new QueryHandler(new Router(entries), pino({ level: 'silent' }), { answerCacheBytes: 0, maxAnswerRecords: max });
      const reader = new DirectReader([entries], max);
      const client = { address: '127.0.0.1', port: 5353 };
      for (let i = 0; i < 2500; i++) {
        oddness = rand() < 0.5 ? 0 : 0.3;
        current = rand() < 0.02 ? new Error('plugin failed') : response(rand, max > 8 && rand() < 0.04);
        const name = pick(rand, ['web.example.', 'Web.Example.', '1.0.0.10.in-addr.arpa.', 'web.example', 'other.test.', 'a\\.b.example.', '.example.']);
        const type = pick(rand, ['A', 'SRV', 'PTR', 'TXT', 'SOA', 'AXFR', 'ANY']);
        const reply = await handler.handle(queryMessage(name, type), 'tcp', client, client);
        const wire = replySections(reply!);
        const direct = await reader.sections(name, type, 0);
        if (direct === undefined) {
          declined++;
          continue;
        }
        vouched++;
        const decoded = { answers: direct.answer.map(decodedRecord), additionals: direct.additional.map(decodedRecord) };
        // Key order too: JSON, not toEqual.
        expect(JSON.stringify(decoded), `${name} ${type}, question ${i}`).toBe(JSON.stringify(wire));
        for (const [i, r] of [...direct.answer, ...direct.additional].entries()) {
          expect(directRdata(r)).toBe(rdataText([...wire.answers, ...wire.additionals][i]!));
        }
      }
    }
    // Both ways are taken, often.
    expect(vouched).toBeGreaterThan(500);
    expect(declined).toBeGreaterThan(500);
  }, 60000);

  it('lists what the handler replies for every question records asks of the example clusters', async () => {
    for (const [conf, manifests] of [
      ['examples/Corefile', 'examples/manifests'],
      ['examples/Corefile.edge', 'examples'],
      ['test/fixtures/k8s/Corefile.options', 'test/fixtures/k8s/manifests'],
    ] as const) {
      const app = await buildApp({ conf, manifests: [manifests], port: 0, logger: pino({ level: 'silent' }), oneShot: true, answerCacheBytes: 0 });
      try {
        const reader = DirectReader.of(app);
        let vouched = 0;
        for (const listener of app.listenerZones().keys()) {
          for (const plugin of app.chains.flatMap((c) => c.plugins)) {
            const listed = isClusterDataProvider(plugin)
              ? plugin.clusterQuestions()
              : isRecordLister(plugin) && plugin.listQuestions
                ? plugin.listQuestions()
                : [];
            for (const { name, type } of listed) {
              const direct = await reader.sections(name, type, listener);
              if (direct === undefined) continue;
              vouched++;
              const wire = replySections((await app.queryWire(queryMessage(name, type), { listener, protocol: 'tcp' }))!);
              const decoded = { answers: direct.answer.map(decodedRecord), additionals: direct.additional.map(decodedRecord) };
              expect(JSON.stringify(decoded), `${conf}: ${name} ${type}`).toBe(JSON.stringify(wire));
            }
          }
        }
        expect(vouched, conf).toBeGreaterThan(20);
      } finally {
        await app.close(0);
      }
    }
  }, 60000);

  it('takes a name as plain only when the encoder writes it byte for byte and the reader reads it back', () => {
    expect(plainNameWire('web.example.')).toBe(13);
    expect(plainNameWire('web.example')).toBe(13);
    expect(plainNameWire('.')).toBe(1);
    for (const odd of ['a..b.', '.a.', 'a\\.b.', 'é.', 'a b.', `${'x'.repeat(64)}.`, `${'abcdefghi.'.repeat(26)}`, 7, undefined])
      expect(plainNameWire(odd), String(odd)).toBe(-1);
  });
});
