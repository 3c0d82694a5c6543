// Structural check of an upstream's reply before it is decoded, as miekg/dns's Msg.Unpack does
// for CoreDNS: every record's RDATA must fill exactly its RDLENGTH in the shape of its type. A
// reply that fails is an exchange error (CoreDNS's forward gets an Unpack error and answers
// SERVFAIL), never records relayed half-read: dns-packet's decoder trusts each type's fixed size
// and would misread an A record of 2 bytes, then make the encoder throw on the garbage.

const T_A = 1;
const T_AAAA = 28;
const T_OPT = 41;
const T_SOA = 6;
const T_MX = 15;
const T_SRV = 33;
const T_TXT = 16;
/** Types whose RDATA is exactly one domain name (CNAME, NS, PTR, DNAME, MB, MG, MR, MD, MF). */
const NAME_ONLY = new Set([2, 3, 4, 5, 7, 8, 9, 12, 39]);
const SECTIONS = ['answer', 'authority', 'additional'] as const;

/**
 * Offset after the (possibly compressed) name at `off`, reading no byte at or past `end`; throws
 * on a pointer forward or out of the message, a reserved label type, or a name over 255 octets.
 */
function skipName(msg: Buffer, off: number, end: number): number {
  let after = -1;
  let length = 1;
  for (let hops = 0; hops < 128; hops++) {
    if (off >= end) throw new Error('name runs past its end');
    const len = msg[off]!;
    if (len === 0) return after === -1 ? off + 1 : after;
    if ((len & 0xc0) === 0xc0) {
      if (off + 1 >= end) throw new Error('compression pointer runs past its end');
      const target = ((len & 0x3f) << 8) | msg[off + 1]!;
      if (after === -1) after = off + 2;
      if (target >= msg.length) throw new Error('compression pointer out of the message');
      off = target;
      // Targets of pointers are read from the whole message, wherever the pointer sits.
      end = msg.length;
      continue;
    }
    if ((len & 0xc0) !== 0) throw new Error(`reserved label type 0x${len.toString(16)}`);
    length += len + 1;
    if (length > 255) throw new Error('name longer than 255 octets');
    off += len + 1;
  }
  throw new Error('too many compression pointers');
}

function checkRdata(msg: Buffer, type: number, start: number, end: number): void {
  const len = end - start;
  const exact = (what: string, after: number): void => {
    if (after !== end) throw new Error(`${what}: RDATA of ${len} bytes does not end where its RDLENGTH says`);
  };
  switch (type) {
    case T_A:
      if (len !== 4) throw new Error(`A: RDATA of ${len} bytes, not 4`);
      return;
    case T_AAAA:
      if (len !== 16) throw new Error(`AAAA: RDATA of ${len} bytes, not 16`);
      return;
    case T_MX:
      if (len < 3) throw new Error(`MX: RDATA of ${len} bytes`);
      exact('MX', skipName(msg, start + 2, end));
      return;
    case T_SRV:
      if (len < 7) throw new Error(`SRV: RDATA of ${len} bytes`);
      exact('SRV', skipName(msg, start + 6, end));
      return;
    case T_SOA: {
      const rname = skipName(msg, start, end);
      exact('SOA', skipName(msg, rname, end) + 20);
      return;
    }
    case T_TXT: {
      let o = start;
      while (o < end) o += 1 + msg[o]!;
      exact('TXT', o);
      return;
    }
    case T_OPT: {
      let o = start;
      while (o + 4 <= end) o += 4 + msg.readUInt16BE(o + 2);
      exact('OPT', o);
      return;
    }
    default:
      if (NAME_ONLY.has(type)) exact(`type ${type}`, skipName(msg, start, end));
  }
}

/** Undefined when the message is well formed, else what is wrong with it and where. */
export function malformed(msg: Buffer): string | undefined {
  try {
    if (msg.length < 12) throw new Error('shorter than a header');
    let off = 12;
    for (let i = msg.readUInt16BE(4); i > 0; i--) {
      off = skipName(msg, off, msg.length) + 4;
      if (off > msg.length) throw new Error('question runs past the end');
    }
    for (let s = 0; s < 3; s++) {
      const count = msg.readUInt16BE(6 + 2 * s);
      for (let i = 0; i < count; i++) {
        const where = `${SECTIONS[s]} record ${i + 1}`;
        try {
          off = skipName(msg, off, msg.length);
          if (off + 10 > msg.length) throw new Error('record header runs past the end');
          const type = msg.readUInt16BE(off);
          const rdlength = msg.readUInt16BE(off + 8);
          const start = off + 10;
          const end = start + rdlength;
          if (end > msg.length) throw new Error(`RDLENGTH ${rdlength} runs past the end`);
          checkRdata(msg, type, start, end);
          off = end;
        } catch (err) {
          throw new Error(`${where}: ${(err as Error).message}`);
        }
      }
    }
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Offset after the question section, or undefined when it does not fit in the message. */
export function questionEnd(msg: Buffer): number | undefined {
  try {
    if (msg.length < 12) return undefined;
    let off = 12;
    for (let i = msg.readUInt16BE(4); i > 0; i--) off = skipName(msg, off, msg.length) + 4;
    return off <= msg.length ? off : undefined;
  } catch {
    return undefined;
  }
}
