// One loaded zone: records indexed by owner, the set of existing names (empty non-terminals
// included), and the RFC 1034 4.3.2 lookup with RFC 4592 wildcards and RFC 6672 DNAME, shaped
// after CoreDNS's plugin/file (lookup.go) so answers match it section by section:
//  - positive answers carry the apex NS RRset in the authority section (lookup.go returns
//    z.ns() with every Success); NXDOMAIN and NODATA carry the SOA with the TTL RFC 2308
//    section 3 asks for, min(SOA TTL, SOA MINIMUM), so a resolver caches the denial for the
//    zone's negative TTL (CoreDNS's z.soa() sends the record's own TTL: a known difference);
//  - referrals: NS of the cut in authority, glue (A/AAAA of in-bailiwick NS targets) in
//    additional, AA clear;
//  - CNAME chains are followed inside the zone (at most 8 links, as CoreDNS's maxChain) and stop
//    at a target outside it or missing from it, keeping NOERROR;
//  - a wildcard answers only below its closest encloser, and an empty non-terminal between it
//    and the query name blocks it (CoreDNS's TestLookupWildcardRespectsCloserEmptyNonTerminal).
import { rr, ttlOf, withTtl, type Rr } from '../../dns/records.js';
import { isSubdomain } from '../../pkg/names.js';
import { ZoneFileError, type ZoneRecord } from '../../dns/zonefile.js';
import { pushAll } from '../../pkg/arrays.js';

/** Index of the first unescaped dot of a presentation name, or -1. */
function firstDot(name: string): number {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 92 /* \ */) {
      i++;
      continue;
    }
    if (c === 46) return i;
  }
  return -1;
}

/** The parent of a fully qualified name ('a.b.' -> 'b.', 'a.' -> '.'). */
function parentName(name: string): string {
  if (name === '.') return '.';
  const i = firstDot(name);
  return i < 0 || i === name.length - 1 ? '.' : name.slice(i + 1);
}

function childOf(label: string, parent: string): string {
  return parent === '.' ? `${label}.` : `${label}.${parent}`;
}

/** RFC 6672 substitution: qname below owner rewritten below target; undefined when too long. */
function substitute(qname: string, owner: string, target: string): string | undefined {
  const prefix = owner === '.' ? qname.slice(0, -1) : qname.slice(0, qname.length - owner.length - 1);
  const out = target === '.' ? `${prefix}.` : `${prefix}.${target}`;
  // Presentation length is an upper bound of the wire length; check the wire form exactly.
  let wire = 1;
  let label = 0;
  for (let i = 0; i < out.length; i++) {
    const c = out[i]!;
    if (c === '\\') {
      i += /\d/.test(out[i + 1] ?? '') ? 3 : 1;
      label++;
    } else if (c === '.') {
      wire += label + 1;
      label = 0;
    } else label++;
  }
  return wire > 255 ? undefined : out;
}

type LookupKind = 'answer' | 'nodata' | 'nxdomain' | 'referral' | 'yxdomain';

export interface LookupResult {
  kind: LookupKind;
  answer: Rr[];
  authority: Rr[];
  additional: Rr[];
}

/** How many CNAME links a lookup follows inside the zone (CoreDNS's maxChain). */
const MAX_CHAIN = 8;

type Node = Map<string, Rr[]>;

export class Zone {
  readonly origin: string;
  readonly soa: Rr;
  /** The SOA as negative answers carry it: TTL min(SOA TTL, MINIMUM) (RFC 2308 section 3). */
  private readonly negativeSoa: Rr;
  readonly ns: Rr[];
  /** Every record, in file order (records(), and zone transfers). */
  readonly records: Rr[];
  private readonly nodes = new Map<string, Node>();
  /** Names that exist: owners and every name between an owner and the origin (RFC 4592 2.2.2). */
  private readonly names = new Set<string>();

  /**
   * Builds the index and checks what a zone must satisfy, each error at the record's file and
   * line: owners inside the origin, one SOA at the apex, CNAME alone at its name (RFC 1034
   * 3.6.2), one DNAME per name (RFC 6672 2.4), no CNAME beside a DNAME.
   */
  constructor(origin: string, recs: readonly ZoneRecord[], file: string) {
    this.origin = origin;
    const records: Rr[] = [];
    const seen = new Set<string>();
    const firstLine = new Map<string, ZoneRecord>();
    let soa: ZoneRecord | undefined;
    for (const r of recs) {
      const fail = (reason: string): never => {
        throw new ZoneFileError(r.file, r.line, reason);
      };
      const owner = r.rr.name;
      if (!isSubdomain(owner, origin)) fail(`${owner} is outside the zone ${origin}; write it relative, or fix $ORIGIN`);
      if (r.rr.type === 'SOA') {
        if (owner !== origin) fail(`SOA record at ${owner}, but the zone apex is ${origin}`);
        if (soa) fail(`second SOA record (the first is at ${soa.file}:${soa.line}); a zone has exactly one`);
        soa = r;
      }
      // Identical records are one record (RFC 2181 5: an RRset holds no duplicates).
      const key = `${owner}|${r.rr.type}|${JSON.stringify((r.rr as { data: unknown }).data)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      let node = this.nodes.get(owner);
      if (!node) {
        node = new Map();
        this.nodes.set(owner, node);
      }
      const set = node.get(r.rr.type) ?? [];
      set.push(r.rr);
      node.set(r.rr.type, set);
      const where = `${owner}|${r.rr.type}`;
      if (!firstLine.has(where)) firstLine.set(where, r);
      const other = (type: string): ZoneRecord | undefined => firstLine.get(`${owner}|${type}`);
      if (r.rr.type === 'CNAME') {
        if (set.length > 1) fail(`second CNAME at ${owner} (first at line ${other('CNAME')!.line}); a name has at most one`);
        for (const t of node.keys()) {
          if (t !== 'CNAME') fail(`CNAME at ${owner} beside ${t} data (line ${other(t)!.line}); a CNAME must be alone at its name`);
        }
      } else if (node.has('CNAME')) {
        fail(`${r.rr.type} at ${owner} beside its CNAME (line ${other('CNAME')!.line}); a CNAME must be alone at its name`);
      }
      if (r.rr.type === 'DNAME' && set.length > 1) fail(`second DNAME at ${owner} (first at line ${other('DNAME')!.line}); a name has at most one`);
      records.push(r.rr);
      for (let n = owner; ; n = parentName(n)) {
        if (this.names.has(n)) break;
        this.names.add(n);
        if (n === origin || n === '.') break;
      }
    }
    if (!soa) throw new ZoneFileError(file, 1, `no SOA record for the zone ${origin}; the apex must have one`);
    this.soa = soa.rr;
    const ttl = ttlOf(soa.rr);
    const minimum = (soa.rr as { data: { minimum: number } }).data.minimum;
    this.negativeSoa = withTtl(soa.rr, Math.min(ttl, minimum));
    this.ns = this.nodes.get(origin)?.get('NS') ?? [];
    this.records = [records.find((r) => r.type === 'SOA')!, ...records.filter((r) => r.type !== 'SOA')];
  }

  get serial(): number {
    return (this.soa as { data: { serial: number } }).data.serial;
  }

  /**
   * Answers `qname` (lowercased, inside the zone) for `qtype`. `spelled` is the name as the
   * client wrote it: owners that are the query name or one of its ancestors echo that spelling.
   */
  lookup(qname: string, spelled: string, qtype: string): LookupResult {
    const spell = (name: string): string => (isSubdomain(qname, name) ? (name === '.' ? '.' : spelled.slice(spelled.length - name.length)) : name);
    return this.resolve(qname, qtype, spell, 0);
  }

  private resolve(qname: string, qtype: string, spell: (name: string) => string, depth: number): LookupResult {
    const rename = (rrs: readonly Rr[], owner?: string): Rr[] => rrs.map((r) => ({ ...r, name: owner ?? spell(r.name) }));
    const soa = (): Rr[] => rename([this.soa]);
    const negSoa = (): Rr[] => rename([this.negativeSoa]);
    const ns = (): Rr[] => rename(this.ns);
    const none: Rr[] = [];

    if (qname === this.origin && qtype === 'SOA') return { kind: 'answer', answer: soa(), authority: ns(), additional: none };
    if (qname === this.origin && qtype === 'NS') {
      return { kind: 'answer', answer: ns(), authority: none, additional: this.glue(this.ns, false) };
    }

    // Walk down from the apex: a DNAME or a zone cut above the query name decides first.
    const path: string[] = [];
    for (let n = qname; ; n = parentName(n)) {
      path.push(n);
      if (n === this.origin || n === '.') break;
    }
    path.reverse();
    let encloser = this.origin;
    for (const n of path) {
      if (!this.names.has(n)) break;
      encloser = n;
      const node = this.nodes.get(n);
      if (!node) continue;
      const dname = node.get('DNAME');
      if (dname && n !== qname) return this.dname(qname, qtype, dname[0]!, spell, depth);
      const cut = node.get('NS');
      if (cut && n !== this.origin && !(qtype === 'DS' && n === qname)) {
        return { kind: 'referral', answer: none, authority: rename(cut), additional: this.glue(cut, true) };
      }
    }

    if (encloser === qname) {
      const node = this.nodes.get(qname);
      if (!node) return { kind: 'nodata', answer: none, authority: negSoa(), additional: none }; // empty non-terminal
      return this.fromNode(node, qtype, spell, depth, rename);
    }

    // RFC 4592: the source of synthesis is the wildcard child of the closest encloser.
    const wild = this.nodes.get(childOf('*', encloser));
    if (wild) return this.fromNode(wild, qtype, spell, depth, (rrs) => rename(rrs, spell(qname)));
    return { kind: 'nxdomain', answer: none, authority: negSoa(), additional: none };
  }

  /** The answer from the node owning `qname` (or the wildcard node standing in for it). */
  private fromNode(node: Node, qtype: string, spell: (name: string) => string, depth: number, rename: (rrs: readonly Rr[]) => Rr[]): LookupResult {
    const cname = node.get('CNAME');
    if (qtype === 'ANY') return this.anyAnswer(node, spell, rename);
    if (cname && qtype !== 'CNAME') {
      const first = rename(cname);
      return this.chase(first, (cname[0] as { data: string }).data, qtype, spell, depth);
    }
    const rrs = node.get(qtype);
    if (!rrs || rrs.length === 0) return { kind: 'nodata', answer: [], authority: [{ ...this.negativeSoa, name: spell(this.origin) }], additional: [] };
    return { kind: 'answer', answer: rename(rrs), authority: this.ns.map((r) => ({ ...r, name: spell(r.name) })), additional: this.additional(rrs) };
  }

  /**
   * ANY (RFC 8482 4.1): one RRset of the name rather than all of them, so a name with data never
   * looks empty. The CNAME when there is one (not chased), else the addresses (A, then AAAA: what
   * a client asking ANY most often wants), else the first RRset in file order.
   */
  private anyAnswer(node: Node, spell: (name: string) => string, rename: (rrs: readonly Rr[]) => Rr[]): LookupResult {
    // A node exists only because it owns records, so some RRset is always there.
    const type = ['CNAME', 'A', 'AAAA'].find((t) => node.has(t)) ?? node.keys().next().value!;
    const rrs = node.get(type)!;
    return { kind: 'answer', answer: rename(rrs), authority: this.ns.map((r) => ({ ...r, name: spell(r.name) })), additional: this.additional(rrs) };
  }

  /** RFC 6672: the DNAME, a CNAME synthesized at the query name, then the chase of its target. */
  private dname(qname: string, qtype: string, dname: Rr, spell: (name: string) => string, depth: number): LookupResult {
    const target = substitute(qname, dname.name, (dname as { data: string }).data.toLowerCase());
    const d: Rr = { ...dname, name: spell(dname.name) };
    if (!target) return { kind: 'yxdomain', answer: [d], authority: [], additional: [] };
    const cname = rr(spell(qname), 'CNAME', ttlOf(dname), target);
    const res = this.chase([cname], target, qtype, spell, depth);
    return { ...res, answer: [d, ...res.answer] };
  }

  /**
   * Follows a CNAME chain from `target` inside the zone (RFC 1034 4.3.2 step 3a: restart at the
   * canonical name). The chain stops, NOERROR, at a target outside the zone, one the zone does
   * not have, a referral, a loop, or after MAX_CHAIN links.
   */
  private chase(chain: Rr[], target: string, qtype: string, spell: (name: string) => string, depth: number): LookupResult {
    const authority = this.ns.map((r) => ({ ...r, name: spell(r.name) }));
    const done: LookupResult = { kind: 'answer', answer: chain, authority, additional: [] };
    const t = target.toLowerCase();
    if (!isSubdomain(t, this.origin) || depth >= MAX_CHAIN) return done;
    if (chain.some((rr) => rr.name.toLowerCase() === t)) return done; // loop
    // Names further down the chain are not the client's spelling: they keep the zone's.
    const next = this.resolve(t, qtype, (n) => n, depth + 1);
    if (next.kind !== 'answer') return done;
    const seen = new Set(chain.map((r) => `${r.name.toLowerCase()}|${r.type}`));
    const more = next.answer.filter((r) => !(r.type === 'CNAME' && seen.has(`${r.name.toLowerCase()}|CNAME`)));
    return { kind: 'answer', answer: [...chain, ...more], authority, additional: next.additional };
  }

  /** A/AAAA of in-zone MX exchanges and SRV targets (CoreDNS's additionalProcessing). */
  private additional(rrs: readonly Rr[]): Rr[] {
    const out: Rr[] = [];
    for (const rr of rrs) {
      const d = (rr as { data: unknown }).data as { exchange?: string; target?: string };
      const name = rr.type === 'MX' ? d.exchange : rr.type === 'SRV' ? d.target : undefined;
      if (!name || !isSubdomain(name, this.origin)) continue;
      pushAll(out, this.addresses(name));
    }
    return dedup(out);
  }

  /** Glue for NS records: A/AAAA of targets below the NS owner (referrals) or in the zone (apex). */
  private glue(nsrrs: readonly Rr[], inBailiwickOnly: boolean): Rr[] {
    const out: Rr[] = [];
    for (const rr of nsrrs) {
      const target = (rr as { data: string }).data;
      if (!isSubdomain(target, inBailiwickOnly ? rr.name : this.origin)) continue;
      pushAll(out, this.addresses(target));
    }
    return dedup(out);
  }

  private addresses(name: string): Rr[] {
    const node = this.nodes.get(name);
    if (!node) return [];
    return [...(node.get('A') ?? []), ...(node.get('AAAA') ?? [])];
  }
}

function dedup(rrs: Rr[]): Rr[] {
  const seen = new Set<Rr>();
  return rrs.filter((r) => {
    if (seen.has(r)) return false;
    seen.add(r);
    return true;
  });
}
