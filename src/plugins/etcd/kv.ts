// etcd reads shared by the mirror and `clusterdns sync`: a whole prefix, page by page at one
// revision, so a large record set never needs one huge response (gRPC's default limit is 4 MiB).
import type { Etcd3, IOptions } from 'etcd3';
import type { IBackoff } from 'cockatiel';

/** Keys per page of a prefix read. */
const PAGE_KEYS = 2000;

export interface RawKv {
  key: string;
  value: string;
  /** Lease ID ('0' when none). */
  lease: string;
  modRevision: number;
}

interface ClientOptions {
  endpoints: string[];
  username?: string;
  password?: string;
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
}

/**
 * An etcd client. The client library (gRPC and protobuf underneath) is imported here, when a
 * client is first made: loaded at start it cost every server about 0.2 s before its first
 * answer, etcd plugin or not.
 */
export async function newClient(o: ClientOptions): Promise<Etcd3> {
  const [{ Etcd3 }, { ExponentialBackoff }] = await Promise.all([import('etcd3'), import('cockatiel')]);
  const options: IOptions = {
    hosts: o.endpoints,
    dialTimeout: 2000,
    grpcOptions: {
      // Watch responses of a large transaction can exceed gRPC's 4 MiB default.
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      // gRPC's reconnect backoff grows to 120 s by default: after an etcd outage a replica would
      // stay behind for up to two minutes. Retry within 2 s instead.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2000,
    },
    // A lost watch retries within 2 s at worst (the client's default grows to 30 s), so replicas
    // catch up soon after etcd comes back.
    // etcd3 types this as IBackoff but calls it as the factory its own default is.
    faultHandling: { watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 }) as unknown as IBackoff<unknown> },
  };
  if (o.username !== undefined) options.auth = { username: o.username, password: o.password ?? '' };
  if (o.tls?.ca || o.tls?.cert) {
    // Without a CA file grpc falls back to the system's CAs.
    options.credentials = { rootCertificate: o.tls.ca as Buffer, privateKey: o.tls.key, certChain: o.tls.cert };
  }
  return new Etcd3(options);
}

/** Every key under `prefix` at one revision (the current one unless given), in key order. */
export async function listPrefix(client: Etcd3, prefix: string, revision?: number): Promise<{ kvs: RawKv[]; revision: number }> {
  const end = prefixEnd(prefix);
  const kvs: RawKv[] = [];
  let start = prefix;
  let rev = revision;
  for (;;) {
    let b = client.getAll().inRange({ start, end }).limit(PAGE_KEYS);
    if (rev !== undefined) b = b.revision(rev);
    const res = await b.exec();
    rev ??= Number(res.header.revision);
    for (const kv of res.kvs) kvs.push({ key: kv.key.toString(), value: kv.value.toString(), lease: kv.lease, modRevision: Number(kv.mod_revision) });
    if (!res.more || res.kvs.length === 0) break;
    start = res.kvs[res.kvs.length - 1]!.key.toString() + '\0';
  }
  return { kvs, revision: rev! };
}

/** The first key after every key that starts with `prefix` (etcd's prefix range end). */
function prefixEnd(prefix: string): Buffer {
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
