// The encoded-answer cache: a hit needs the same question (letter case included until the handler
// has shown one reply serves every spelling) and the same reply shape (EDNS, DO, size limit); it
// is bounded by bytes and evicts a few entries at a time (CLOCK).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dnsPacket from 'dns-packet';
import { AnswerCache, answerShape, CaseUse } from '../../src/server/answer-cache.js';
import { fastCacheSlot } from '../../src/dns/query.js';
import { buildApp, type App } from '../../src/app.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { buildQuery, manifests, prng, T, tcpQuery, udpQuery } from './raw.js';

const query = (name: string, opts: { do?: boolean; udpSize?: number } = {}): Buffer =>
  dnsPacket.encode({
    id: 1,
    type: 'query',
    questions: [{ name, type: 'A', class: 'IN' }],
    additionals: opts.udpSize ? [{ type: 'OPT', name: '.', udpPayloadSize: opts.udpSize, flags: opts.do ? dnsPacket.DNSSEC_OK : 0 } as never] : [],
  });

const slotOf = (msg: Buffer, tcp = false): { end: number; shape: number } => {
  const slot = fastCacheSlot(msg, tcp);
  expect(slot).toBeGreaterThanOrEqual(0);
  return { end: slot % 512, shape: Math.floor(slot / 512) };
};

describe('AnswerCache', () => {
  it('finds an answer by the exact question bytes and shape', () => {
    const cache = new AnswerCache();
    const msg = query('web.default.svc.cluster.local');
    const { end, shape } = slotOf(msg);
    expect(shape).toBe(answerShape(false, false, 512));
    const reply = Buffer.from('reply');
    cache.set(msg, end, shape, reply);
    expect(cache.get(query('web.default.svc.cluster.local'), end, shape)?.reply).toBe(reply);
  });

  it('keeps letter case, EDNS, DO and the size limit apart', () => {
    const cache = new AnswerCache();
    const plain = query('web.default.svc.cluster.local');
    const p = slotOf(plain);
    cache.set(plain, p.end, p.shape, Buffer.from('plain'));
    const upper = query('WEB.default.svc.cluster.local');
    const u = slotOf(upper);
    expect(cache.get(upper, u.end, u.shape)).toBeUndefined();
    const edns = query('web.default.svc.cluster.local', { udpSize: 1232 });
    const e = slotOf(edns);
    expect(e.shape).toBe(answerShape(true, false, 1232));
    expect(cache.get(edns, e.end, e.shape)).toBeUndefined();
    const dnssec = query('web.default.svc.cluster.local', { udpSize: 4096, do: true });
    expect(slotOf(dnssec).shape).toBe(answerShape(true, true, 1232));
    expect(slotOf(plain, true).shape).toBe(answerShape(false, false, 65535));
  });

  it('leaves unusual packets to the full parser', () => {
    const msg = query('x.cluster.local');
    msg[2] = msg[2]! | 0x80; // a response
    expect(fastCacheSlot(msg, false)).toBe(-1);
    expect(fastCacheSlot(Buffer.concat([query('x.cluster.local'), Buffer.from([0])]), false)).toBe(-1);
  });
});

describe('AnswerCache bounds and eviction', () => {
  const reply = (n: number): Buffer => Buffer.alloc(n, 7);

  it('never holds more bytes than its budget, however many answers arrive', () => {
    const cache = new AnswerCache(100_000);
    for (let i = 0; i < 2000; i++) {
      const msg = query(`n${i}.cluster.local`);
      const { end, shape } = slotOf(msg);
      cache.set(msg, end, shape, reply(1000));
      expect(cache.bytes).toBeLessThanOrEqual(100_000);
    }
    expect(cache.size).toBeGreaterThan(50);
    expect(cache.evictions).toBeGreaterThan(1800);
    // An answer larger than the whole budget is not kept at all.
    const huge = query('huge.cluster.local');
    const h = slotOf(huge);
    cache.set(huge, h.end, h.shape, reply(200_000));
    expect(cache.get(huge, h.end, h.shape)).toBeUndefined();
  });

  it('evicts a few entries per insert when full, not everything at once', () => {
    const cache = new AnswerCache(100_000);
    for (let i = 0; i < 500; i++) {
      const msg = query(`n${i}.cluster.local`);
      const { end, shape } = slotOf(msg);
      const before = cache.size;
      cache.set(msg, end, shape, reply(1000));
      if (i > 200) expect(cache.size).toBeGreaterThanOrEqual(before);
    }
    // The newest entries are all still there.
    for (let i = 450; i < 500; i++) {
      const msg = query(`n${i}.cluster.local`);
      const { end, shape } = slotOf(msg);
      expect(cache.get(msg, end, shape)).toBeDefined();
    }
  });

  it('gives an entry that was hit a second chance (CLOCK)', () => {
    const cache = new AnswerCache(10 * 1200);
    const msgs = Array.from({ length: 10 }, (_, i) => query(`n${i}.cluster.local`));
    for (const m of msgs) cache.set(m, slotOf(m).end, slotOf(m).shape, reply(1000));
    expect(cache.size).toBe(10);
    // n0 is the oldest but in use; n1 is the oldest unused.
    expect(cache.get(msgs[0]!, slotOf(msgs[0]!).end, slotOf(msgs[0]!).shape)).toBeDefined();
    const extra = query('extra.cluster.local');
    cache.set(extra, slotOf(extra).end, slotOf(extra).shape, reply(1000));
    expect(cache.get(msgs[0]!, slotOf(msgs[0]!).end, slotOf(msgs[0]!).shape)).toBeDefined();
    expect(cache.get(msgs[1]!, slotOf(msgs[1]!).end, slotOf(msgs[1]!).shape)).toBeUndefined();
  });

  it('keys without regard to case: another spelling asks for a check, and hits once settled', () => {
    const cache = new AnswerCache();
    const lower = query('web.default.svc.cluster.local');
    const l = slotOf(lower);
    const stored = Buffer.concat([lower.subarray(0, l.end), Buffer.from('answer')]);
    expect(cache.set(lower, l.end, l.shape, stored)).toBe(false);
    const mixed = query('WeB.default.SVC.cluster.local');
    const m = slotOf(mixed);
    expect(cache.get(mixed, m.end, m.shape)).toBeUndefined();
    const mixedReply = Buffer.concat([mixed.subarray(0, m.end), Buffer.from('answer')]);
    expect(cache.set(mixed, m.end, m.shape, mixedReply)).toBe(true);
    cache.settle(Buffer.from(mixed.subarray(12, m.end)), m.shape, mixedReply, true, cache.generation);
    const third = query('WEB.DEFAULT.svc.cluster.local');
    const hit = cache.get(third, slotOf(third).end, slotOf(third).shape);
    expect(hit?.caseUse).toBe(CaseUse.Any);
    expect(hit?.reply).toBe(mixedReply);
    // Another type, or a non-letter difference, is another question.
    const other = dnsPacket.encode({ id: 1, type: 'query', questions: [{ name: 'web.default.svc.cluster.local', type: 'AAAA', class: 'IN' }] });
    expect(cache.get(other, slotOf(other).end, slotOf(other).shape)).toBeUndefined();
    const digit = query('web.default.svc.cluster.loca1');
    expect(cache.get(digit, slotOf(digit).end, slotOf(digit).shape)).toBeUndefined();
  });

  it('a spelling found to matter keeps the entry to its own spelling; a check from before a clear is dropped', () => {
    const cache = new AnswerCache();
    const lower = query('web.default.svc.cluster.local');
    const l = slotOf(lower);
    cache.set(lower, l.end, l.shape, Buffer.from('lower'));
    const mixed = query('Web.default.svc.cluster.local');
    const m = slotOf(mixed);
    expect(cache.set(mixed, m.end, m.shape, Buffer.from('mixed'))).toBe(true);
    cache.settle(Buffer.from(mixed.subarray(12, m.end)), m.shape, Buffer.from('mixed'), false, cache.generation);
    expect(cache.get(mixed, m.end, m.shape)).toBeUndefined();
    // From now on each spelling is kept in a slot of its own.
    expect(cache.set(mixed, m.end, m.shape, Buffer.from('mixed'))).toBe(false);
    expect(cache.get(mixed, m.end, m.shape)?.reply.toString()).toBe('mixed');
    expect(cache.get(lower, l.end, l.shape)?.reply.toString()).toBe('lower');
    const third = query('weB.default.svc.cluster.local');
    expect(cache.get(third, slotOf(third).end, slotOf(third).shape)).toBeUndefined();
    expect(cache.size).toBe(2);
    const gen = cache.generation;
    cache.clear();
    cache.set(lower, l.end, l.shape, Buffer.from('lower'));
    cache.settle(Buffer.from(mixed.subarray(12, m.end)), m.shape, mixed, true, gen);
    expect(cache.get(mixed, m.end, m.shape)).toBeUndefined();
  });
});

/** `name` with each letter's case chosen by `rand`. */
function respell(name: string, rand: () => number): string {
  return [...name].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
}

const extraManifests = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-cache-'));
fs.writeFileSync(
  path.join(extraManifests, 'alias.yaml'),
  [
    // In-zone target: its CNAME data shares the question's suffix but keeps its own spelling.
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: alias\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: nginx.default.svc.cluster.local\n',
    // Out of zone (lower case: the API server rejects an externalName that is no DNS-1123 subdomain).
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: out\n  namespace: default\nspec:\n  type: ExternalName\n  externalName: example.net\n',
  ].join('---\n'),
);
const corefileText = 'cluster.local in-addr.arpa ip6.arpa {\n  kubernetes {\n    ttl 5\n  }\n}\n';

/** Questions whose answers differ in how they depend on the spelling. */
const questions: { name: string; type: number; tcp?: boolean; edns?: boolean }[] = [
  { name: 'nginx.default.svc.cluster.local', type: T.A },
  { name: 'nginx.default.svc.cluster.local', type: T.AAAA },
  { name: 'nope.default.svc.cluster.local', type: T.A },
  { name: 'nginx.default.svc.cluster.local', type: T.SRV },
  { name: '_http._tcp.big.proto.svc.cluster.local', type: T.SRV, tcp: true },
  { name: 'big.proto.svc.cluster.local', type: T.A, tcp: true },
  { name: 'big.proto.svc.cluster.local', type: T.A },
  { name: 'm.p.svc.cluster.local', type: T.A, edns: true },
  { name: 'alias.default.svc.cluster.local', type: T.A },
  { name: 'out.default.svc.cluster.local', type: T.A },
  { name: 'cluster.local', type: T.SOA },
  { name: 'cluster.local', type: T.NS },
  { name: '10.0.96.10.in-addr.arpa', type: 12 /* PTR */ },
];

describe('case-insensitive answer cache: byte for byte what a fresh answer would be', () => {
  let cached: App;
  let fresh: App;
  beforeAll(async () => {
    cached = await buildApp({ corefileText, manifests: [manifests, extraManifests], port: 0 });
    fresh = await buildApp({ corefileText, manifests: [manifests, extraManifests], port: 0, answerCacheBytes: 0 });
  });

  const ask = async (app: App, msg: Buffer, tcp: boolean): Promise<Buffer> => {
    const client = { address: '127.0.0.1', port: 5353 };
    const reply = await app.queryHandlers[0]!.handle(msg, tcp ? 'tcp' : 'udp', client, client);
    expect(reply).not.toBeNull();
    return reply!;
  };

  it.each(questions.map((q) => [`${q.name} type ${q.type}${q.tcp ? ' tcp' : ''}${q.edns ? ' edns' : ''}`, q] as const))(
    '%s: 40 random spellings, each the same bytes as an uncached server gives',
    async (_title, q) => {
      const rand = prng(q.name.length * 31 + q.type);
      for (let i = 0; i < 40; i++) {
        const name = i === 0 ? q.name : respell(q.name, rand);
        const msg = buildQuery({ name, type: q.type, id: 1000 + i, edns: q.edns ? { udpSize: 1232 } : undefined });
        const got = await ask(cached, msg, q.tcp === true);
        const want = await ask(fresh, msg, q.tcp === true);
        expect(got.toString('hex'), `${name}`).toBe(want.toString('hex'));
      }
    },
  );

  it('a name from the data that shares the question suffix keeps the entry to exact spellings', async () => {
    // lower first, then a spelling whose every suffix is mixed in both cases (so the two
    // replies compared by the check are alike), then lower again: the CNAME data
    // nginx.default.svc.cluster.local compresses against a lowercase question only.
    const spellings = [
      'alias.default.svc.cluster.local',
      'aLiAs.dEfAuLt.sVc.cLuStEr.lOcAl',
      'alias.default.svc.cluster.local',
      'ALIAS.default.svc.cluster.local',
    ];
    for (const [i, name] of spellings.entries()) {
      const msg = buildQuery({ name, type: T.A, id: 3000 + i });
      expect((await ask(cached, msg, false)).toString('hex'), name).toBe((await ask(fresh, msg, false)).toString('hex'));
    }
  });

  it('answers that serve every spelling are reused for every spelling (hits, one entry)', async () => {
    const handler = cached.queryHandlers[0]!;
    const rand = prng(99);
    const name = 'nginx.default.svc.cluster.local';
    for (let i = 0; i < 3; i++) await ask(cached, buildQuery({ name: respell(name, rand), type: T.A }), false);
    const before = handler.cacheStats();
    for (let i = 0; i < 200; i++) await ask(cached, buildQuery({ name: respell(name, rand), type: T.A }), false);
    const after = handler.cacheStats();
    expect(after.hits - before.hits).toBe(200);
    expect(after.entries).toBe(before.entries);
  });

  it('spellings of an answer that depends on them are kept one by one, within the byte budget', async () => {
    const small = await buildApp({ corefileText, manifests: [manifests, extraManifests], port: 0, answerCacheBytes: 1024 * 1024 });
    const handler = small.queryHandlers[0]!;
    const rand = prng(7);
    const name = '_http._tcp.big.proto.svc.cluster.local';
    // SRV targets echo the zone's spelling and are never compressed: each spelling its own answer.
    const spellings = Array.from({ length: 1000 }, (_, i) => (i === 0 ? name : respell(name, rand)));
    for (const spelled of spellings) await ask(small, buildQuery({ name: spelled, type: T.SRV }), true);
    const full = handler.cacheStats();
    expect(full.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(full.evictions).toBeGreaterThan(0);
    // A spelling asked again is a hit, byte for byte what an uncached server sends.
    const again = buildQuery({ name: spellings[999]!, type: T.SRV, id: 77 });
    const got = await ask(small, again, true);
    expect(handler.cacheStats().hits).toBe(full.hits + 1);
    expect(got.toString('hex')).toBe((await ask(fresh, again, true)).toString('hex'));
  });
});

describe('case-insensitive answer cache through the real server (UDP and TCP)', () => {
  let cachedServer: RunningServer;
  let freshServer: RunningServer;
  beforeAll(async () => {
    const conf = path.join(extraManifests, 'Corefile');
    fs.writeFileSync(conf, corefileText.replace('{\n  kubernetes', '{\n  bind 127.0.0.1\n  kubernetes'));
    const args = ['--conf', conf, '--manifests', manifests, '--manifests', extraManifests];
    [cachedServer, freshServer] = await Promise.all([startServer(args), startServer([...args, '--answer-cache-bytes', '0'])]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([cachedServer?.stop(), freshServer?.stop()]);
  });

  it('mixed-case queries after a lowercase one get the bytes of a fresh answer', async () => {
    const rand = prng(5);
    for (const q of questions) {
      for (let i = 0; i < 6; i++) {
        const name = i === 0 ? q.name : respell(q.name, rand);
        const msg = buildQuery({ name, type: q.type, id: 2000 + i, edns: q.edns ? { udpSize: 1232 } : undefined });
        const exchange = q.tcp ? tcpQuery : udpQuery;
        const got = await exchange(msg, { port: cachedServer.port });
        const want = await exchange(msg, { port: freshServer.port });
        expect(got.toString('hex'), `${name} ${q.type}`).toBe(want.toString('hex'));
      }
    }
  });
});
