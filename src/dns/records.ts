// Records as the chain and the plugins see them: dns-packet's shapes, with names written
// fully qualified (trailing dot) inside clusterdns and converted only at the wire boundary.
import type { Answer, OptAnswer, PacketOpt } from 'dns-packet';

export type Rr = Answer;

type ZoneRecord = Exclude<Rr, { type: 'OPT' }>;
/** The types of records a zone holds: every type dns-packet knows but OPT (no record, an EDNS pseudo-record). */
export type RecordType = ZoneRecord['type'];
// Distributes over the members of dns-packet's union (X and T are bare type parameters), so a
// type shared by several members (A, CNAME, ... all take a string) finds its data too.
type DataOf<X, T> = X extends { type: infer U; data: infer D } ? (T extends U ? D : never) : never;
/** The data dns-packet takes for a record of type T: a string for A, an SrvData for SRV, ... */
export type RecordData<T extends RecordType> = DataOf<ZoneRecord, T>;

/** An IN-class record; `data` is checked against `type` (a union of types takes any of their data). */
export function rr<T extends RecordType>(name: string, type: T, ttl: number, data: RecordData<T>): Rr {
  // The pair is checked by the signature; TypeScript cannot tie a generic type to one union member.
  return { name, type, ttl, class: 'IN', data } as Rr;
}

// Copies of a record with one field changed. A spread of dns-packet's union loses which member
// it is, so these retype it, in one place, instead of a cast at every copy.
/** `r` with another TTL. */
export function withTtl(r: Rr, ttl: number): Rr {
  return { ...r, ttl } as Rr;
}

/** `r` with another owner name. */
export function withName(r: Rr, name: string): Rr {
  return { ...r, name } as Rr;
}

/** `r` with other data; the caller keeps it of the record's type (rewrite changes a name inside it). */
export function withData(r: Rr, data: unknown): Rr {
  return { ...r, data } as Rr;
}

/** A record's TTL; 0 when it has none (an OPT record, or one built without). */
export function ttlOf(r: Rr): number {
  return ('ttl' in r ? r.ttl : undefined) ?? 0;
}

/** Shared by every OPT record built here: nothing adds options to one. */
const NO_OPTIONS: PacketOpt[] = [];

/** The EDNS OPT pseudo-record (RFC 6891 6.1.3): version 0, no options; `dnssecOk` sets the DO bit. */
export function optRr(udpPayloadSize: number, dnssecOk: boolean, extendedRcode = 0): OptAnswer {
  return { type: 'OPT', name: '.', udpPayloadSize, extendedRcode, ednsVersion: 0, flags: dnssecOk ? 0x8000 : 0, flag_do: dnssecOk, options: NO_OPTIONS };
}

export { Rcode } from '../pkg/rcode.js';

/** What a plugin returns. The server adds header bits, OPT, and truncation. */
export interface DnsResponse {
  rcode: number;
  /** Authoritative answer bit. */
  aa: boolean;
  /** The plugin that wrote this response (set by the chain; the `plugin` label of metrics). */
  plugin?: string;
  /** Recursion available / authentic data bits, set only when relaying an upstream's answer. */
  ra?: boolean;
  ad?: boolean;
  answer: Rr[];
  authority: Rr[];
  additional: Rr[];
  /**
   * True when the response depends only on the question (name as spelled, type, class, EDNS
   * shape) and the loaded data, so the server may reuse its encoding until the next reload.
   */
  cacheable?: boolean;
  /**
   * Further messages of a multi-message answer (zone transfers over TCP): each is the answer
   * section of one more message sent after this one, same ID and question. Ignored over UDP.
   */
  more?: Rr[][];
}
