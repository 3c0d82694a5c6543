// The 2-byte length framing of DNS over TCP: what frame() writes, FrameReader reads back, however
// the bytes are cut into chunks on the way.
import { describe, expect, it } from 'vitest';
import { FrameReader, MAX_FRAMED_MESSAGE, frame } from '../../src/pkg/tcp-frames.js';

const msg = (n: number, seed: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (seed * 31 + i) % 256));

/** Pushes `bytes` in chunks of the given sizes (the last chunk takes the rest), taking out messages after each. */
function readAll(bytes: Buffer, sizes: number[]): { messages: Buffer[]; left: number } {
  const r = new FrameReader();
  const messages: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = i < sizes.length ? sizes[i]! : bytes.length - at;
    r.push(bytes.subarray(at, at + size));
    at += size;
    for (let m = r.next(); m; m = r.next()) messages.push(m);
  }
  return { messages, left: r.buffered };
}

describe('frame / FrameReader', () => {
  // [message lengths, chunk sizes]
  const rows: [string, number[], number[]][] = [
    ['one message, one chunk', [12], []],
    ['one message, byte by byte', [12], Array(13).fill(1)],
    ['the length split across chunks', [300], [1, 1, 150]],
    ['two messages, one chunk', [12, 40], []],
    ['two messages, the cut inside the second length', [12, 40], [15, 30]],
    ['an empty message between two', [17, 0, 29], [3, 17, 2]],
    ['the largest message', [MAX_FRAMED_MESSAGE], [40_000]],
    ['a zone transfer of five messages', [512, 4096, 65_000, 12, 700], [1000, 1000, 60_000]],
  ];
  it.each(rows)('%s', (_label, lengths, sizes) => {
    const messages = lengths.map((n, i) => msg(n, i));
    const bytes = frame(messages);
    expect(bytes.length).toBe(lengths.reduce((n, l) => n + l + 2, 0));
    const { messages: back, left } = readAll(bytes, sizes);
    expect(back).toEqual(messages);
    expect(left).toBe(0);
  });

  it('writes each length big-endian before its message', () => {
    expect([...frame([Buffer.from([0xaa]), Buffer.alloc(0)])]).toEqual([0, 1, 0xaa, 0, 0]);
    expect([...frame([msg(0x0102, 0)]).subarray(0, 2)]).toEqual([1, 2]);
  });

  it('refuses a message no 2-byte length can announce', () => {
    expect(() => frame([Buffer.alloc(MAX_FRAMED_MESSAGE + 1)])).toThrow(/at most 65535 bytes, not 65536/);
  });

  it('tells the announced length before the message arrives, and keeps what it has not handed out', () => {
    const r = new FrameReader();
    r.push(Buffer.from([0]));
    expect(r.nextLength()).toBeUndefined();
    r.push(Buffer.from([5, 1, 2]));
    expect(r.nextLength()).toBe(5);
    expect(r.next()).toBeUndefined();
    expect(r.buffered).toBe(4);
    r.push(Buffer.from([3, 4, 5, 0]));
    expect(r.next()).toEqual(Buffer.from([1, 2, 3, 4, 5]));
    expect(r.buffered).toBe(1);
    r.clear();
    expect(r.buffered).toBe(0);
  });

  it('hands out copies: changing a chunk afterwards changes no message', () => {
    const r = new FrameReader();
    const chunk = frame([msg(20, 1)]);
    r.push(chunk);
    const m = r.next()!;
    chunk.fill(0);
    expect(m).toEqual(msg(20, 1));
  });
});
