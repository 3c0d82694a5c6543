// One sync's change set as etcd transactions: the difference between the owned keys under the
// prefix and the desired values, split to fit etcd's limits, guarded so that two syncs at once
// never leave a mix of both behind.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import type { Logger } from 'pino';
import { keyPrefix } from '../plugins/etcd/setup.js';
import { listPrefix } from '../plugins/etcd/kv.js';
import { MARKER_DIR, TXN_MARKER, type MarkerValue } from '../plugins/etcd/mirror.js';

/**
 * The key every transaction of a change set rewrites and compares (`/skydns/.clusterdns/writer`).
 * The marker itself is written only by a change set's first and last transactions (readers take
 * its revision as where the set began), so it cannot tell a writer that another one slipped a
 * transaction in between: this key can, as its revision moves with every transaction.
 */
export const WRITER_KEY = `${MARKER_DIR}writer`;

/** Bytes etcd adds around each operation of a transaction (its framing), with room to spare. */
const OP_OVERHEAD = 16;

export interface SyncLimits {
  /** Operations per transaction: etcd's --max-txn-ops (default 128). */
  maxTxnOps: number;
  /** Bytes of keys and values per transaction, under etcd's --max-request-bytes (1.5 MiB). */
  maxTxnBytes: number;
  /** Allow a run that serves no records to delete every owned key. */
  allowEmpty?: boolean;
}

export interface SyncResult {
  puts: number;
  deletes: number;
  /** Keys another writer owns that this sync would have written. */
  conflicts: number;
  transactions: number;
  /** 'single': one transaction; 'marked': several, bracketed by the marker. */
  mode: 'none' | 'single' | 'marked';
  /** etcd's revision after the last write, or the one read when nothing needed writing. */
  revision: number;
  records: number;
}

/** Another writer's transaction came between this sync's read and one of its writes. */
export class ConcurrentWriterError extends Error {}

function ownerOf(value: string): string | undefined {
  try {
    const v = JSON.parse(value) as { owner?: unknown };
    return typeof v.owner === 'string' ? v.owner : undefined;
  } catch {
    return undefined;
  }
}

type Op = { kind: 'put'; key: string; value: string } | { kind: 'delete'; key: string };

/** etcd counts a request's bytes, not its characters: a key or value may be UTF-8. */
const opBytes = (o: Op): number => Buffer.byteLength(o.key) + (o.kind === 'put' ? Buffer.byteLength(o.value) : 0) + OP_OVERHEAD;

/**
 * Makes the owned keys under `prefix` equal `desired`. Reads everything once, writes only the
 * difference. Every transaction requires the writer key (and the marker) to be exactly as this
 * run last saw or left them, and moves the writer key: a transaction of another sync anywhere
 * between this run's read and its last write makes this run's next transaction fail, so a run
 * never writes a difference computed from a state that changed under it, and never finishes a
 * change set another run has taken over. The loser stops with ConcurrentWriterError; the winner's
 * change set, computed from a read that included whatever the loser had written, is what stays.
 */
export async function syncValues(
  client: Etcd3,
  prefixPath: string,
  owner: string,
  desired: Map<string, string>,
  limits: SyncLimits,
  log: Logger,
): Promise<SyncResult> {
  const prefix = keyPrefix(prefixPath);
  const markerKey = prefix + TXN_MARKER;
  const writerKey = prefix + WRITER_KEY;
  const { kvs, revision: readRevision } = await listPrefix(client, prefix);
  const current = new Map<string, { value: string; owned: boolean }>();
  let markerRev = 0;
  let writerRev = 0;
  for (const kv of kvs) {
    if (kv.key === markerKey) markerRev = kv.modRevision;
    if (kv.key === writerKey) writerRev = kv.modRevision;
    if (kv.key.startsWith(prefix + MARKER_DIR)) continue;
    current.set(kv.key, { value: kv.value, owned: ownerOf(kv.value) === owner });
  }
  const ops: Op[] = [];
  let conflicts = 0;
  for (const [key, value] of desired) {
    const cur = current.get(key);
    if (cur && !cur.owned) {
      conflicts++;
      if (conflicts <= 10) log.warn({ key }, `sync: ${key} belongs to another writer (owner "${ownerOf(cur.value) ?? 'none'}"); left as it is`);
      continue;
    }
    if (cur?.value === value) continue;
    ops.push({ kind: 'put', key, value });
  }
  for (const [key, cur] of current) if (cur.owned && !desired.has(key)) ops.push({ kind: 'delete', key });
  const puts = ops.filter((o) => o.kind === 'put').length;
  if (desired.size === 0 && ops.length > 0 && !limits.allowEmpty) {
    throw new Error(
      `sync: the configuration serves no records, so this would delete all ${ops.length} keys owned by "${owner}" under ${prefix}; check --conf and --manifests, or pass --allow-empty to really empty it`,
    );
  }
  const result: SyncResult = { puts, deletes: ops.length - puts, conflicts, transactions: 0, mode: 'none', revision: readRevision, records: desired.size };
  if (ops.length === 0) return result;

  const began = Date.now();
  const marker = (state: MarkerValue['state']): Op => ({ kind: 'put', key: markerKey, value: JSON.stringify({ state, owner, at: began }) });
  const writer: Op = { kind: 'put', key: writerKey, value: JSON.stringify({ owner, run: randomUUID(), host: hostname(), pid: process.pid, at: began }) };
  // Each transaction carries the writer key and may carry the marker: the budget leaves room.
  const reserved = opBytes(marker('writing')) + opBytes(writer);
  const batches: Op[][] = [];
  let batch: Op[] = [];
  let bytes = reserved;
  for (const o of ops) {
    if (batch.length > 0 && (batch.length + 2 >= limits.maxTxnOps || bytes + opBytes(o) > limits.maxTxnBytes)) {
      batches.push(batch);
      batch = [];
      bytes = reserved;
    }
    batch.push(o);
    bytes += opBytes(o);
  }
  batches.push(batch);
  result.mode = batches.length === 1 ? 'single' : 'marked';
  const clause = (o: Op): ReturnType<Etcd3['put']> | ReturnType<ReturnType<Etcd3['delete']>['key']> =>
    o.kind === 'put' ? client.put(o.key).value(o.value) : client.delete().key(o.key);
  // The marker is written by the first transaction ("writing": its revision is where the change
  // set begins, which a reader starting in the middle reads from) and by the last ("done").
  let expectMarker = markerRev;
  let expectWriter = writerRev;
  let revision = 0;
  for (let i = 0; i < batches.length; i++) {
    const first = i === 0;
    const last = i === batches.length - 1;
    const clauses = batches[i]!.map(clause);
    clauses.push(clause(writer));
    if (first || last) clauses.push(clause(marker(last ? 'done' : 'writing')));
    const res = await client
      .if(markerKey, 'Mod', '==', expectMarker)
      .and(writerKey, 'Mod', '==', expectWriter)
      .then(...clauses)
      .commit();
    if (!res.succeeded) {
      const other = await client
        .get(writerKey)
        .string()
        .catch(() => null);
      throw new ConcurrentWriterError(
        `sync: another writer changed ${prefix} while this sync ran (${writerKey} is now ${other ?? 'gone'}; this run expected revision ${expectWriter}), ` +
          `so this run stopped after ${i} of ${batches.length} transactions and left the change set to it; run sync again once it is done (sync --watch retries by itself)`,
      );
    }
    revision = Number(res.header.revision);
    expectWriter = revision;
    if (first || last) expectMarker = revision;
    result.transactions++;
  }
  result.revision = revision;
  return result;
}
