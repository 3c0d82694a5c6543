// `clusterdns records`: every record the server would serve, as a sorted zone file. Each record
// comes from asking the real query path, so the listing is what the server answers.
import dnsPacket, { type Answer } from 'dns-packet';
import { buildApp, type App } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { isRecordLister } from '../chain/plugin.js';
import { isClusterDataProvider } from '../chain/cluster-data.js';
import { rdataText } from '../dns/present.js';
import { ZoneListing, lower } from './records-list.js';
import { KubernetesPlugin } from '../plugins/kubernetes/plugin.js';
import { questions } from '../plugins/kubernetes/enumerate.js';
import { replySections, type ReplySections } from './records-reply.js';
import { DirectReader, decodedRecord, directRdata, type DirectSections } from './records-direct.js';
import type { Rr } from '../dns/records.js';
import { canonicalCompare } from '../dns/canonical.js';
import { fqdn, isReverse, isSubdomain } from '../pkg/names.js';

export interface RecordsFlags extends ClusterFlags {
  zone?: string;
  /** text: a zone file (default); json: the same records as an array of objects. */
  output?: 'text' | 'json';
  logLevel: string;
}

/** One record of `records --output json`: the zone file's columns, the data in presentation form. */
export interface RecordJson {
  name: string;
  ttl: number;
  class: string;
  type: string;
  data: string;
}

/** One question's reply: the records DirectReader vouched for, or the reply's decoded sections. */
type Reply = DirectSections | ReplySections;

/** Output is handed to the stream in pieces about this long (characters), not a write per line. */
const CHUNK_CHARS = 1 << 20;

export async function records(flags: RecordsFlags, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  const log = createLogger(flags.logLevel, 2);
  const app = await buildApp({
    conf: flags.conf,
    manifests: flags.manifests,
    port: 53,
    logger: log,
    cluster: clusterOptions(flags),
    corefileLimits: corefileLimits(flags),
    oneShot: true,
    // Every question is asked once: caching the answers would only cost memory and evictions.
    answerCacheBytes: 0,
    // records reads no pods: the serving indexes are enough.
    retainModel: false,
  });
  const only = flags.zone ? fqdn(flags.zone.toLowerCase()) : undefined;
  const byZone = await collectServed(app, only, {
    open: () => new ZoneListing(),
    add: (list, owner, rr) => list.add(owner, rr, rdataText(rr)),
    addDirect: (list, rr) => list.addDirect(rr.name, rr.type, (rr as { ttl?: number }).ttl, directRdata(rr)),
  });
  await app.close();
  if (only && !byZone.has(only))
    throw new Error(`no zone ${only} is served by a kubernetes or file plugin in this configuration; zones: ${[...byZone.keys()].join(' ') || 'none'}`);
  // Cluster zones first, reverse zones after them; each in canonical order.
  const zones = [...byZone.keys()].sort((a, b) => Number(isReverse(a)) - Number(isReverse(b)) || canonicalCompare(a, b));
  // A 100k-endpoint cluster has hundreds of thousands of records: lines are joined into large
  // chunks, and only a full stream is waited for.
  let lines: string[] = [];
  let chars = 0;
  /** Adds a line; true when the chunk is full and should be flushed. */
  const add = (line: string): boolean => {
    lines.push(line);
    chars += line.length + 1;
    return chars >= CHUNK_CHARS;
  };
  const emit = async (line: string): Promise<void> => {
    if (add(line)) await flush();
  };
  const flush = async (): Promise<void> => {
    if (lines.length === 0) return;
    // One string per chunk, its last line ended too.
    lines.push('');
    const text = lines.join('\n');
    lines = [];
    chars = 0;
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  };
  const json = flags.output === 'json';
  // JSON: one array of every zone's records, in the zone file's order, one record a line so a
  // large listing still streams and diffs line by line.
  let first = true;
  let pending: string | undefined; // the last JSON record, written with its comma once another follows
  if (json) await emit('[');
  for (const zone of zones) {
    const order = byZone.get(zone)!.order();
    if (json) {
      for (const r of order) {
        if (pending !== undefined && add(`${pending},`)) await flush();
        pending = `  ${recordJsonText(r.line(), r.rdata)}`;
      }
      continue;
    }
    if (!first) await emit('');
    first = false;
    await emit(`; zone ${zone} (${order.length} records)`);
    await emit(`$ORIGIN ${zone}`);
    for (const r of order) if (add(r.line())) await flush();
  }
  if (json) {
    if (pending !== undefined) await emit(pending);
    await emit(']');
  }
  await flush();
}

/**
 * A record as `records --output json` lists it, a RecordJson of the columns of its zone-file line:
 * the text JSON.stringify gives for that object, written field by field without building it.
 */
function recordJsonText(line: string, data: string): string {
  const [name, ttl, klass, type] = line.split('\t') as [string, string, string, string];
  const j = JSON.stringify;
  return `{"name":${j(name)},"ttl":${j(Number(ttl))},"class":${j(klass)},"type":${j(type)},"data":${j(data)}}`;
}

/**
 * Every record the kubernetes, edge (k8s_external, k8s_gateway) and file plugins of `app` serve,
 * by zone (key: owner|type|rdata), each asked of the real query path. `clusterdns sync`
 * publishes the same set.
 */
export async function servedRecords(app: App, only?: string): Promise<Map<string, Map<string, Answer>>> {
  const add = (set: Map<string, Answer>, owner: string, rr: Answer): void => {
    set.set(`${owner}|${rr.type}|${rdataText(rr)}`, rr);
  };
  return collectServed(app, only, {
    open: () => new Map<string, Answer>(),
    add,
    addDirect: (set, r) => {
      const rr = decodedRecord(r);
      add(set, rr.name.toLowerCase(), rr);
    },
  });
}

/** How long the listing holds the thread before it lets other work run (see collectServed). */
const YIELD_MS = 20;

/** Where collectServed hands the records it finds, in the order found, one `Z` per zone. */
export interface RecordSink<Z> {
  /** For every zone a question is asked in, even one without records. */
  open(zone: string): Z;
  /** A record decoded from a reply (or a zone file's), with the owner it is keyed by (lowercased; fully qualified for zone-file records). */
  add(list: Z, owner: string, rr: Answer): void;
  /** A record of a chain's response that DirectReader vouched for: what decodedRecord(rr) would be given to `add`. */
  addDirect(list: Z, rr: Rr): void;
}

/** The records servedRecords finds, handed to `sink`. */
export async function collectServed<Z>(app: App, only: string | undefined, sink: RecordSink<Z>): Promise<Map<string, Z>> {
  const byZone = new Map<string, Z>();
  const setOf = (zone: string): Z => {
    let set = byZone.get(zone);
    if (set === undefined) byZone.set(zone, (set = sink.open(zone)));
    return set;
  };
  const ask = asker(app);
  // Most answers come synchronously, so a large listing would hold the thread for seconds: the
  // page's server (clusterdns ui, serve --ui) and sync's watch share it. Every 256 questions, the
  // listing lets the event loop run once it has held it for YIELD_MS.
  let asked = 0;
  let since = performance.now();
  const breathe = async (): Promise<void> => {
    if (performance.now() - since < YIELD_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
  const takeDecoded = (set: Z, records: readonly Answer[] | undefined, zone: string): void => {
    for (const rr of records ?? []) {
      if (rr.type === 'OPT') continue;
      const owner = rr.name.toLowerCase();
      if (!inZone(owner, zone)) continue;
      sink.add(set, owner, rr);
    }
  };
  // A vouched-for record's decoded owner, lowercased and made fully qualified, is its own name
  // lowercased: no record is decoded to be tested.
  const takeDirect = (set: Z, records: readonly Rr[], zone: string): void => {
    for (let i = 0; i < records.length; i++) {
      const rr = records[i]!;
      if (isSubdomain(fqdn(lower(rr.name)), zone)) sink.addDirect(set, rr);
    }
  };
  /** The answer and additional records of one question's reply that lie in `zone`. */
  const take = (reply: Reply, zone: string): void => {
    const set = setOf(zone);
    if ('direct' in reply) {
      takeDirect(set, reply.answer, zone);
      takeDirect(set, reply.additional, zone);
    } else {
      takeDecoded(set, reply.answers, zone);
      takeDecoded(set, reply.additionals, zone);
    }
  };
  for (const [listener, chainZones] of app.listenerZones().entries()) {
    for (const chain of app.chains) {
      for (const plugin of chain.plugins) {
        if (!isClusterDataProvider(plugin)) continue;
        // ns.dns.<zone> from the Corefile's bind lines, not this machine's interfaces.
        plugin.machineIndependent = true;
        if (!plugin.zones.some((z) => chainZones.includes(z) || chainZones.some((c) => isSubdomain(z, c)))) continue;
        // The kubernetes plugin's questions as they are made (its clusterQuestions is the same
        // sequence in one array): a large cluster's hundreds of thousands are not all held.
        const listed = plugin instanceof KubernetesPlugin ? questions(plugin.cfg, plugin.currentStore) : plugin.clusterQuestions();
        for (const { name, type, zone } of listed) {
          if ((++asked & 255) === 0) await breathe();
          if (only && zone !== only) continue;
          const pending = ask(name, type, listener);
          take(pending instanceof Promise ? await pending : pending, zone);
        }
      }
    }
  }
  // Edge zones (k8s_external, k8s_gateway): the names those plugins list, asked through the server.
  for (const [listener] of app.listenerZones().entries()) {
    for (const plugin of app.chains.flatMap((c) => c.plugins)) {
      if (!isRecordLister(plugin) || !plugin.listQuestions) continue;
      for (const q of plugin.listQuestions()) {
        if ((++asked & 255) === 0) await breathe();
        if (only && q.zone !== only) continue;
        const pending = ask(q.name, q.type, listener);
        take(pending instanceof Promise ? await pending : pending, q.zone);
      }
    }
  }
  // Zone-file zones hold their records directly.
  for (const plugin of app.chains.flatMap((c) => c.plugins)) {
    if (!isRecordLister(plugin) || !plugin.listRecords) continue;
    for (const { zone, rr } of plugin.listRecords()) {
      if (only && zone !== only) continue;
      sink.add(setOf(zone), fqdn(rr.name.toLowerCase()), rr);
    }
  }
  return byZone;
}

/** isSubdomain(fqdn(owner), zone), without making the fully qualified name of every owner. */
function inZone(owner: string, zone: string): boolean {
  const n = owner.length;
  if (n === 0 || owner.charCodeAt(n - 1) === 46 || zone === '.' || zone.length < 2 || zone.charCodeAt(zone.length - 1) !== 46)
    return isSubdomain(fqdn(owner), zone);
  // owner + '.' ends with zone: owner ends with zone but its dot, at a label boundary.
  const body = zone.length - 1;
  if (n < body) return false;
  for (let i = 0; i < body; i++) if (owner.charCodeAt(n - body + i) !== zone.charCodeAt(i)) return false;
  return n === body || owner.charCodeAt(n - body - 1) === 46;
}

/**
 * Asks `app` one question through the real query path, as App.query does (same message, TCP so
 * nothing is truncated), with the question written and the reply read here: dns-packet's general
 * encoder and decoder cost more than the answer itself.
 */
async function askWire(app: App, name: string, type: string, listener: number): Promise<ReplySections> {
  const reply = await app.queryWire(queryMessage(name, type), { listener, protocol: 'tcp' });
  if (!reply) throw new Error(`no reply for ${name} ${type}`);
  return replySections(reply);
}

/**
 * Answers questions for `app`: from the chain's response where DirectReader vouches for it
 * (synchronously when the chain answers so), else through the wire as askWire does.
 */
function asker(app: App): (name: string, type: string, listener: number) => Reply | Promise<Reply> {
  const direct = DirectReader.of(app);
  return (name, type, listener) => {
    const got = direct.sections(name, type, listener);
    if (got instanceof Promise) return got.then((r): Reply | Promise<Reply> => r ?? askWire(app, name, type, listener));
    return got ?? askWire(app, name, type, listener);
  };
}

// ASCII without line breaks: dns-packet writes such a name's labels byte for byte, after
// dropping one leading and one trailing dot.
const PLAIN_QNAME = /^[\x00-\x09\x0b\x0c\x0e-\x7f]+$/;
/** Per type: App.query's message for the root name; the question name goes at byte 12. */
const templates = new Map<string, Buffer>();

/** The bytes dnsPacket.encode gives for App.query's message asking `name` `type`. */
export function queryMessage(name: string, type: string): Buffer {
  const message = { id: 4242, type: 'query' as const, flags: dnsPacket.RECURSION_DESIRED, additionals: [] };
  if (!PLAIN_QNAME.test(name)) return dnsPacket.encode({ ...message, questions: [{ name, type: type as 'A', class: 'IN' }] });
  let template = templates.get(type);
  if (!template) templates.set(type, (template = dnsPacket.encode({ ...message, questions: [{ name: '.', type: type as 'A', class: 'IN' }] })));
  const start = name.charCodeAt(0) === 46 ? 1 : 0;
  const end = name.length > start && name.charCodeAt(name.length - 1) === 46 ? name.length - 1 : name.length;
  const bare = name.slice(start, end);
  const nameBytes = bare.length === 0 ? 1 : bare.length + 2;
  const out = Buffer.allocUnsafe(template.length - 1 + nameBytes);
  template.copy(out, 0, 0, 12);
  // Each label's length byte, then its bytes; a length is written when its label ends.
  let lengthAt = 12;
  for (let i = 0; i < bare.length; i++) {
    const c = bare.charCodeAt(i);
    if (c === 46) {
      out[lengthAt] = i + 12 - lengthAt;
      lengthAt = i + 13;
    } else out[i + 13] = c;
  }
  let offset = 12;
  if (bare.length > 0) {
    out[lengthAt] = bare.length + 12 - lengthAt;
    offset = 13 + bare.length;
  }
  out[offset++] = 0;
  template.copy(out, offset, 13);
  return out;
}
