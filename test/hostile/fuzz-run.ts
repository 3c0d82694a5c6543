// The fuzz suite's batch runner, shared by every fuzz target (fuzz.test.ts: the kubernetes
// plugin, file zones and the answer path; fuzz-edge.test.ts: etcd, k8s_gateway, k8s_external and
// `--workers`). A batch is sent over UDP or TCP; after it the target must be alive, a known name
// must still answer, and the process's RSS and open descriptors must stay within a margin.
import { createSocket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { pace, quietFor, waitUntil } from '../helpers/wait.js';
import { buildQuery, frame, parseHeader, rawRecords, TcpConn, type Target } from '../server/raw.js';
import { FuzzGen, type FuzzCase } from './fuzz.js';

export const fuzzSeconds = Number(process.env.FUZZ_SECONDS ?? 0);
export const timed = fuzzSeconds > 0;
/** Messages per batch. */
export const BATCH = 250;
const RSS_MARGIN_BYTES = 128 * 1024 * 1024;
const FD_MARGIN = 32;

export interface FuzzTarget {
  target: Target;
  /** The process whose RSS and descriptors are watched (undefined: not watched, e.g. a primary of workers). */
  pid?: number;
  alive(): boolean;
  /** Why it died (its stderr). */
  obituary(): string;
  /** Throws unless a known name answers correctly over UDP and TCP. */
  stillServing(): Promise<void>;
  /** Names the target holds, for the generator's valid queries. */
  names: readonly string[];
  /** A name (dotted, with the root dot) whose SERVFAIL is expected by the target's design. */
  servfailAllowed?(name: string): boolean;
  /** A query name whose reply proves the batch was read; must answer NOERROR. */
  marker: string;
}

export function processStats(pid: number): { rss: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rss: kb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** The question name of a reply (the question is never compressed), dotted, or '?' when cut short. */
export function questionName(r: Buffer): string {
  const labels: string[] = [];
  for (let off = 12; off < r.length; ) {
    const len = r[off]!;
    if (len === 0) return labels.join('.') + '.';
    if (len > 63 || off + 1 + len > r.length) return '?';
    labels.push(r.toString('latin1', off + 1, off + 1 + len));
    off += len + 1;
  }
  return '?';
}

/** The question of a reply as `name type class` (numbers), for failure messages. */
function questionDetail(r: Buffer): string {
  const name = questionName(r);
  if (name === '?') return name;
  let off = 12;
  while (off < r.length && r[off] !== 0) off += r[off]! + 1;
  return off + 5 <= r.length ? `${name} type ${r.readUInt16BE(off + 1)} class ${r.readUInt16BE(off + 3)}` : name;
}

export function expectWellFormed(reply: Buffer, label: string): void {
  expect(reply.length, `${label}: reply shorter than a header`).toBeGreaterThanOrEqual(12);
  expect(parseHeader(reply).qr, `${label}: reply without QR`).toBe(true);
  expect(() => rawRecords(reply), `${label}: ${reply.toString('hex')}`).not.toThrow();
}

/** Checks after a batch: alive, still serving, RSS and descriptors within a margin of where they were when it was made. */
export class Checkpoint {
  private readonly baseline?: { rss: number; fds: number };

  constructor(private readonly t: FuzzTarget) {
    if (t.pid !== undefined) this.baseline = processStats(t.pid);
  }

  async check(label: string): Promise<void> {
    expect(this.t.alive(), `server died after ${label}: ${this.t.obituary()}`).toBe(true);
    await this.t.stillServing();
    if (this.t.pid === undefined || !this.baseline) return;
    const now = processStats(this.t.pid);
    const grew = (now.rss - this.baseline.rss) / 2 ** 20;
    expect(now.rss - this.baseline.rss, `RSS grew by ${grew.toFixed(1)} MiB after ${label}`).toBeLessThan(RSS_MARGIN_BYTES);
    expect(now.fds - this.baseline.fds, `open fds grew from ${this.baseline.fds} to ${now.fds} after ${label}`).toBeLessThan(FD_MARGIN);
  }
}

/**
 * Sends one batch over UDP: queries from one socket, QR=1 messages from another that must never
 * get a datagram back. Resolves with the replies to the queries.
 */
export async function udpBatch(t: FuzzTarget, cases: FuzzCase[]): Promise<{ replies: Buffer[]; answeredResponses: number }> {
  const queries = createSocket('udp4');
  const responses = createSocket('udp4');
  const replies: Buffer[] = [];
  let answeredResponses = 0;
  // A known query sent last from each socket: the server answers a socket's datagrams as they
  // come, so its reply says the synchronous answers are all out; a short tail takes the rest.
  const marker = buildQuery({ id: 0xfe11, name: t.marker, type: 1 });
  const isMarker = (m: Buffer): boolean =>
    m.length >= marker.length && m.readUInt16BE(0) === 0xfe11 && m.subarray(12, marker.length).equals(marker.subarray(12));
  let markers = 0;
  queries.on('message', (m) => (isMarker(m) ? markers++ : replies.push(m)));
  responses.on('message', (m) => (isMarker(m) ? markers++ : answeredResponses++));
  queries.on('error', () => undefined);
  responses.on('error', () => undefined);
  try {
    let n = 0;
    for (const c of cases) {
      const sock = c.isResponse ? responses : queries;
      await new Promise<void>((resolve) => sock.send(c.msg, t.target.port, t.target.host, () => resolve()));
      if (++n % 25 === 0) await pace(2);
    }
    for (const sock of [queries, responses]) await new Promise<void>((resolve) => sock.send(marker, t.target.port, t.target.host, () => resolve()));
    // A lost marker (a full socket buffer) only costs the wait: the checks below still run.
    await waitUntil('the marker replies', () => markers === 2, 1000, 5).catch(() => undefined);
    await quietFor(50, 'the tail: answers made asynchronously, behind the markers');
  } finally {
    queries.close();
    responses.close();
  }
  return { replies, answeredResponses };
}

/** Sends one batch over a few TCP connections, some frames lying about their length. */
export async function tcpBatch(t: FuzzTarget, cases: FuzzCase[]): Promise<Buffer[]> {
  const replies: Buffer[] = [];
  const perConn = 50;
  for (let i = 0; i < cases.length; i += perConn) {
    const conn = await TcpConn.open(t.target);
    try {
      const chunk = cases.slice(i, i + perConn).filter((c) => !c.isResponse);
      const wire = Buffer.concat(chunk.map((c) => frame(c.msg)));
      // Split the stream at an arbitrary byte so frames straddle writes.
      const cut = Math.floor(wire.length / 2);
      await conn.write(wire.subarray(0, cut)).catch(() => undefined);
      await conn.write(wire.subarray(cut)).catch(() => undefined);
      // Until the server has been quiet for 300 ms, bounded at 3 s per connection.
      replies.push(...(await conn.readUntilQuiet(300, 3000)));
    } finally {
      conn.destroy();
    }
  }
  return replies;
}

export interface UdpSummary {
  sent: number;
  rcodes: Map<number, number>;
  withAnswers: number;
}

/**
 * Fuzzes over UDP for `batches` batches (or, under `npm run fuzz`, for `seconds`): every reply well
 * formed and within 1232 bytes, no reply to a QR=1 message, no SERVFAIL the target does not
 * allow, and the checkpoint after every batch.
 */
export async function fuzzUdp(t: FuzzTarget, checkpoint: Checkpoint, seedBase: number, batches: number, seconds: number): Promise<UdpSummary> {
  const deadline = Date.now() + seconds * 1000;
  let sent = 0;
  const rcodes = new Map<number, number>();
  let withAnswers = 0;
  // SERVFAILs the target does not make on purpose: question names, and name type class for the message.
  const unexpected = new Set<string>();
  const unexpectedDetail = new Set<string>();
  for (let batch = 0; timed ? Date.now() < deadline : batch < batches; batch++) {
    const seed = seedBase + batch;
    const gen = new FuzzGen(seed, t.names);
    const cases = Array.from({ length: BATCH }, () => gen.next());
    const { replies, answeredResponses } = await udpBatch(t, cases);
    sent += cases.length;
    expect(answeredResponses, `seed ${seed}: a QR=1 message got a reply`).toBe(0);
    for (const r of replies) {
      expectWellFormed(r, `seed ${seed}`);
      expect(r.length, `seed ${seed}: UDP reply over 1232 bytes`).toBeLessThanOrEqual(1232);
      const h = parseHeader(r);
      rcodes.set(h.rcode, (rcodes.get(h.rcode) ?? 0) + 1);
      if (h.ancount > 0) withAnswers++;
      if (h.rcode === 2 && !t.servfailAllowed?.(questionName(r))) {
        unexpected.add(questionName(r));
        unexpectedDetail.add(questionDetail(r));
      }
    }
    await checkpoint.check(`UDP batch seed ${seed}`);
  }
  expect(sent).toBeGreaterThanOrEqual(BATCH);
  expect([...unexpected].slice(0, 20), `SERVFAIL the target does not make on purpose: ${[...unexpectedDetail].slice(0, 10).join(', ')}`).toEqual([]);
  return { sent, rcodes, withAnswers };
}

/** Fuzzes over TCP for `batches` batches (or `seconds`): every reply well formed, the checkpoint after each. */
export async function fuzzTcp(t: FuzzTarget, checkpoint: Checkpoint, seedBase: number, batches: number, seconds: number): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (let batch = 0; timed ? Date.now() < deadline : batch < batches; batch++) {
    const seed = seedBase + batch;
    const gen = new FuzzGen(seed, t.names);
    const cases = Array.from({ length: BATCH }, () => gen.next());
    const replies = await tcpBatch(t, cases);
    for (const r of replies) expectWellFormed(r, `seed ${seed}`);
    await checkpoint.check(`TCP batch seed ${seed}`);
  }
}
