// The cache of encoded answers, looked up with the raw question bytes: a numeric hash picks the
// entry and a byte compare confirms it, so a hit builds no string (the hot path of a busy server).

interface Entry {
  /** The question bytes as sent (name in its letter case, type, class). */
  question: Buffer;
  /** Reply size limit and EDNS/DO shape (see answerShape). */
  shape: number;
  reply: Buffer;
}

/** Entries kept before the cache starts over; bounds memory under random-name floods. */
const LIMIT = 20000;

/** EDNS presence and DO bit with the reply size limit, as one number. */
export function answerShape(edns: boolean, dnssecOk: boolean, limit: number): number {
  return (edns ? (dnssecOk ? 2 : 1) : 0) * 65536 + limit;
}

function hash(buf: Buffer, start: number, end: number, shape: number): number {
  // FNV-1a over the question bytes, then the shape.
  let h = 0x811c9dc5 ^ shape;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h >>> 0;
}

export class AnswerCache {
  private entries = new Map<number, Entry>();

  get size(): number {
    return this.entries.size;
  }

  /** The stored reply for the question at msg[12..questionEnd) with this shape. */
  get(msg: Buffer, questionEnd: number, shape: number): Buffer | undefined {
    const e = this.entries.get(hash(msg, 12, questionEnd, shape));
    if (e === undefined || e.shape !== shape || e.question.length !== questionEnd - 12) return undefined;
    return e.question.compare(msg, 12, questionEnd) === 0 ? e.reply : undefined;
  }

  set(msg: Buffer, questionEnd: number, shape: number, reply: Buffer): void {
    if (this.entries.size >= LIMIT) this.entries.clear();
    // A hash collision simply replaces the older entry.
    this.entries.set(hash(msg, 12, questionEnd, shape), { question: Buffer.from(msg.subarray(12, questionEnd)), shape, reply });
  }

  clear(): void {
    this.entries = new Map();
  }
}
