// The encoded-answer cache: a hit needs the same question bytes (letter case included) and the
// same reply shape (EDNS, DO, size limit).
import { describe, it, expect } from 'vitest';
import dnsPacket from 'dns-packet';
import { AnswerCache, answerShape } from '../../src/server/answer-cache.js';
import { fastCacheSlot } from '../../src/dns/query.js';

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
    expect(cache.get(query('web.default.svc.cluster.local'), end, shape)).toBe(reply);
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
