// The cache of encoded answers, looked up with the raw question bytes: a numeric hash picks the
// entry and a byte compare confirms it, so a hit builds no string (the hot path of a busy server).
//
// Bounded by bytes, not entries: one entry may be a 64 KB TCP answer, so a count cap let a client
// pin about a gigabyte. Eviction is CLOCK (second chance) over a ring of slots: a hit only sets a
// bit, and inserting past the budget moves the hand, evicting entries not used since it last
// passed, a few at a time, never the whole cache at once. A new entry takes the slot freed last,
// just behind the hand, so it is the last the hand reaches. (Walking a Map from its oldest entry
// instead costs a skip over every entry deleted since the table last compacted: quadratic under
// a steady stream of misses.)
//
// Keyed without regard to letter case (names are case-insensitive; 0x20 clients randomise case
// per query). A reply echoes the client's spelling, so an entry answers another spelling only
// once the handler has shown that the reply for any spelling is this one with the question name
// bytes replaced (see QueryHandler.checkCase); until then only the exact spelling hits. Answers
// shown to depend on the spelling (SRV targets spell the zone as asked) are kept per spelling,
// each in a slot of its own, within the same byte budget.

/** How an entry may answer other spellings of its question. */
export enum CaseUse {
  /** Not known yet: exact spelling only; the first other spelling asks the handler to check. */
  Unchecked = 0,
  /** Any spelling: the reply with the question name bytes copied from the query. */
  Any = 1,
  /** Exact spelling only (the reply spells names after the question elsewhere too); other spellings get slots of their own. */
  Exact = 2,
}

export interface CachedAnswer {
  /** The question bytes as stored (name in its letter case, type, class). */
  readonly question: Buffer;
  /** Reply size limit and EDNS/DO shape (see answerShape). */
  readonly shape: number;
  readonly reply: Buffer;
  readonly caseUse: CaseUse;
}

interface Entry extends CachedAnswer {
  caseUse: CaseUse;
  /** Bytes charged to the budget. */
  bytes: number;
  /** CLOCK reference bit: set by a hit, cleared when the hand passes. */
  ref: boolean;
  /** Its key in the map and its slot in the ring. */
  key: number;
  slot: number;
}

/** Default byte budget of one listener's cache. */
export const DEFAULT_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

/** Charged per entry beyond its buffers: the entry object, its question copy and the Map slot. */
const ENTRY_OVERHEAD = 160;

/** EDNS presence and DO bit with the reply size limit, as one number. */
export function answerShape(edns: boolean, dnssecOk: boolean, limit: number): number {
  return (edns ? (dnssecOk ? 2 : 1) : 0) * 65536 + limit;
}

/** Each byte with ASCII letters folded to lower case. */
const FOLD = new Uint8Array(256).map((_, c) => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c));

/**
 * The slot of one spelling of a question whose answer depends on the spelling (an Exact entry
 * holds the slot of the first): the hash of the bytes as sent, salted so it never equals the
 * folded hash of the same bytes.
 */
function spellingHash(buf: Buffer, start: number, end: number, shape: number): number {
  let h = 0x9e3779b9 ^ shape;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h >>> 0;
}

function hash(buf: Buffer, start: number, end: number, shape: number): number {
  // FNV-1a over the question name with ASCII letters folded to lower case, then type, class and
  // the shape.
  let h = 0x811c9dc5 ^ shape;
  const nameEnd = end - 4;
  for (let i = start; i < nameEnd; i++) h = Math.imul(h ^ FOLD[buf[i]!]!, 0x01000193);
  for (let i = nameEnd; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h >>> 0;
}

/** 0: same bytes; 1: same but for the letter case of the name; -1: another question. */
function compareQuestion(stored: Buffer, msg: Buffer, start: number, end: number): number {
  const len = stored.length;
  if (len !== end - start) return -1;
  // One pass in JavaScript: cheaper than native compares for questions this short. Label
  // lengths are below 64, so folding only ever touches letters.
  let exact = true;
  const nameLen = len - 4;
  for (let i = 0; i < nameLen; i++) {
    const a = stored[i]!;
    const b = msg[start + i]!;
    if (a !== b) {
      if (FOLD[a] !== FOLD[b]) return -1;
      exact = false;
    }
  }
  for (let i = nameLen; i < len; i++) if (stored[i] !== msg[start + i]) return -1;
  return exact ? 0 : 1;
}

export class AnswerCache {
  private entries = new Map<number, Entry>();
  /** The CLOCK ring: entries by slot; freed slots are undefined and listed in `free`. */
  private ring: (Entry | undefined)[] = [];
  private free: number[] = [];
  private hand = 0;
  private used = 0;
  /** Bumped by clear(): a case check started before a clear must not store its result. */
  generation = 0;
  hits = 0;
  evictions = 0;
  /** Whether the last hit's stored question is the query's, byte for byte (spelling included). */
  lastExact = false;

  constructor(readonly maxBytes = DEFAULT_ANSWER_CACHE_BYTES) {}

  get size(): number {
    return this.entries.size;
  }

  /** Bytes charged to the budget now (replies, questions and per-entry overhead). */
  get bytes(): number {
    return this.used;
  }

  /**
   * The stored answer for the question at msg[12..questionEnd) with this shape: same spelling,
   * or any spelling once the entry is known to answer any (copy the query's name bytes in).
   */
  get(msg: Buffer, questionEnd: number, shape: number): CachedAnswer | undefined {
    let e = this.entries.get(hash(msg, 12, questionEnd, shape));
    if (e === undefined || e.shape !== shape) return undefined;
    const cmp = compareQuestion(e.question, msg, 12, questionEnd);
    if (cmp < 0) return undefined;
    if (cmp === 1 && e.caseUse !== CaseUse.Any) {
      if (e.caseUse !== CaseUse.Exact) return undefined;
      // Answers that depend on the spelling are kept per spelling, in slots of their own.
      e = this.entries.get(spellingHash(msg, 12, questionEnd, shape));
      if (e === undefined || e.shape !== shape || compareQuestion(e.question, msg, 12, questionEnd) !== 0) return undefined;
    }
    e.ref = true;
    this.hits++;
    this.lastExact = cmp === 0;
    return e;
  }

  /**
   * Stores a reply for the question at msg[12..questionEnd). Returns true when another spelling
   * of the question is stored and not yet checked: the caller may check whether one reply
   * serves every spelling and report with settle().
   */
  set(msg: Buffer, questionEnd: number, shape: number, reply: Buffer): boolean {
    const key = hash(msg, 12, questionEnd, shape);
    const old = this.entries.get(key);
    if (old !== undefined && old.shape === shape) {
      const cmp = compareQuestion(old.question, msg, 12, questionEnd);
      if (cmp === 1 && old.caseUse === CaseUse.Exact) {
        this.put(spellingHash(msg, 12, questionEnd, shape), Buffer.from(msg.subarray(12, questionEnd)), shape, reply, CaseUse.Exact);
        return false;
      }
      if (cmp === 1) return old.caseUse === CaseUse.Unchecked;
    }
    this.put(key, Buffer.from(msg.subarray(12, questionEnd)), shape, reply, CaseUse.Unchecked);
    return false;
  }

  /**
   * The outcome of a case check for `question` (bytes 12..questionEnd of a query): `reply`, the
   * answer to that spelling, serves every spelling (stored as such), or only exact spellings.
   */
  settle(question: Buffer, shape: number, reply: Buffer, anyCase: boolean, generation: number): void {
    if (generation !== this.generation) return;
    const msg = Buffer.concat([Buffer.alloc(12), question]);
    const key = hash(msg, 12, msg.length, shape);
    const old = this.entries.get(key);
    if (!old || old.shape !== shape || compareQuestion(old.question, msg, 12, msg.length) < 0) return;
    // The reply's question must be the query's bytes for name bytes to be copied into it.
    if (anyCase && reply.length >= msg.length && reply.compare(msg, 12, msg.length, 12, msg.length) === 0) {
      this.put(key, question, shape, reply, CaseUse.Any);
    } else {
      old.caseUse = CaseUse.Exact;
    }
  }

  private put(key: number, question: Buffer, shape: number, reply: Buffer, caseUse: CaseUse): void {
    const bytes = reply.length + question.length + ENTRY_OVERHEAD;
    const old = this.entries.get(key);
    if (old) {
      // A hash collision or a newer answer simply replaces the older entry.
      this.remove(old);
    }
    if (bytes > this.maxBytes) return;
    const slot = this.free.pop() ?? this.ring.length;
    const e: Entry = { question, shape, reply, caseUse, bytes, ref: false, key, slot };
    this.ring[slot] = e;
    this.entries.set(key, e);
    this.used += bytes;
    this.evict();
  }

  private remove(e: Entry): void {
    this.entries.delete(e.key);
    this.ring[e.slot] = undefined;
    this.free.push(e.slot);
    this.used -= e.bytes;
  }

  /** CLOCK: the hand gives a referenced entry a second chance and evicts the next unreferenced one. */
  private evict(): void {
    while (this.used > this.maxBytes && this.entries.size > 0) {
      if (this.hand >= this.ring.length) this.hand = 0;
      const e = this.ring[this.hand];
      if (e?.ref) e.ref = false;
      else if (e) {
        this.remove(e);
        this.evictions++;
      }
      this.hand++;
    }
  }

  clear(): void {
    this.entries = new Map();
    this.ring = [];
    this.free = [];
    this.hand = 0;
    this.used = 0;
    this.generation++;
  }
}
