// Records as the chain and the plugins see them: dns-packet's shapes, with names written
// fully qualified (trailing dot) inside clusterdns and converted only at the wire boundary.
import type { Answer } from 'dns-packet';

export type Rr = Answer;

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
