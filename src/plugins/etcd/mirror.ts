// An in-memory copy of everything under the plugin's etcd path, kept current by one etcd Watch
// from a known revision, so answers never wait on etcd. A lost watch resumes from the last
// revision it saw (the etcd3 client does this); a watch cancelled by compaction relists. While
// etcd is unreachable the last copy keeps serving.
//
// Change sets that `clusterdns sync` has to split over several transactions are bracketed by a
// marker key (see TXN_MARKER): while it says "writing" the mirror holds the events back and
// applies them all at once when it says "done", so queries see the old or the new data, never
// a mix.
import type { Etcd3 } from 'etcd3';
import { listPrefix, newClient, type RawKv } from './kv.js';
import type { Logger } from 'pino';
import { Gauge, Counter } from 'prom-client';
import { registry } from '../../metrics/index.js';
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

let shared: MirrorMetrics | undefined;
function mirrorMetrics(): MirrorMetrics {
  if (shared) return shared;
  const registers = [registry()];
  // With --workers, the primary merges the workers' metrics by these aggregators: the revision
  // of the laggiest worker, the worst lag, connected only when every worker is.
  shared = {
    revision: new Gauge({ name: 'clusterdns_etcd_revision', help: 'etcd revision the mirror reflects (the SOA serial of the etcd zones).', labelNames: ['zones'], registers, aggregator: 'min' }),
    lag: new Gauge({
      name: 'clusterdns_etcd_lag_seconds',
      help: 'Seconds since the mirror was last known to be current with etcd (0 while the watch is connected).',
      labelNames: ['zones'],
      registers,
      aggregator: 'max',
    }),
    connected: new Gauge({ name: 'clusterdns_etcd_watch_connected', help: '1 while the etcd watch is connected, else 0.', labelNames: ['zones'], registers, aggregator: 'min' }),
    keys: new Gauge({ name: 'clusterdns_etcd_keys', help: 'Records held in the mirror.', labelNames: ['zones'], registers, aggregator: 'max' }),
    badValues: new Gauge({ name: 'clusterdns_etcd_bad_values', help: 'Keys whose value is skipped because it is not a valid SkyDNS record.', labelNames: ['zones'], registers, aggregator: 'max' }),
    events: new Counter({ name: 'clusterdns_etcd_events_total', help: 'etcd watch events applied to the mirror.', labelNames: ['zones'], registers }),
    relists: new Counter({ name: 'clusterdns_etcd_relists_total', help: 'Full reads of the etcd path (startup, after compaction).', labelNames: ['zones'], registers }),
    truncated: new Counter({ name: 'clusterdns_etcd_lookups_truncated_total', help: 'Lookups that matched more records than lookup_limit and used the first ones.', labelNames: ['zones'], registers }),
  };
  return shared;
}

/** Events of this size or more rebuild the sorted key index instead of splicing it. */
const REBUILD_AT = 256;
/** Retry delays for a failed list (ms): doubling up to the cap. */
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 2000;

export class EtcdMirror {
  /** Made on the first read (newClient loads the client library then). */
  private clientReady: Promise<Etcd3> | undefined;
  private client: Etcd3 | undefined;
  private readonly entries = new Map<string, Entry>();
  /** Keys of `entries`, sorted as etcd sorts them (byte order; the same for ASCII keys). */
  private sorted: string[] = [];
  /** Keys whose value was refused, with the reason (logged once per value). */
  private readonly bad = new Map<string, string>();
  /** Events of a change set still being written (key -> kv, or null for a delete). */
  private pending: Map<string, RawKv | null> | undefined;
  /** When the held-back change set began (ms since the epoch). */
  private pendingSince = 0;
  private pendingRevision = 0;
  private readonly leases = new Map<string, number>();
  private readonly m = mirrorMetrics();
  private watcher: { cancel(): Promise<void> } | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  /** Highest revision applied: the SOA serial. 0 before the first sync. */
  revision = 0;
  synced = false;
  connected = false;
  /** When the mirror was last known to be current (ms since epoch). */
  private currentAt = 0;
  /** Resolves once the first list succeeded. */
  readonly firstSync: Promise<void>;
  private resolveFirst!: () => void;
  /** Called after the data changed (each server block using the mirror forgets encoded answers). */
  readonly listeners = new Set<() => void>();
  private started = false;

  constructor(private readonly opts: MirrorOptions) {
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
    for (let i = lowerBound(this.sorted, prefix); i < this.sorted.length; i++) {
      const k = this.sorted[i]!;
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
      await this.stopWatch();
      const client = await this.connect();
      if (this.closed) return;
      const prefix = this.opts.prefix;
      let { kvs, revision: rev } = await listPrefix(client, prefix);
      // A change set in the middle of being written: read the state before it began.
      const marker = kvs.find((kv) => kv.key === prefix + TXN_MARKER);
      const m = marker ? parseMarker(marker.value) : undefined;
      if (m?.state === 'writing' && !(m.at !== undefined && Date.now() - m.at > this.opts.changesetTimeoutMs)) {
        // sync writes the marker in the first and the last transaction only: its revision is
        // where the change set began.
        const before = marker!.modRevision - 1;
        try {
          ({ kvs } = await listPrefix(client, prefix, before));
          rev = before;
        } catch (err) {
          this.log.warn({ err: (err as Error).message }, 'etcd: a change set is being written and the revision before it is compacted; serving what is there now');
        }
      }
      await this.fetchLeases(client, kvs);
      if (this.closed) return;
      this.replaceAll(kvs, rev);
      this.m.relists.inc({ zones: this.opts.zonesLabel });
      this.startWatch(client, rev + 1);
      if (!this.synced) {
        this.synced = true;
        this.log.info({ prefix, revision: this.revision, records: this.entries.size, skipped: this.bad.size }, 'etcd mirror synced');
        this.resolveFirst();
      }
    } catch (err) {
      if (this.closed) return;
      const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** attempt);
      const msg = (err as Error).message;
      if (attempt === 0 || attempt % 10 === 0) {
        this.log.warn({ err: msg, endpoints: this.opts.endpoints, retryMs: delay }, this.synced ? 'cannot read etcd; still serving the last mirror' : 'cannot read etcd; not ready until the first read succeeds');
      }
      this.retryTimer = setTimeout(() => void this.relist(attempt + 1), delay);
      this.retryTimer.unref();
    }
  }

  /** Cancels the watch, waiting at most a second for etcd to confirm. */
  private async stopWatch(): Promise<void> {
    const w = this.watcher;
    this.watcher = undefined;
    if (!w) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([w.cancel().catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  }

  private connect(): Promise<Etcd3> {
    this.clientReady ??= newClient(this.opts).then((c) => (this.client = c));
    return this.clientReady;
  }

  private startWatch(client: Etcd3, from: number): void {
    const w = client.watch().prefix(this.opts.prefix).startRevision(String(from)).watcher();
    this.watcher = w;
    this.setConnected(true);
    w.on('connected', () => {
      if (!this.connected) this.log.info({ revision: this.revision }, 'etcd watch connected again');
      this.setConnected(true);
    });
    w.on('disconnected', (err: Error) => {
      if (this.connected) this.log.warn({ err: err?.message, revision: this.revision }, 'etcd watch lost; serving the mirror and resuming from the last revision');
      this.setConnected(false);
    });
    w.on('data', (res) => {
      const kvs: (RawKv & { del: boolean })[] = res.events.map((ev) => ({
        key: ev.kv.key.toString(),
        value: ev.kv.value.toString(),
        lease: ev.kv.lease,
        modRevision: Number(ev.kv.mod_revision),
        del: ev.type === 'Delete',
      }));
      this.currentAt = Date.now();
      if (kvs.length === 0) return;
      void this.serialize(async () => {
        await this.fetchLeases(client, kvs.filter((k) => !k.del));
        this.applyEvents(kvs);
      });
    });
    w.on('error', (err: Error) => {
      // The watch was cancelled (compacted past our revision, or the server refused it). etcd
      // has already dropped it: cancelling it again would wait for an end that never comes.
      if (this.watcher !== w) return;
      this.watcher = undefined;
      this.log.warn({ err: err.message, revision: this.revision }, 'etcd watch cancelled; reading the whole path again');
      this.setConnected(false);
      void this.serialize(() => this.relist());
    });
  }

  private setConnected(on: boolean): void {
    if (on) this.currentAt = Date.now();
    else if (this.connected) this.currentAt = Date.now();
    this.connected = on;
    this.m.connected.set({ zones: this.opts.zonesLabel }, on ? 1 : 0);
    this.updateLag();
  }

  private updateLag(): void {
    const lag = this.connected || !this.synced ? 0 : (Date.now() - this.currentAt) / 1000;
    this.m.lag.set({ zones: this.opts.zonesLabel }, lag);
  }

  /** Learns the granted TTL of leases not seen before (one request per lease, failures ignored). */
  private async fetchLeases(client: Etcd3, kvs: readonly RawKv[]): Promise<void> {
    const unknown = [...new Set(kvs.map((k) => k.lease).filter((l) => l && l !== '0' && !this.leases.has(l)))];
    await Promise.all(
      unknown.map(async (id) => {
        try {
          const r = await client.leaseClient.leaseTimeToLive({ ID: id });
          if (Number(r.grantedTTL) > 0) this.leases.set(id, Number(r.grantedTTL));
        } catch (err) {
          this.log.debug({ lease: id, err: (err as Error).message }, 'etcd: lease TTL unknown; using the record TTL');
        }
      }),
    );
  }

  private replaceAll(kvs: readonly RawKv[], rev: number): void {
    const before = new Map<string, number>();
    for (const [k, e] of this.entries) before.set(k, e.modRevision);
    this.entries.clear();
    const badBefore = new Map(this.bad);
    this.bad.clear();
    this.pending = undefined;
    let serial = 0;
    let changed = false;
    for (const kv of kvs) {
      serial = Math.max(serial, kv.modRevision);
      // The marker of a finished change set (one being written was read around, in relist).
      if (kv.key.startsWith(this.opts.prefix + MARKER_DIR)) continue;
      this.put(kv, badBefore);
      if (this.entries.has(kv.key) && before.get(kv.key) !== kv.modRevision) changed = true;
    }
    if (this.entries.size !== before.size) changed = true;
    this.sorted = [...this.entries.keys()].sort(byteOrder);
    // The serial is the last change the mirror holds, so replicas that read the same data agree.
    // Deletions leave no revision behind: when a re-read finds other data under a serial no
    // higher than before (keys deleted while the watch was lost), the read's revision moves it.
    this.revision = changed && this.synced && serial <= this.revision ? rev : Math.max(this.revision, serial);
    this.changed(rev);
  }

  /**
   * Applies watch events revision by revision (one etcd transaction is one revision). A revision
   * that sets the marker to "writing" starts holding events back, this one included; the one
   * that sets it to "done" (or deletes it) applies everything held at once. The serial moves
   * only when data is applied, so answers and serial change together.
   */
  private applyEvents(events: readonly (RawKv & { del: boolean })[]): void {
    const markerKey = this.opts.prefix + TXN_MARKER;
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
        for (const ev of group) this.applyOne(ev, ev.del, group.length >= REBUILD_AT);
        if (group.length >= REBUILD_AT) this.sorted = [...this.entries.keys()].sort(byteOrder);
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
    const rebuild = batch.size >= REBUILD_AT;
    for (const [key, kv] of batch) this.applyOne(kv ?? { key, value: '', lease: '0', modRevision: 0 }, kv === null, rebuild);
    if (rebuild) this.sorted = [...this.entries.keys()].sort(byteOrder);
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

  private applyOne(kv: RawKv, del: boolean, deferIndex = false): void {
    const had = this.entries.has(kv.key);
    if (del) {
      this.entries.delete(kv.key);
      this.bad.delete(kv.key);
    } else {
      this.put(kv);
    }
    if (deferIndex) return;
    const has = this.entries.has(kv.key);
    if (had === has) return;
    const i = lowerBound(this.sorted, kv.key);
    if (has) this.sorted.splice(i, 0, kv.key);
    else if (this.sorted[i] === kv.key) this.sorted.splice(i, 1);
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
    await this.stopWatch();
    // A client still being made is closed once it is there.
    if (this.client) this.client.close();
    else void this.clientReady?.then((c) => c.close(), () => undefined);
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

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function lowerBound(arr: readonly string[], x: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Mirrors shared by configuration, so a reload that keeps the same etcd and path keeps serving
 * the synced copy instead of starting empty. Each plugin acquires one and releases it on close.
 */
const mirrors = new Map<string, { mirror: EtcdMirror; refs: number }>();

export function acquireMirror(opts: MirrorOptions, onChange: () => void): { mirror: EtcdMirror; release: () => Promise<void> } {
  const id = JSON.stringify([opts.prefix, opts.endpoints, opts.username, opts.password, opts.tls?.ca?.toString('base64'), opts.tls?.cert?.toString('base64'), opts.tls?.key?.toString('base64')]);
  let slot = mirrors.get(id);
  if (!slot) {
    slot = { mirror: new EtcdMirror(opts), refs: 0 };
    mirrors.set(id, slot);
  }
  slot.refs++;
  slot.mirror.listeners.add(onChange);
  const s = slot;
  let released = false;
  return {
    mirror: s.mirror,
    release: async () => {
      if (released) return;
      released = true;
      s.mirror.listeners.delete(onChange);
      if (--s.refs > 0) return;
      mirrors.delete(id);
      await s.mirror.close();
    },
  };
}
