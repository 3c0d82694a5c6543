// etcd reads shared by the mirror and `clusterdns sync`: a whole prefix, page by page at one
// revision, so a large record set never needs one huge response.
import type { Etcd3, IOptions } from 'etcd3';
import type { IBackoff } from 'cockatiel';

/** Keys per page of a prefix read, at most. */
const PAGE_KEYS = 2000;
/** Keys of the first page, before the size of a key and value is known. */
const PROBE_KEYS = 64;
/** Bytes per page a prefix read aims at (keys and values); see listPrefix. */
export const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024;
/** Largest gRPC message a client takes (a page, a watch response fragment). */
export const DEFAULT_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;
/** Deadline of each etcd call (a read, a lease lookup, a transaction). */
export const DEFAULT_CALL_TIMEOUT_MS = 5000;
/**
 * Silence after which a connection (gRPC keepalive ping) or the watch (progress request) is
 * checked; etcd refuses pings more often than its --grpc-keepalive-min-time (5 s by default).
 */
export const DEFAULT_KEEPALIVE_MS = 10_000;
/** How long a member whose call failed is passed over before one call tries it again. */
const HALF_OPEN_MS = 5000;

export interface RawKv {
  key: string;
  value: string;
  /** Lease ID ('0' when none). */
  lease: string;
  modRevision: number;
}

export interface ClientOptions {
  endpoints: string[];
  username?: string;
  password?: string;
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** Deadline of each unary call (ms); default DEFAULT_CALL_TIMEOUT_MS. */
  callTimeoutMs?: number;
  /** gRPC keepalive ping interval (ms); default DEFAULT_KEEPALIVE_MS. */
  keepaliveMs?: number;
  /** Largest message received (bytes); default DEFAULT_MAX_RECEIVE_BYTES. */
  maxReceiveBytes?: number;
}

/**
 * An etcd client. The client library (gRPC and protobuf underneath) is imported here, when a
 * client is first made: loaded at start it cost every server about 0.2 s before its first
 * answer, etcd plugin or not.
 */
export async function newClient(o: ClientOptions): Promise<Etcd3> {
  const [{ Etcd3, isRecoverableError }, { ExponentialBackoff, circuitBreaker, handleWhen, ConsecutiveBreaker }] = await Promise.all([
    import('etcd3'),
    import('cockatiel'),
  ]);
  const callTimeoutMs = o.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const keepaliveMs = o.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  const options: IOptions = {
    hosts: o.endpoints,
    dialTimeout: 2000,
    // Without a deadline a call to a member that is frozen (or cut off behind a firewall that
    // drops packets) never returns; with one it fails, and the client retries on another member.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
    grpcOptions: {
      // Watch responses of a large transaction can exceed gRPC's 4 MiB default.
      'grpc.max_receive_message_length': o.maxReceiveBytes ?? DEFAULT_MAX_RECEIVE_BYTES,
      // gRPC's reconnect backoff grows to 120 s by default: after an etcd outage a replica would
      // stay behind for up to two minutes. Retry within 2 s instead.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2000,
      // A peer that stops answering pings is dropped, so its calls fail instead of hanging.
      'grpc.keepalive_time_ms': keepaliveMs,
      'grpc.keepalive_timeout_ms': callTimeoutMs,
      // etcd counts pings on a connection without calls as abuse (and closes it).
      'grpc.keepalive_permit_without_calls': 0,
    },
    // A lost watch retries within 2 s at worst (the client's default grows to 30 s), so replicas
    // catch up soon after etcd comes back.
    // etcd3 types this as IBackoff but calls it as the factory its own default is.
    faultHandling: {
      watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 }) as unknown as IBackoff<unknown>,
      // The client's own breaker opens a member's circuit after three failures in a row. A frozen
      // member fails each call only at its deadline, so with three members a listing of ten pages
      // kept landing there and a new replica took over 20 s to sync. With other members to ask,
      // one failure (a missed deadline included) sets a member aside for HALF_OPEN_MS; alone, it
      // keeps the client's three, so one slow call does not refuse every call for seconds.
      host: () =>
        circuitBreaker(handleWhen(isRecoverableError), {
          halfOpenAfter: HALF_OPEN_MS,
          breaker: new ConsecutiveBreaker(o.endpoints.length > 1 ? 1 : 3),
        }),
    },
  };
  if (o.username !== undefined) options.auth = { username: o.username, password: o.password ?? '' };
  if (o.tls?.ca || o.tls?.cert) {
    // Without a CA file grpc falls back to the system's CAs.
    options.credentials = { rootCertificate: o.tls.ca as Buffer, privateKey: o.tls.key, certChain: o.tls.cert };
  }
  return new Etcd3(options);
}

export interface ListOptions {
  /** Bytes (keys and values) a page aims at; default DEFAULT_PAGE_BYTES. */
  pageBytes?: number;
}

/**
 * Every key under `prefix` at one revision (the current one unless given), in key order.
 *
 * Pages are sized by bytes, not only by keys: 2,000 values of 34 KiB make one 70 MB response,
 * over any sane receive limit. The first page is small; each next one holds as many keys as fit
 * `pageBytes` at the sizes seen so far, and a page refused as too large is asked again at half.
 */
export async function listPrefix(client: Etcd3, prefix: string, revision?: number, opts: ListOptions = {}): Promise<{ kvs: RawKv[]; revision: number }> {
  const pageBytes = opts.pageBytes ?? DEFAULT_PAGE_BYTES;
  const end = prefixEnd(prefix);
  const kvs: RawKv[] = [];
  let start = prefix;
  let rev = revision;
  let limit = PROBE_KEYS;
  let seenKeys = 0;
  let seenBytes = 0;
  for (;;) {
    let b = client.getAll().inRange({ start, end }).limit(limit);
    if (rev !== undefined) b = b.revision(rev);
    let res;
    try {
      res = await b.exec();
    } catch (err) {
      if (limit > 1 && isTooLarge(err)) {
        limit = Math.max(1, Math.floor(limit / 2));
        continue;
      }
      throw err;
    }
    rev ??= Number(res.header.revision);
    for (const kv of res.kvs) {
      seenKeys++;
      seenBytes += kv.key.length + kv.value.length + 32;
      kvs.push({ key: kv.key.toString(), value: kv.value.toString(), lease: kv.lease, modRevision: Number(kv.mod_revision) });
    }
    if (!res.more || res.kvs.length === 0) break;
    start = res.kvs[res.kvs.length - 1]!.key.toString() + '\0';
    limit = Math.max(1, Math.min(PAGE_KEYS, Math.floor(pageBytes / Math.max(1, seenBytes / seenKeys))));
  }
  return { kvs, revision: rev! };
}

/** gRPC's RESOURCE_EXHAUSTED: the response was over the receive limit. */
function isTooLarge(err: unknown): boolean {
  const m = (err as Error)?.message ?? '';
  return /RESOURCE_EXHAUSTED|larger than max/i.test(m) || (err as { code?: number }).code === 8;
}

/** The first key after every key that starts with `prefix` (etcd's prefix range end). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const out = Buffer.from(b.subarray(0, i + 1));
      out[i]! += 1;
      return out;
    }
  }
  return Buffer.from([0]);
}

/**
 * An etcd failure in words, naming the endpoint(s): gRPC's own text ("14 UNAVAILABLE: No
 * connection established. Last error: ... Resolution note: ...") says little to an operator.
 */
export function describeEtcdError(err: unknown, endpoints: string | readonly string[]): string {
  const where = typeof endpoints === 'string' ? endpoints : endpoints.join(' ');
  const msg = String((err as Error)?.message ?? err);
  const cause = (): string => {
    if (/ECONNREFUSED/.test(msg)) return 'connection refused (is etcd running and listening there?)';
    if (/ENOTFOUND|EAI_AGAIN/.test(msg)) return 'the host name does not resolve';
    if (/EHOSTUNREACH|ENETUNREACH/.test(msg)) return 'the host is unreachable';
    if (/ECONNRESET/.test(msg)) return 'the connection was reset';
    if (/certificate|SSL|TLS|handshake/i.test(msg)) return `TLS failed: ${firstLine(msg)}`;
    if (/DEADLINE_EXCEEDED|Deadline exceeded/i.test(msg)) return 'no answer in time (etcd frozen, overloaded or unreachable)';
    if (/RESOURCE_EXHAUSTED|larger than max/i.test(msg)) return `a response was larger than the receive limit: ${firstLine(msg)}`;
    if (/no leader/i.test(msg)) return 'the member has no leader (cut off from its cluster)';
    if (/UNAUTHENTICATED|PERMISSION_DENIED|user name|password|auth|permission/i.test(msg)) return `etcd refused the credentials: ${stripCode(msg)}`;
    if (/compacted/i.test(msg)) return 'the revision asked for is compacted';
    if (/UNAVAILABLE|No connection established|Connection dropped/i.test(msg)) return 'cannot connect (no etcd answers there)';
    if (/CANCELLED/.test(msg)) return 'the call was cancelled';
    if (isBrokenCircuit(err)) return 'every recent call failed; the client waits before it tries again';
    return stripCode(msg);
  };
  return `etcd at ${where}: ${cause()}`;
}

/** The client's circuit breaker refused a call (the endpoint failed several times in a row). */
export function isBrokenCircuit(err: unknown): boolean {
  return /circuit breaker is open/i.test(String((err as Error)?.message ?? err));
}

function firstLine(s: string): string {
  return stripCode(s.split(/\. Resolution note|\n/)[0]!);
}

function stripCode(s: string): string {
  return s
    .replace(/^\d+ [A-Z_]+: /, '')
    .split(/\s*Resolution note:/)[0]!
    .trim();
}
