// One etcd Watch over a key prefix, driven on the gRPC stream directly rather than through the
// etcd3 library's Watcher: that one resumes a lost watch from the last response header's
// revision, which during a catch-up is etcd's current revision, not the last event sent, so
// every event in between was skipped for good. This loop resumes from the last delivered
// event's revision + 1, as etcd's Go client does.
//
// It also notices a member that stops answering without closing the connection (a frozen
// process, a lost partition): a stream silent for `keepaliveMs` gets a progress request, and one
// unanswered for `callTimeoutMs` is dropped and the watch moves to the next endpoint. The stream
// carries etcd's require-leader metadata, so a member cut off from its cluster ends it too.
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import { describeEtcdError, type RawKv } from './kv.js';

export interface WatchEvent extends RawKv {
  del: boolean;
}

export interface PrefixWatchOptions {
  prefix: string;
  /** Range end of the prefix (etcd's prefix end). */
  rangeEnd: Buffer;
  /** First revision wanted. */
  fromRevision: number;
  /** Endpoint URLs, tried in order from the first; a failed one passes the watch to the next. */
  endpoints: string[];
  /** A client on one endpoint (made once per endpoint, closed by close()). */
  clientFor(endpoint: string): Promise<Etcd3>;
  callTimeoutMs: number;
  keepaliveMs: number;
  log: Logger;
  /** Every event of one watch response (all fragments), in revision order. */
  onEvents(events: WatchEvent[]): void;
  /** etcd says every event up to `revision` was sent: the mirror is current. */
  onProgress(revision: number): void;
  /** The resume revision is compacted: the caller relists. The watch has stopped. */
  onCompacted(compactRevision: number): void;
  onState(connected: boolean, reason?: string): void;
}

interface GrpcKv {
  key: Buffer;
  value: Buffer;
  lease: string;
  mod_revision: string;
}
interface WatchResponse {
  header?: { revision: string };
  watch_id: string;
  created: boolean;
  canceled: boolean;
  compact_revision: string;
  cancel_reason: string;
  fragment: boolean;
  events: { type: 'Put' | 'Delete'; kv: GrpcKv }[];
}
interface Duplex {
  write(msg: unknown): boolean;
  on(event: 'data', fn: (r: WatchResponse) => void): Duplex;
  on(event: 'error', fn: (err: Error) => void): Duplex;
  on(event: 'end', fn: () => void): Duplex;
  cancel(): void;
  end(): void;
}
interface Metadata {
  clone(): Metadata;
  set(key: string, value: string): void;
}
/** What the etcd3 client's connection pool offers (not in its public types). */
interface Pool {
  withConnection<R>(service: 'Watch', fn: (a: { client: { watch(md: Metadata, opts: object): Duplex }; metadata: Metadata }) => R): Promise<R>;
}

export class PrefixWatch {
  /** The revision a new stream starts from: one past the last event (or progress) received. */
  private next: number;
  private hostIndex = 0;
  private stream: Duplex | undefined;
  private generation = 0;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastHeardAt = 0;
  private probeSentAt = 0;
  private openedAt = 0;
  private created = false;
  private fragments: WatchEvent[] = [];
  private failures = 0;

  constructor(private readonly o: PrefixWatchOptions) {
    this.next = o.fromRevision;
  }

  /** The revision the watch resumes from. */
  get resumeRevision(): number {
    return this.next;
  }

  /** True while a liveness probe is unanswered (the data may be behind). */
  get probing(): boolean {
    return this.probeSentAt > 0;
  }

  /** When etcd was last heard from on the watch (ms since the epoch). */
  get heardAt(): number {
    return this.lastHeardAt;
  }

  start(): void {
    this.timer = setInterval(() => this.checkLiveness(), Math.max(100, Math.min(1000, this.o.callTimeoutMs / 4)));
    this.timer.unref();
    void this.open();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.drop();
  }

  private endpoint(): string {
    return this.o.endpoints[this.hostIndex % this.o.endpoints.length]!;
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const gen = ++this.generation;
    const endpoint = this.endpoint();
    this.created = false;
    this.fragments = [];
    this.openedAt = Date.now();
    this.probeSentAt = 0;
    let stream: Duplex;
    try {
      const client = await this.o.clientFor(endpoint);
      // The pool adds the auth token to the metadata; require-leader goes on a copy.
      const pool = (client as unknown as { pool: Pool }).pool;
      stream = await pool.withConnection('Watch', ({ client: grpc, metadata }) => {
        const md = metadata.clone();
        md.set('hasleader', 'true');
        return grpc.watch(md, {});
      });
    } catch (err) {
      if (gen === this.generation) this.fail(gen, describeEtcdError(err, endpoint));
      return;
    }
    if (this.closed || gen !== this.generation) {
      stream.cancel();
      return;
    }
    this.stream = stream;
    stream.on('data', (r) => this.onResponse(gen, r));
    stream.on('error', (err) => this.fail(gen, describeEtcdError(err, endpoint)));
    stream.on('end', () => this.fail(gen, `${endpoint} ended the watch`));
    stream.write({
      create_request: {
        key: Buffer.from(this.o.prefix),
        range_end: this.o.rangeEnd,
        start_revision: String(this.next),
        progress_notify: true,
        // A catch-up batch can be larger than the receive limit: etcd splits it instead.
        fragment: true,
      },
    });
  }

  private onResponse(gen: number, r: WatchResponse): void {
    if (gen !== this.generation || this.closed) return;
    this.lastHeardAt = Date.now();
    this.probeSentAt = 0;
    if (r.canceled) {
      const compact = Number(r.compact_revision);
      if (compact > 0) {
        this.drop();
        this.generation++;
        this.o.onCompacted(compact);
        return;
      }
      this.fail(gen, `${this.endpoint()} cancelled the watch: ${r.cancel_reason || 'no reason given'}`);
      return;
    }
    if (r.created) {
      this.created = true;
      this.failures = 0;
      this.o.onState(true);
      return;
    }
    for (const ev of r.events) {
      this.fragments.push({
        key: ev.kv.key.toString(),
        value: ev.kv.value.toString(),
        lease: ev.kv.lease,
        modRevision: Number(ev.kv.mod_revision),
        del: ev.type === 'Delete',
      });
    }
    if (r.fragment) return;
    const events = this.fragments;
    this.fragments = [];
    if (events.length > 0) {
      this.next = events[events.length - 1]!.modRevision + 1;
      this.o.onEvents(events);
    } else if (r.header) {
      // A progress notification: every event up to the header's revision has been sent. (Only
      // without events: with events, the header is etcd's current revision, which a catch-up
      // has not reached yet.)
      const rev = Number(r.header.revision);
      this.next = Math.max(this.next, rev + 1);
      this.o.onProgress(rev);
    }
  }

  private checkLiveness(): void {
    if (this.closed || !this.stream) return;
    const now = Date.now();
    if (!this.created) {
      if (now - this.openedAt > this.o.callTimeoutMs)
        this.fail(this.generation, `${this.endpoint()} did not start the watch within ${this.o.callTimeoutMs} ms`);
      return;
    }
    if (this.probeSentAt > 0) {
      if (now - this.probeSentAt > this.o.callTimeoutMs) {
        this.fail(this.generation, `${this.endpoint()} did not answer a progress request within ${this.o.callTimeoutMs} ms (member frozen or cut off)`);
      }
      return;
    }
    if (now - this.lastHeardAt >= this.o.keepaliveMs) {
      this.probeSentAt = now;
      this.stream.write({ progress_request: {} });
    }
  }

  private drop(): void {
    const s = this.stream;
    this.stream = undefined;
    if (!s) return;
    try {
      s.cancel();
    } catch {
      // already closed
    }
  }

  /** Ends this stream and opens one on the next endpoint, from where the last one stopped. */
  private fail(gen: number, reason: string): void {
    if (gen !== this.generation || this.closed) return;
    this.generation++;
    this.drop();
    this.o.onState(false, reason);
    this.failures++;
    this.hostIndex++;
    // Every endpoint failed once in a row: wait before the next round.
    const round = Math.floor((this.failures - 1) / this.o.endpoints.length);
    const delay = round === 0 ? 0 : Math.min(2000, 100 * 2 ** Math.min(round, 5));
    this.retryTimer = setTimeout(() => void this.open(), delay);
    this.retryTimer.unref();
  }
}
