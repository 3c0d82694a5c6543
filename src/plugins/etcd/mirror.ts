// An in-memory copy of everything under the plugin's etcd path, kept current by one etcd Watch
// from a known revision, so answers never wait on etcd. A lost watch resumes, on the next
// endpoint, from the revision after the last event it delivered (watch.ts); a watch whose resume
// revision is compacted relists. While etcd is unreachable the last copy keeps serving.
//
// Change sets that `clusterdns sync` has to split over several transactions are bracketed by a
// marker key (see TXN_MARKER): while it says "writing" the mirror holds the events back and
// applies them all at once when it says "done", so queries see the old or the new data, never
// a mix.
import type { Etcd3 } from 'etcd3';
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_KEEPALIVE_MS,
  describeEtcdError,
  isBrokenCircuit,
  listPrefix,
  newClient,
  prefixEnd,
  type ClientOptions,
  type RawKv,
} from './kv.js';
import { PrefixWatch } from './watch.js';
import { SortedKeys } from './sorted-keys.js';
import type { Logger } from 'pino';
import { Gauge, Counter, type Registry } from 'prom-client';
import { AppMetrics } from '../../metrics/index.js';
import type { BlockContext } from '../../chain/registry.js';
import { parseService, type Service } from './msg.js';

/** Marker of a multi-transaction change set, under the path: `/skydns/.clusterdns/txn`. */
export const MARKER_DIR = '.clusterdns/';
export const TXN_MARKER = `${MARKER_DIR}txn`;

export interface MarkerValue {
  state: 'writing' | 'done';
  owner?: string;
  /** When the change set began (ms since the epoch), so a reader can tell an abandoned one. */
  at?: number;
}

interface MirrorOptions {
  /** etcd key prefix with leading and trailing slash, e.g. `/skydns/`. */
  prefix: string;
  endpoints: string[];
  username?: string;
  password?: string;
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** Labels the metrics (the plugin's zones joined with ','). */
  zonesLabel: string;
  log: Logger;
  /** How long a change set may be held back before what arrived is applied anyway (ms). */
  changesetTimeoutMs: number;
  /** Deadline of each etcd call, and of a watch progress request (ms). */
  callTimeoutMs?: number;
  /** Silence before a connection or the watch is checked (ms). */
  keepaliveMs?: number;
  /** Bytes a listing page aims at. */
  pageBytes?: number;
  /** Largest gRPC message taken (bytes). */
  maxReceiveBytes?: number;
  /** Lease lookups in flight at once. */
  leaseConcurrency?: number;
  /** The App's metrics the mirror reports on; without one (a mirror made alone) a registry of its own. */
  metrics?: AppMetrics;
}

export interface Entry {
  key: string;
  svc: Service;
  /** etcd lease ID ('0' for none). */
  lease: string;
  modRevision: number;
}

interface MirrorMetrics {
  revision: Gauge<'zones'>;
  lag: Gauge<'zones'>;
  connected: Gauge<'zones'>;
  keys: Gauge<'zones'>;
  badValues: Gauge<'zones'>;
  events: Counter<'zones'>;
  relists: Counter<'zones'>;
  truncated: Counter<'zones'>;
}

/** The mirrors' metrics on `registry`, made once per App (AppMetrics.group). */
function mirrorMetrics(registry: Registry): MirrorMetrics {
  const registers = [registry];
  // With --workers, the primary merges the workers' metrics by these aggregators: the revision
  // of the laggiest worker, the worst lag, connected only when every worker is.
  return {
    revision: new Gauge({
      name: 'clusterdns_etcd_revision',
      help: 'The SOA serial of the etcd zones: the highest revision at which the replica saw the path change.',
      labelNames: ['zones'],
      registers,
      aggregator: 'min',
    }),
    lag: new Gauge({
      name: 'clusterdns_etcd_lag_seconds',
      help: 'Seconds since etcd was last heard on the watch, while it is down or a progress request is unanswered (0 while connected and answering).',
      labelNames: ['zones'],
      registers,
      aggregator: 'max',
    }),
    connected: new Gauge({
      name: 'clusterdns_etcd_watch_connected',
      help: '1 from etcd confirming the watch until it fails (an error, an unanswered progress request), else 0.',
      labelNames: ['zones'],
      registers,
      aggregator: 'min',
    }),
    keys: new Gauge({ name: 'clusterdns_etcd_keys', help: 'Records held in the mirror.', labelNames: ['zones'], registers, aggregator: 'max' }),
    badValues: new Gauge({
      name: 'clusterdns_etcd_bad_values',
      help: 'Keys whose value is skipped because it is not a valid SkyDNS record.',
      labelNames: ['zones'],
      registers,
      aggregator: 'max',
    }),
    events: new Counter({ name: 'clusterdns_etcd_events_total', help: 'etcd watch events applied to the mirror.', labelNames: ['zones'], registers }),
    relists: new Counter({
      name: 'clusterdns_etcd_relists_total',
      help: 'Full reads of the etcd path (startup, after compaction).',
      labelNames: ['zones'],
      registers,
    }),
    truncated: new Counter({
      name: 'clusterdns_etcd_lookups_truncated_total',
      help: 'Lookups that matched more records than lookup_limit and used the first ones.',
      labelNames: ['zones'],
      registers,
    }),
  };
}

/** Retry delays for a failed list (ms): doubling up to the cap. */
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 2000;
/** Lease lookups in flight at once (a new replica with 20k leased keys asked for all at once). */
export const DEFAULT_LEASE_CONCURRENCY = 16;

export class EtcdMirror {
  /** Made on the first read (newClient loads the client library then). */
  private clientReady: Promise<Etcd3> | undefined;
  private client: Etcd3 | undefined;
  /** One client per endpoint for the watch, which picks its member itself (see watch.ts). */
  private readonly watchClients = new Map<string, Promise<Etcd3>>();
  private readonly entries = new Map<string, Entry>();
  /** Keys of `entries`, in etcd's order. */
  private readonly sorted = new SortedKeys();
  /** Keys whose value was refused, with the reason (logged once per value). */
  private readonly bad = new Map<string, string>();
  /** Events of a change set still being written (key -> kv, or null for a delete). */
  private pending: Map<string, RawKv | null> | undefined;
  /** When the held-back change set began (ms since the epoch). */
  private pendingSince = 0;
  private pendingRevision = 0;
  private readonly leases = new Map<string, number>();
  private readonly m: MirrorMetrics;
  private watch: PrefixWatch | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  /**
   * The SOA serial: the highest revision at which the replica saw anything under the path change
   * (keys' mod revisions, the change-set marker included, and delete events). Never lowered.
   */
  revision = 0;
  /** The revision the data reflects (the last list, or the last event applied). */
  private dataRevision = 0;
  synced = false;
  connected = false;
  private lossLogged = false;
  /** Why the last read or watch of etcd failed, in words (cleared when one succeeds). */
  lastError: string | undefined;
  /** When the mirror was last known to be current (ms since epoch). */
  private currentAt = 0;
  /** Resolves once the first list succeeded. */
  readonly firstSync: Promise<void>;
  private resolveFirst!: () => void;
  /** Called after the data changed (each server block using the mirror forgets encoded answers). */
  readonly listeners = new Set<() => void>();
  private started = false;

  constructor(private readonly opts: MirrorOptions) {
    this.m = (opts.metrics ?? new AppMetrics()).group('etcd-mirror', mirrorMetrics);
    this.firstSync = new Promise((r) => (this.resolveFirst = r));
  }

  /** Starts reading etcd; later calls (a reload that kept the mirror) do nothing. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.lagTimer = setInterval(() => {
      this.updateLag();
      this.expirePending();
    }, 1000);
    this.lagTimer.unref();
    void this.relist();
  }

  /**
   * Services whose key starts with `prefix`, in key order, at most `limit` of them (a name high
   * in a large tree would otherwise cost a scan of the whole tree per query). `truncated` says
   * there were more.
   */
  range(prefix: string, limit = Infinity): { entries: Entry[]; truncated: boolean } {
    const out: Entry[] = [];
    for (const k of this.sorted.from(prefix)) {
      if (!k.startsWith(prefix)) break;
      if (out.length >= limit) return { entries: out, truncated: true };
      out.push(this.entries.get(k)!);
    }
    return { entries: out, truncated: false };
  }

  get(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  /** Granted TTL (seconds) of a lease, when known. */
  leaseTtl(lease: string): number | undefined {
    return this.leases.get(lease);
  }

  /** Counts a lookup cut at the limit. */
  countTruncated(): void {
    this.m.truncated.inc({ zones: this.opts.zonesLabel });
  }

  private get log(): Logger {
    return this.opts.log;
  }

  private serialize(job: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(job).catch((err: unknown) => this.log.error({ err }, 'etcd mirror update failed'));
    return this.queue;
  }

  /** Reads the whole path, then watches from the revision after it. Retries until it works. */
  private async relist(attempt = 0): Promise<void> {
    if (this.closed) return;
    try {
      this.stopWatch();
      const client = await this.connect();
      if (this.closed) return;
      const prefix = this.opts.prefix;
      const listOpts = { pageBytes: this.opts.pageBytes };
      let { kvs, revision: rev } = await listPrefix(client, prefix, undefined, listOpts);
      // A change set in the middle of being written: read the state before it began.
      const marker = kvs.find((kv) => kv.key === prefix + TXN_MARKER);
      const m = marker ? parseMarker(marker.value) : undefined;
      if (m?.state === 'writing' && !(m.at !== undefined && Date.now() - m.at > this.opts.changesetTimeoutMs)) {
        // sync writes the marker in the first and the last transaction only: its revision is
        // where the change set began.
        const before = marker!.modRevision - 1;
        try {
          ({ kvs } = await listPrefix(client, prefix, before, listOpts));
          rev = before;
        } catch (err) {
          this.log.warn(
            { err: describeEtcdError(err, this.opts.endpoints) },
            'etcd: a change set is being written and the revision before it is compacted; serving what is there now',
          );
        }
      }
      await this.fetchLeases(client, kvs);
      if (this.closed) return;
      // Events still queued from a watch before this list are older than it: applyEvents drops them.
      await this.serialize(async () => this.replaceAll(kvs, rev));
      this.m.relists.inc({ zones: this.opts.zonesLabel });
      this.lastError = undefined;
      this.startWatch(rev + 1);
      if (!this.synced) {
        this.synced = true;
        this.log.info({ prefix, revision: this.revision, records: this.entries.size, skipped: this.bad.size }, 'etcd mirror synced');
        this.resolveFirst();
      }
    } catch (err) {
      if (this.closed) return;
      const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** attempt);
      // The circuit breaker's refusal says nothing new: keep the cause that opened it.
      if (!isBrokenCircuit(err) || !this.lastError) this.lastError = describeEtcdError(err, this.opts.endpoints);
      if (attempt === 0 || attempt % 10 === 0) {
        this.log.warn(
          { err: this.lastError, endpoints: this.opts.endpoints, retryMs: delay },
          this.synced ? 'cannot read etcd; still serving the last mirror' : 'cannot read etcd; not ready until the first read succeeds',
        );
      }
      this.retryTimer = setTimeout(() => void this.relist(attempt + 1), delay);
      this.retryTimer.unref();
    }
  }

  private stopWatch(): void {
    const w = this.watch;
    this.watch = undefined;
    w?.close();
  }

  private clientOptions(endpoints: string[]): ClientOptions {
    const o = this.opts;
    return {
      endpoints,
      username: o.username,
      password: o.password,
      tls: o.tls,
      callTimeoutMs: o.callTimeoutMs,
      keepaliveMs: o.keepaliveMs,
      maxReceiveBytes: o.maxReceiveBytes,
    };
  }

  private connect(): Promise<Etcd3> {
    this.clientReady ??= newClient(this.clientOptions(this.opts.endpoints)).then((c) => (this.client = c));
    return this.clientReady;
  }

  private watchClient(endpoint: string): Promise<Etcd3> {
    let c = this.watchClients.get(endpoint);
    if (!c) {
      c = newClient(this.clientOptions([endpoint]));
      this.watchClients.set(endpoint, c);
    }
    return c;
  }

  private startWatch(from: number): void {
    const client = this.client!;
    const w: PrefixWatch = new PrefixWatch({
      prefix: this.opts.prefix,
      rangeEnd: prefixEnd(this.opts.prefix),
      fromRevision: from,
      endpoints: this.opts.endpoints,
      clientFor: (e) => this.watchClient(e),
      callTimeoutMs: this.opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      keepaliveMs: this.opts.keepaliveMs ?? DEFAULT_KEEPALIVE_MS,
      log: this.log,
      onEvents: (events) => {
        if (this.watch !== w) return;
        this.currentAt = Date.now();
        void this.serialize(async () => {
          await this.fetchLeases(
            client,
            events.filter((k) => !k.del),
          );
          this.applyEvents(events);
        });
      },
      onProgress: () => {
        if (this.watch === w) this.currentAt = Date.now();
      },
      onCompacted: (compact) => {
        if (this.watch !== w) return;
        this.watch = undefined;
        w.close();
        this.log.warn(
          { resumeRevision: w.resumeRevision, compactRevision: compact, revision: this.revision },
          'etcd watch cancelled; reading the whole path again (etcd compacted past its resume revision)',
        );
        this.setConnected(false);
        void this.relist();
      },
      onState: (on, reason) => {
        if (this.watch !== w) return;
        if (on) {
          if (!this.connected && this.synced) this.log.info({ revision: this.revision, resumeRevision: w.resumeRevision }, 'etcd watch connected');
          this.lastError = undefined;
          this.lossLogged = false;
        } else {
          this.lastError = reason;
          // Once per outage, also when the watch fails before etcd first confirmed it.
          if (!this.lossLogged) {
            this.lossLogged = true;
            this.log.warn(
              { err: reason, revision: this.revision, resumeRevision: w.resumeRevision },
              'etcd watch lost; serving the mirror and resuming on the next endpoint from the last event',
            );
          }
        }
        this.setConnected(on);
      },
    });
    this.watch = w;
    w.start();
  }

  private setConnected(on: boolean): void {
    if (on) this.currentAt = Date.now();
    else if (this.connected) this.currentAt = Math.max(this.currentAt, this.watch?.heardAt ?? 0);
    this.connected = on;
    this.m.connected.set({ zones: this.opts.zonesLabel }, on ? 1 : 0);
    this.updateLag();
  }

  /**
   * 0 while the watch is connected and answering; while a progress request is unanswered (a
   * member that went silent) or the watch is down, the seconds since etcd was last heard.
   */
  private updateLag(): void {
    const healthy = this.connected && !this.watch?.probing;
    const lag = healthy || !this.synced ? 0 : (Date.now() - Math.max(this.currentAt, this.watch?.heardAt ?? 0)) / 1000;
    this.m.lag.set({ zones: this.opts.zonesLabel }, lag);
  }

  /** Learns the granted TTL of leases not seen before, a bounded number at a time; failures ignored. */
  private async fetchLeases(client: Etcd3, kvs: readonly RawKv[]): Promise<void> {
    const unknown = new Set<string>();
    for (const k of kvs) if (k.lease && k.lease !== '0' && !this.leases.has(k.lease)) unknown.add(k.lease);
    if (unknown.size === 0) return;
    const ids = unknown.values();
    const worker = async (): Promise<void> => {
      for (let next = ids.next(); !next.done && !this.closed; next = ids.next()) {
        const id = next.value;
        try {
          const r = await client.leaseClient.leaseTimeToLive({ ID: id });
          if (Number(r.grantedTTL) > 0) this.leases.set(id, Number(r.grantedTTL));
        } catch (err) {
          this.log.debug({ lease: id, err: (err as Error).message }, 'etcd: lease TTL unknown; using the record TTL');
        }
      }
    };
    const n = Math.max(1, Math.min(unknown.size, this.opts.leaseConcurrency ?? DEFAULT_LEASE_CONCURRENCY));
    const workers: Promise<void>[] = [];
    for (let i = 0; i < n; i++) workers.push(worker());
    await Promise.all(workers);
  }

  private replaceAll(kvs: readonly RawKv[], rev: number): void {
    const badBefore = new Map(this.bad);
    this.entries.clear();
    this.bad.clear();
    this.pending = undefined;
    let serial = 0;
    const keys: string[] = [];
    for (const kv of kvs) {
      serial = Math.max(serial, kv.modRevision);
      // The marker of a finished change set (one being written was read around, in relist).
      if (kv.key.startsWith(this.opts.prefix + MARKER_DIR)) continue;
      this.put(kv, badBefore);
      if (this.entries.has(kv.key)) keys.push(kv.key);
    }
    // etcd lists in key order; the index wants it without the refused keys.
    this.sorted.reset(keys);
    // Every replica that reads the same data computes the same serial (the marker, which sync
    // moves on every change set, counts), and a replica never lowers its own.
    this.revision = Math.max(this.revision, serial);
    this.dataRevision = rev;
    this.changed(rev);
  }

  /**
   * Applies watch events revision by revision (one etcd transaction is one revision). A revision
   * that sets the marker to "writing" starts holding events back, this one included; the one
   * that sets it to "done" (or deletes it) applies everything held at once. The serial moves
   * only when data is applied, so answers and serial change together.
   */
  private applyEvents(all: readonly (RawKv & { del: boolean })[]): void {
    const markerKey = this.opts.prefix + TXN_MARKER;
    // Events a list already covers (queued before a relist) are old news.
    let first = 0;
    while (first < all.length && all[first]!.modRevision <= this.dataRevision) first++;
    const events = first === 0 ? all : all.slice(first);
    let applied = false;
    for (let i = 0; i < events.length; ) {
      const rev = events[i]!.modRevision;
      let j = i;
      let state: MarkerValue['state'] | 'deleted' | undefined;
      while (j < events.length && events[j]!.modRevision === rev) {
        const ev = events[j]!;
        if (ev.key === markerKey) state = ev.del ? 'deleted' : (parseMarker(ev.value)?.state ?? 'done');
        j++;
      }
      const group = events.slice(i, j).filter((ev) => !ev.key.startsWith(this.opts.prefix + MARKER_DIR));
      i = j;
      this.dataRevision = rev;
      if (state === 'writing' || (this.pending && state === undefined)) {
        if (!this.pending) {
          this.pending = new Map();
          this.pendingSince = Date.now();
        }
        for (const ev of group) this.pending.set(ev.key, ev.del ? null : ev);
        this.pendingRevision = rev;
        continue;
      }
      if (this.pending) {
        for (const ev of group) this.pending.set(ev.key, ev.del ? null : ev);
        const size = this.applyPending();
        this.log.info({ records: size, revision: rev }, 'etcd: change set complete, applied at once');
      } else {
        for (const ev of group) this.applyOne(ev, ev.del);
      }
      this.revision = Math.max(this.revision, rev);
      applied = true;
    }
    this.m.events.inc({ zones: this.opts.zonesLabel }, events.length);
    if (applied) this.changed(this.revision);
  }

  /** Applies the held-back events; returns how many keys they touched. */
  private applyPending(): number {
    const batch = this.pending;
    this.pending = undefined;
    if (!batch) return 0;
    for (const [key, kv] of batch) this.applyOne(kv ?? { key, value: '', lease: '0', modRevision: 0 }, kv === null);
    return batch.size;
  }

  /** A change set whose writer died half way must not freeze every other writer's updates. */
  private expirePending(): void {
    if (!this.pending || Date.now() - this.pendingSince <= this.opts.changesetTimeoutMs) return;
    const size = this.applyPending();
    this.revision = Math.max(this.revision, this.pendingRevision);
    this.log.warn(
      { records: size, revision: this.revision, heldMs: Date.now() - this.pendingSince },
      'etcd: a change set was not finished in time (its writer may have died); applied what arrived. Run clusterdns sync again to complete it',
    );
    this.changed(this.revision);
  }

  private applyOne(kv: RawKv, del: boolean): void {
    const had = this.entries.has(kv.key);
    if (del) {
      this.entries.delete(kv.key);
      this.bad.delete(kv.key);
    } else {
      this.put(kv);
    }
    const has = this.entries.has(kv.key);
    if (had === has) return;
    if (has) this.sorted.insert(kv.key);
    else this.sorted.delete(kv.key);
  }

  private put(kv: RawKv, badBefore?: Map<string, string>): void {
    const svc = parseService(kv.value);
    if (typeof svc === 'string') {
      this.entries.delete(kv.key);
      const seen = (badBefore ?? this.bad).get(kv.key);
      this.bad.set(kv.key, svc);
      if (seen !== svc) this.log.warn({ key: kv.key, revision: kv.modRevision }, `etcd: skipping ${kv.key}: ${svc}`);
      return;
    }
    this.bad.delete(kv.key);
    this.entries.set(kv.key, { key: kv.key, svc, lease: kv.lease ?? '0', modRevision: kv.modRevision });
  }

  private changed(rev: number): void {
    const zones = this.opts.zonesLabel;
    this.m.revision.set({ zones }, this.revision);
    this.m.keys.set({ zones }, this.entries.size);
    this.m.badValues.set({ zones }, this.bad.size);
    this.currentAt = Date.now();
    // Leases outlive nothing here: forget those no record uses once they pile up.
    if (this.leases.size > 2 * this.entries.size + 1024) {
      const used = new Set<string>();
      for (const e of this.entries.values()) if (e.lease !== '0') used.add(e.lease);
      for (const id of this.leases.keys()) if (!used.has(id)) this.leases.delete(id);
    }
    void rev;
    for (const l of this.listeners) l();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.lagTimer) clearInterval(this.lagTimer);
    this.stopWatch();
    for (const c of this.watchClients.values())
      void c.then(
        (x) => x.close(),
        () => undefined,
      );
    // A client still being made is closed once it is there.
    if (this.client) this.client.close();
    else
      void this.clientReady?.then(
        (c) => c.close(),
        () => undefined,
      );
  }
}

function parseMarker(value: string): MarkerValue | undefined {
  try {
    const v = JSON.parse(value) as MarkerValue;
    return v && (v.state === 'writing' || v.state === 'done') ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A mirror held by the plugins that read it, and what each wants told of a change. */
class MirrorSlot {
  constructor(readonly mirror: EtcdMirror) {}
  close(): void {
    void this.mirror.close();
  }
}

/**
 * A mirror of the App's (BlockContext.shared), so a reload that keeps the same etcd and path
 * keeps serving the synced copy instead of starting empty. Each plugin acquires one and releases
 * it on close; another App reading the same etcd has its own.
 */
export function acquireMirror(shared: BlockContext['shared'], opts: MirrorOptions, onChange: () => void): { mirror: EtcdMirror; release: () => Promise<void> } {
  const id = JSON.stringify([
    opts.prefix,
    opts.endpoints,
    opts.username,
    opts.password,
    opts.tls?.ca?.toString('base64'),
    opts.tls?.cert?.toString('base64'),
    opts.tls?.key?.toString('base64'),
    opts.callTimeoutMs,
    opts.keepaliveMs,
    opts.pageBytes,
    opts.maxReceiveBytes,
    opts.leaseConcurrency,
  ]);
  const held = shared(`etcd-mirror:${id}`, () => new MirrorSlot(new EtcdMirror(opts)));
  const mirror = held.value.mirror;
  mirror.listeners.add(onChange);
  let released = false;
  return {
    mirror,
    release: async () => {
      if (released) return;
      released = true;
      mirror.listeners.delete(onChange);
      held.release();
    },
  };
}
