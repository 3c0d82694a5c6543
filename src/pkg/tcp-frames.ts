// DNS over TCP puts a 2-byte big-endian length before each message (RFC 1035 4.2.2, RFC 7766
// section 8); the server, forward's upstream exchanges and the resolver's client all frame
// through here.

const EMPTY = Buffer.alloc(0);

/** The largest message a 2-byte length can announce. */
export const MAX_FRAMED_MESSAGE = 0xffff;

/** The messages, each after its length, in one buffer (one socket write keeps them in order). */
export function frame(messages: readonly Uint8Array[]): Buffer {
  let size = 0;
  for (const m of messages) {
    // writeUInt16BE would throw too, with a message that names no DNS limit.
    if (m.length > MAX_FRAMED_MESSAGE) throw new RangeError(`a DNS message over TCP holds at most ${MAX_FRAMED_MESSAGE} bytes, not ${m.length}`);
    size += m.length + 2;
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const m of messages) {
    out.writeUInt16BE(m.length, at);
    out.set(m, at + 2);
    at += m.length + 2;
  }
  return out;
}

/** Cuts the messages out of what a TCP connection receives, however the bytes are chunked. */
export class FrameReader {
  private pending: Buffer = EMPTY;

  /** Bytes received and not yet handed out as messages. */
  get buffered(): number {
    return this.pending.length;
  }

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
  }

  /** The length the next message announces, as soon as its 2 bytes have arrived (before the message). */
  nextLength(): number | undefined {
    return this.pending.length >= 2 ? this.pending.readUInt16BE(0) : undefined;
  }

  /**
   * The next whole message, or undefined until all of it has arrived. A copy: a message answered
   * later does not keep the received chunk (and the messages after it) in memory.
   */
  next(): Buffer | undefined {
    const len = this.nextLength();
    if (len === undefined || this.pending.length < len + 2) return undefined;
    const msg = Buffer.from(this.pending.subarray(2, len + 2));
    this.pending = this.pending.length === len + 2 ? EMPTY : this.pending.subarray(len + 2);
    return msg;
  }

  /** Drops what was received (the connection is gone). */
  clear(): void {
    this.pending = EMPTY;
  }
}
