// The plugin contract shared by every plugin and the chain (see ARCHITECTURE.md).
import type { DnsResponse, Rr } from '../dns/records.js';
import type { Transport } from '../dns/transport.js';

export type { DnsResponse } from '../dns/records.js';

export type Protocol = 'udp' | 'tcp';

export interface Endpoint {
  address: string;
  port: number;
}

/** Where a query arrived: the listener's address and port, and its transport (dns:// when absent). */
export interface LocalEndpoint extends Endpoint {
  transport?: Transport;
}

/** What observers (query log, metrics) learn about each packet handled. */
export interface QueryEvent {
  msg: Buffer;
  /** The reply sent, or null when the packet got none. */
  reply: Buffer | null;
  protocol: Protocol;
  client: Endpoint;
  local: LocalEndpoint;
  durationNs: bigint;
  /** The server-block zone that serves a lowercased name, or undefined (REFUSED). */
  zoneOf(qname: string): string | undefined;
  /** The plugin that wrote the answer, when a plugin did (also for answers from the cache). */
  plugin?: string;
}

/** Called after every packet; must not throw into the serving path (errors are logged). */
export type QueryObserver = (e: QueryEvent) => void;

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
  readonly local: Readonly<LocalEndpoint>;
  /**
   * The query's authority section, decoded only for IXFR queries (it carries the client's SOA,
   * RFC 1995); absent otherwise.
   */
  readonly queryAuthority?: readonly Rr[];
  /**
   * Set on requests made by internal lookups (BlockContext.lookup): the questions (`qname|qtype`)
   * from the client's down to this one, so a chain of lookups is bounded and a loop is seen.
   */
  readonly lookupTrail?: readonly string[];
}

export type Next = (req: DnsRequest) => DnsResponse | Promise<DnsResponse>;

export interface Plugin {
  readonly name: string;
  /**
   * Answers, or calls `next(req)`. Plugins that only configure the server or watch it (health,
   * ready, prometheus, log, reload) leave it out, and the chain does not call them per query.
   */
  serve?(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse>;
  /**
   * Loads the plugin's data (off the serving thread where it is large). The server awaits every
   * plugin's load before the configuration serves, at start and on a reload, so queries keep
   * being answered by the running configuration meanwhile; a load that throws fails the build.
   */
  load?(): Promise<void>;
  /** Called once the server's listeners are up (plugins with their own listeners start here). */
  start?(): void | Promise<void>;
  /**
   * Called first on shutdown, while DNS is still served (health's lameduck waits here), but not
   * on a reload.
   */
  beforeShutdown?(): Promise<void>;
  /** The longest beforeShutdown may take, so a supervisor waits that long before killing. */
  readonly shutdownDelayMs?: number;
  /** Plugins that hold resources (sockets, timers) release them here; `reload` when replaced by a reload. */
  close?(opts?: { reload?: boolean }): void | Promise<void>;
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

/**
 * A plugin that can hand over a whole zone for AXFR/IXFR (CoreDNS's transfer.Transferer), so the
 * `transfer` plugin serves zone transfers without knowing the backend's internals.
 */
export interface Transferer extends Plugin {
  /**
   * Every record of `zone` (lowercased, fully qualified, exactly one of the plugin's zones) in
   * the backend's transfer order: the SOA first and again last. Undefined when the plugin is not
   * authoritative for that zone.
   */
  transfer(zone: string): Rr[] | undefined;
}

export function isTransferer(p: Plugin | undefined): p is Transferer {
  return p !== undefined && typeof (p as Partial<Transferer>).transfer === 'function';
}

/** One question of a listing, with the zone its answers belong to. */
export interface ListedQuestion {
  name: string;
  type: string;
  zone: string;
}

/**
 * A plugin that can list what it serves, for `clusterdns records` and `sync`: the questions whose
 * answers, asked through the server, are its records (computed backends), or the records
 * themselves with their zone (backends that hold them as data, like zone files).
 */
export interface RecordLister extends Plugin {
  listQuestions?(): Iterable<ListedQuestion>;
  listRecords?(): Iterable<{ zone: string; rr: Rr }>;
}

export function isRecordLister(p: Plugin | undefined): p is RecordLister {
  const l = p as Partial<RecordLister> | undefined;
  return typeof l?.listQuestions === 'function' || typeof l?.listRecords === 'function';
}
