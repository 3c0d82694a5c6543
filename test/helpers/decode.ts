// Typed views of a DNS reply as dns-packet decodes it. dns-packet's own types describe what it
// can encode (every field optional, OPT mixed into every section, no rcode), so tests that read
// a decoded reply through them either do not type-check or cast everywhere; these types say what
// decode() actually returns.
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, OptAnswer, Packet, Question, RecordClass } from 'dns-packet';

/** A decoded resource record other than OPT: it always has a TTL, a class and data. */
export type Rr = Exclude<Answer, OptAnswer> & { ttl: number; class: RecordClass };

/** A decoded message: every section is an array, the rcode and opcode are names (`NXDOMAIN`). */
export interface Reply extends DecodedPacket {
  id: number;
  flags: number;
  rcode: string;
  opcode: string;
  questions: Question[];
  answers: Rr[];
  authorities: Rr[];
  /** May hold the OPT pseudo-record, so records here are not narrowed. */
  additionals: Answer[];
}

function check(p: Packet, what: string): Reply {
  const r = p as Partial<Reply>;
  if (typeof r.rcode !== 'string' || !Array.isArray(r.answers) || !Array.isArray(r.authorities) || !Array.isArray(r.additionals)) {
    throw new Error(`${what} is not a decoded DNS message (no rcode or sections): ${JSON.stringify(p).slice(0, 200)}`);
  }
  return p as Reply;
}

/** Decodes a reply; a message that does not decode throws with its bytes in hex. */
export function decodeReply(buf: Buffer): Reply {
  let p: Packet;
  try {
    p = dnsPacket.decode(buf);
  } catch (err) {
    throw new Error(`reply does not decode (${(err as Error).message}): ${buf.toString('hex')}`);
  }
  return check(p, 'reply');
}

/** The typed view of a packet dns-packet already decoded (e.g. what the in-process app.query returns). */
export function asReply(p: Packet): Reply {
  return check(p, 'packet');
}

/** The OPT pseudo-record of a reply, if any. */
export function optOf(r: Reply): OptAnswer | undefined {
  return r.additionals.find((a): a is OptAnswer => a.type === 'OPT');
}

/** Anything with the in-process query of src/app.ts (App, or a test's wrapper of it). */
export interface Queryable {
  query(name: string, type: string, opts?: { do?: boolean; udpSize?: number; protocol?: 'udp' | 'tcp'; listener?: number; client?: string }): Promise<Packet>;
}

/** `app.query(...)`, typed as the decoded reply it is. */
export async function ask(app: Queryable, name: string, type: string, opts?: Parameters<Queryable['query']>[2]): Promise<Reply> {
  return asReply(await app.query(name, type, opts));
}
