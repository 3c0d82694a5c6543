// Turns every packet a server block's listeners handle into CoreDNS's coredns_dns_* metrics.
// It is a query observer, not a chain step, so answers from the server's answer cache count too.
import type { Counter, Histogram } from 'prom-client';
import type { LocalEndpoint, QueryEvent, QueryObserver } from '../../chain/plugin.js';
import type { ServerKey } from '../../chain/corefile.js';
import { serverLabel, type AppMetrics } from '../../metrics/index.js';
import { isProblem, parseQuery } from '../../dns/query.js';
import { replyRcode, typeLabel } from '../../metrics/packet.js';
import { clientFamily, doBit } from '../../chain/request.js';
import { rcodeToString } from '../../pkg/rcode.js';

/** CoreDNS's zone for queries that never reach a plugin chain (no zone, wrong class). */
const DROPPED = 'dropped';
const CLASS_IN = 1;

/** Events already counted: blocks sharing a listener each observe every packet on it. */
const counted = new WeakSet<QueryEvent>();

interface BlockView {
  readonly keys: readonly ServerKey[];
  /** bind addresses of the block; empty means every address (server label `dns://:PORT`). */
  readonly bindAddresses: () => readonly string[];
  /** Called the first time a query shows the block serving `zone` on a server label. */
  readonly onServed?: (server: string, zone: string) => void;
}

/** Label children cached per label combination: prom-client hashes labels on every call otherwise. */
class Children<C> {
  private readonly map = new Map<string, C>();
  constructor(private readonly make: (values: string[]) => C) {}
  get(values: string[]): C {
    const key = values.join('\u0000');
    let c = this.map.get(key);
    if (!c) {
      c = this.make(values);
      this.map.set(key, c);
    }
    return c;
  }
}

type CounterChild = ReturnType<Counter<string>['labels']>;
type HistogramChild = ReturnType<Histogram<string>['labels']>;

export function metricsObserver(metrics: AppMetrics, block: BlockView): QueryObserver {
  const m = metrics.m;
  const requests = new Children<CounterChild>((v) => m.requests.labels(...v));
  const duration = new Children<HistogramChild>((v) => m.requestDuration.labels(...v));
  const reqSize = new Children<HistogramChild>((v) => m.requestSize.labels(...v));
  const respSize = new Children<HistogramChild>((v) => m.responseSize.labels(...v));
  const doReqs = new Children<CounterChild>((v) => m.doRequests.labels(...v));
  const responses = new Children<CounterChild>((v) => m.responses.labels(...v));
  const served = new Set<string>();
  const view = '';

  /** True when this block serves `zone` on the port the packet came in on. */
  const owns = (zone: string, local: LocalEndpoint): boolean =>
    block.keys.some((k) => k.zone === zone && (k.port === undefined || k.port === local.port) && (k.transport ?? 'dns') === (local.transport ?? 'dns'));

  return (e) => {
    if (!e.reply || counted.has(e)) return;
    const q = parseQuery(e.msg);
    let query;
    if (isProblem(q)) {
      // Malformed packets never reach CoreDNS's server handler; other opcodes do.
      if (q.kind !== 'notimp') return;
      query = q.query;
    } else query = q;
    // BADVERS is answered before the server handler in CoreDNS: not counted.
    if (query.edns && query.edns.version > 0) return;
    const qname = query.name.toLowerCase();
    let zone = query.qclass === CLASS_IN ? e.zoneOf(qname) : undefined;
    if (zone !== undefined && !owns(zone, e.local)) return; // another block's query
    zone ??= DROPPED;
    counted.add(e);

    const binds = block.bindAddresses();
    const server = serverLabel(binds.length === 0 ? '' : e.local.address, e.local.port, e.local.transport);
    if (zone !== DROPPED && block.onServed) {
      const k = `${server} ${zone}`;
      if (!served.has(k)) {
        served.add(k);
        block.onServed(server, zone);
      }
    }
    const proto = e.protocol;
    requests.get([server, zone, view, proto, String(clientFamily(e)), typeLabel(query.qtype)]).inc();
    if (doBit(query)) doReqs.get([server, zone, view]).inc();
    duration.get([server, zone, view]).observe(Number(e.durationNs) / 1e9);
    respSize.get([server, zone, view, proto]).observe(e.reply.length);
    reqSize.get([server, zone, view, proto]).observe(e.msg.length);
    const plugin = zone === DROPPED ? '' : ((e as QueryEvent & { plugin?: string }).plugin ?? '');
    responses.get([server, zone, view, rcodeToString(replyRcode(e.reply)), plugin]).inc();
  };
}
