// The k8s_gateway plugin's query path (gateway.go and apex.go of github.com/k8s-gateway/k8s_gateway):
// a host name in one of the zones resolves to the external addresses of the Ingress, Service,
// route or DNSEndpoint that claims it; the first resource kind (in `resources` order) with a
// match answers, an exact name before a one-label wildcard.
import type { DnsRequest, DnsResponse, ListedQuestion, Next, RecordLister } from '../../chain/plugin.js';
import { Rcode, rr, type Rr } from '../../dns/records.js';
import { split255 } from '../../pkg/split255.js';
import { isSubdomain, labelsBelow, matchZone } from '../../pkg/names.js';
import { fallsThrough } from '../../pkg/fall.js';
import { formatIp, parseIp } from '../../pkg/ip.js';
import type { LbAddress } from '../../cluster/model/model.js';
import { DEFAULT_MAX_RECORDS, type Found, type HostIndex } from './hosts.js';
import { answering, answeringRequest } from '../../chain/answering.js';
import { DEFAULT_MAX_HOSTNAME_LOOKUPS, type K8sGatewayConfig } from './config.js';

/** SOA and NS records, and the apex's own addresses, always use this TTL (ttlSOA). */
const TTL_SOA = 60;
const SERIAL = 12345;

function join(...parts: string[]): string {
  return (
    parts
      .map((p) => p.replace(/\.$/, ''))
      .filter((p) => p !== '')
      .join('.') + '.'
  );
}

const stripDot = (s: string): string => (s.length > 1 ? s.replace(/\.$/, '') : s);

interface GatewayDeps {
  index(): HostIndex;
  /** Resolves load balancer host names (the plugin's net.LookupIP), through this server; `from` is the request being answered. */
  lookup(name: string, qtype: string, from?: DnsRequest): Promise<DnsResponse>;
}

export class K8sGatewayPlugin implements RecordLister {
  readonly name = 'k8s_gateway';

  constructor(
    readonly cfg: K8sGatewayConfig,
    private readonly deps: GatewayDeps,
  ) {}

  /** Aborted on close: an index that arrives after it is not swapped in. */
  readonly closing = new AbortController();

  private get maxRecords(): number {
    return this.cfg.maxRecords ?? DEFAULT_MAX_RECORDS;
  }

  close(): void {
    this.closing.abort();
  }

  /** getQueryIndexKeys: the full name and the name without the zone. */
  private keys(qname: string, zone: string): string[] {
    const zoneless = stripDot(qname.slice(0, qname.length - zone.length));
    const full = stripDot(qname);
    return zoneless.length !== 0 && zoneless !== full ? [full, zoneless] : [full];
  }

  /** getQueryIndexKeySets: exact keys, then with the first label below the zone replaced by `*`. */
  private keySets(qname: string, zone: string): string[][] {
    const zoneless = stripDot(qname.slice(0, qname.length - zone.length));
    const parts = zoneless.split('.');
    parts[0] = '*';
    const wildcard = [...parts, zone].join('.');
    return [this.keys(qname, zone), this.keys(wildcard, zone)];
  }

  private find(keys: readonly string[]): Found {
    const index = this.deps.index();
    for (const r of this.cfg.resources) {
      const f = index.lookup(r, keys);
      if (f.addrs.length > 0 || f.raws.length > 0) return f;
    }
    return { addrs: [], raws: [], capped: false };
  }

  private match(qname: string, zone: string): Found {
    for (const keys of this.keySets(qname, zone)) {
      const f = this.find(keys);
      if (f.addrs.length > 0 || f.raws.length > 0) return f;
    }
    return { addrs: [], raws: [], capped: false };
  }

  /**
   * Addresses; host names (a cloud load balancer's) are resolved through the server, each
   * distinct name once and at most `maxHostnameLookups` of them, into `out` (an address array
   * per call, never one spread into a call).
   */
  private async resolveHosts(addrs: readonly LbAddress[], out: string[] = []): Promise<string[]> {
    const resolved = new Map<string, string[]>();
    const limit = this.cfg.maxHostnameLookups ?? DEFAULT_MAX_HOSTNAME_LOOKUPS;
    for (const a of addrs) {
      if (a.ip) out.push(a.ip);
      else if (a.hostname) {
        let ips = resolved.get(a.hostname);
        if (!ips) {
          if (resolved.size >= limit) continue;
          resolved.set(a.hostname, (ips = []));
          for (const t of ['A', 'AAAA']) {
            const res = await this.deps.lookup(join(a.hostname), t, answeringRequest()).catch(() => undefined);
            for (const r of res?.answer ?? []) if (r.type === t) ips.push(String((r as { data: unknown }).data));
          }
        }
        for (const ip of ips) out.push(ip);
      }
    }
    return out;
  }

  private soa(zone: string): Rr {
    return rr(zone, 'SOA', TTL_SOA, {
      mname: join(this.cfg.apex, zone),
      rname: join('hostmaster', this.cfg.apex, zone),
      serial: SERIAL,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: TTL_SOA,
    });
  }

  /** Address records of one family, each address once, at most `maxRecords`. */
  private a(name: string, ips: readonly string[], family: 4 | 6, ttl = this.cfg.ttl): Rr[] {
    const seen = new Set<string>();
    const out: Rr[] = [];
    for (const ip of ips) {
      if (out.length >= this.maxRecords) break;
      const p = parseIp(ip);
      if (!p || p.family !== family) continue;
      const c = formatIp(p);
      if (seen.has(c)) continue;
      seen.add(c);
      out.push(rr(name, family === 4 ? 'A' : 'AAAA', ttl, c));
    }
    return out;
  }

  /**
   * SelfAddress: the apex name's (and for NS the secondary's) IPv4 addresses, looked up like any
   * host, with the SOA's TTL; `owner` names the apex's records (the query's spelling under it).
   */
  private async selfAddress(zone: string, withSecondary: boolean, owner = `${this.cfg.apex}.${zone}`): Promise<Rr[]> {
    const own = async (key: string): Promise<string[]> => {
      const ips: string[] = [];
      const index = this.deps.index();
      for (const r of this.cfg.resources) await this.resolveHosts(index.lookup(r, [key]).addrs, ips);
      return ips;
    };
    const out = this.a(owner, await own(this.cfg.apex), 4, TTL_SOA);
    if (withSecondary) for (const r of this.a(`${this.cfg.secondary}.${zone}`, await own(this.cfg.secondary), 4, TTL_SOA)) out.push(r);
    return out;
  }

  /**
   * The names this plugin answers, for `clusterdns records`: per zone its apex (SOA, NS), the
   * apex name, and every indexed host inside the zone (a Service's `name.namespace` key under
   * each zone), with the types that can hold data.
   */
  listQuestions(): ListedQuestion[] {
    const out: ListedQuestion[] = [];
    const index = this.deps.index();
    for (const zone of this.cfg.zones) {
      if (zone === '.' || zone.endsWith('.arpa.')) continue;
      out.push({ name: zone, type: 'SOA', zone }, { name: zone, type: 'NS', zone }, { name: join(this.cfg.apex, zone), type: 'A', zone });
      const names = new Set<string>();
      for (const r of this.cfg.resources) {
        for (const h of index.hosts(r)) {
          const fq = join(h);
          if (isSubdomain(fq, zone)) names.add(fq);
          else if (r === 'Service' && h.split('.').length === 2) names.add(join(h, zone));
        }
      }
      for (const name of [...names].sort()) for (const type of ['A', 'AAAA', 'TXT']) out.push({ name, type, zone });
    }
    return out;
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    const matched = matchZone(req.qname, this.cfg.zones);
    if (!matched) return next(req);
    return answering(req, () => this.answer(req, matched, next));
  }

  private async answer(req: DnsRequest, zone: string, next: Next): Promise<DnsResponse> {
    let root = false;
    for (const z of this.cfg.zones) {
      if (req.name === z) {
        root = true;
        break;
      }
      if (isSubdomain(req.qname, join(this.cfg.apex, z))) return this.serveSubApex(req, zone);
    }
    const found = this.match(req.qname, zone);
    if (found.addrs.length === 0 && found.raws.length === 0 && fallsThrough(this.cfg.fallthrough, req.qname)) return next(req);
    const ips = await this.resolveHosts(found.addrs);
    const v4 = ips.filter((ip) => parseIp(ip)?.family === 4);
    const v6 = ips.filter((ip) => parseIp(ip)?.family === 6);
    const hostnames = found.addrs.some((a) => a.hostname !== undefined);
    const res: DnsResponse = { rcode: Rcode.NOERROR, aa: true, answer: [], authority: [], additional: [], cacheable: !hostnames };
    const soa = [this.soa(zone)];
    switch (req.qtype) {
      case 'A':
      case 'AAAA': {
        const [mine, other] = req.qtype === 'A' ? [v4, v6] : [v6, v4];
        if (mine.length === 0) {
          // NXDOMAIN, except at the apex or when the other family has addresses (RFC 4074 section 3).
          if (!root && other.length === 0) res.rcode = Rcode.NXDOMAIN;
          res.authority = soa;
        } else res.answer = this.a(req.name, mine, req.qtype === 'A' ? 4 : 6);
        break;
      }
      case 'TXT':
        if (found.raws.length === 0) {
          // A name with addresses but no TXT is NXDOMAIN for TXT, as the plugin's code answers.
          if (!root) res.rcode = Rcode.NXDOMAIN;
          res.authority = soa;
        } else {
          const seen = new Set<string>();
          for (const t of found.raws) {
            if (res.answer.length >= this.maxRecords) break;
            if (seen.has(t)) continue;
            seen.add(t);
            res.answer.push(rr(req.name, 'TXT', this.cfg.ttl, split255(Buffer.from(t, 'utf8'))));
          }
        }
        break;
      case 'SOA':
        res.answer = soa;
        break;
      case 'NS':
        if (root) {
          res.answer = [rr(zone, 'NS', TTL_SOA, join(this.cfg.apex, zone))];
          if (this.cfg.secondary !== '') res.answer.push(rr(zone, 'NS', TTL_SOA, join(this.cfg.secondary, zone)));
          res.additional = await this.selfAddress(zone, true);
        } else res.authority = soa;
        break;
      default:
        res.authority = soa;
    }
    return res;
  }

  /** serveSubApex: `APEX.ZONE` answers the server's own addresses; anything else under it is NXDOMAIN. */
  private async serveSubApex(req: DnsRequest, zone: string): Promise<DnsResponse> {
    const base = labelsBelow(req.qname, zone).join('.');
    const nx: DnsResponse = { rcode: Rcode.NXDOMAIN, aa: true, answer: [], authority: [this.soa(zone)], additional: [], cacheable: true };
    if (base.split('.').length !== 2 || base !== this.cfg.apex) return nx;
    // The apex has IPv4 addresses only (SelfAddress).
    const answer = req.qtype === 'A' ? await this.selfAddress(zone, false, req.name) : [];
    return answer.length > 0 ? { rcode: Rcode.NOERROR, aa: true, answer, authority: [], additional: [], cacheable: true } : { ...nx, rcode: Rcode.NOERROR };
  }
}
