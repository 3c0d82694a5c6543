// The plugin contract shared by every plugin and the chain (see ../shared/DESIGN.md).
import type { Rr } from '../dns/records.js';

export type Protocol = 'udp' | 'tcp';

/** One query as every plugin sees it: decoded once by the server, never re-parsed. */
export interface DnsRequest {
  readonly id: number;
  /** Question name as sent, fully qualified (trailing dot), original letter case. */
  readonly name: string;
  /** Question name lowercased, fully qualified. */
  readonly qname: string;
  /** dns-packet type name, e.g. 'A', 'SRV', 'UNKNOWN_65280'. */
  readonly qtype: string;
  /** dns-packet class name, e.g. 'IN'. */
  readonly qclass: string;
  readonly opcode: string;
  readonly rd: boolean;
  /** EDNS0 shape of the query, absent when the query had no OPT record. */
  readonly edns?: { readonly udpSize: number; readonly do: boolean; readonly version: number };
  readonly protocol: Protocol;
  readonly client: { readonly address: string; readonly port: number };
  /** The local address the query arrived on. */
  readonly local: { readonly address: string; readonly port: number };
}

/** What a plugin returns. The server adds header bits, OPT, and truncation. */
export interface DnsResponse {
  rcode: number;
  /** Authoritative answer bit. */
  aa: boolean;
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
}

export type Next = (req: DnsRequest) => DnsResponse | Promise<DnsResponse>;

export interface Plugin {
  readonly name: string;
  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse>;
  /** Called once the server's listeners are up (plugins with their own listeners start here). */
  start?(): void | Promise<void>;
  /** Plugins that hold resources (sockets, timers) release them here. */
  close?(): void | Promise<void>;
  /**
   * Readiness for the `ready` plugin: true when ready, else a short reason. Plugins without this
   * method are always ready.
   */
  ready?(): true | string;
}

export function emptyResponse(rcode: number, aa = false): DnsResponse {
  return { rcode, aa, answer: [], authority: [], additional: [] };
}

/**
 * A plugin that knows the search path a client's resolver walks (CoreDNS's AutoPather), so
 * `autopath @NAME` can complete that walk on the server. The list ends with '' (the bare name).
 */
export interface SearchPathProvider extends Plugin {
  searchPath(req: DnsRequest): string[] | undefined;
}

export function isSearchPathProvider(p: Plugin | undefined): p is SearchPathProvider {
  return p !== undefined && typeof (p as Partial<SearchPathProvider>).searchPath === 'function';
}
