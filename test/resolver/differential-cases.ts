// The table of the differential resolver test: resolv.conf variants (test/fixtures/resolver/resolv)
// and the names looked up under each, against the fixture cluster
// (test/fixtures/resolver/{Corefile,manifests}).
//
// What the fixture server answers (A / AAAA):
//   web.a.svc.cluster.local   10.96.1.10 / NODATA          web.b.svc.cluster.local  10.96.2.20 / NODATA
//   dual.a.svc.cluster.local  10.96.1.20 / fd00:10:96::20  db.b.svc.cluster.local   10.96.2.10 / NODATA
//   v6only.a.svc.cluster.local NODATA / fd00:10:96::30     a.c.svc.cluster.local    10.96.3.10 / NODATA
//   a.svc.cluster.local, svc.cluster.local, cluster.local: NODATA (namespace, empty non-terminal, apex)
//   other names under cluster.local: NXDOMAIN
//   sf.test: the same services under svc.sf.test; every other name there: SERVFAIL
//   every other name (web., local, example.org, ...): REFUSED

/** A client run: which program, and what `clusterdns resolve` is asked to predict for it. */
export type ClientKind =
  /** `getent ahosts NAME`: glibc getaddrinfo(AF_UNSPEC) — A and AAAA per candidate. */
  | 'glibc'
  /** `getent ahostsv4 NAME`: glibc getaddrinfo(AF_INET) — A only (predicted with --type A). */
  | 'glibc-v4'
  /** Static musl program: getaddrinfo(AF_UNSPEC). */
  | 'musl'
  /** CGO_ENABLED=0 Go program: net.Resolver.LookupIPAddr with the pure Go resolver. */
  | 'go';

export interface Variant {
  /** File name under test/fixtures/resolver/resolv. */
  file: string;
  rows: Row[];
}

export interface Row {
  name: string;
  /** Why this name is in the table (shown in the test title). */
  what: string;
  /** Extra clients besides glibc, musl and go. */
  extra?: ClientKind[];
}

const DOTS15 = 'a.b.c.d.e.f.g.h.i.j.k.web.a.svc.cluster.local';

export const variants: Variant[] = [
  {
    file: 'ndots5.conf',
    rows: [
      { name: 'web', what: '0 dots, answer at search position 1' },
      { name: 'db.b', what: '1 dot, answer at search position 2' },
      { name: 'web.a.svc', what: '2 dots, answer at search position 3' },
      { name: 'web.a.svc.cluster', what: '3 dots, answer at search position 4 after 3 NXDOMAIN' },
      { name: 'web.a.svc.cluster.local', what: '4 dots < ndots, REFUSED at position 4, answer only as is' },
      { name: 'x.web.a.svc.cluster.local', what: '5 dots = ndots: as is first, NXDOMAIN everywhere' },
      { name: 'web.a.svc.cluster.local.', what: 'trailing dot: only the name itself' },
      { name: 'x.web.a.svc.cluster.local.', what: 'trailing dot, NXDOMAIN: no search list after it' },
      { name: 'v6only', what: 'A NODATA + AAAA answer at position 1', extra: ['glibc-v4'] },
    ],
  },
  {
    file: 'ndots0.conf',
    rows: [{ name: 'web', what: 'ndots 0: as is first (REFUSED), then the search list' }],
  },
  {
    file: 'domain-then-search.conf',
    rows: [
      { name: 'web', what: 'domain then search: search wins, answer at position 1' },
      { name: 'db', what: 'NXDOMAIN, SERVFAIL, then as is REFUSED', extra: ['glibc-v4'] },
    ],
  },
  {
    file: 'search-then-domain.conf',
    rows: [
      { name: 'web', what: 'search then 2-token domain: first domain token answers' },
      { name: 'dual', what: 'search then 2-token domain: only in the second domain token' },
    ],
  },
  {
    file: 'nodata-servfail.conf',
    rows: [{ name: 'a', what: 'NODATA, SERVFAIL, then the answer at position 3', extra: ['glibc-v4'] }],
  },
  {
    file: 'servfail-nodata.conf',
    rows: [
      { name: 'a', what: 'SERVFAIL, NODATA, then the answer at position 3' },
      { name: 'nothing.b.svc.sf.test', what: '4 dots >= ndots 2: as is SERVFAIL, then the search list' },
    ],
  },
  {
    file: 'refused-middle.conf',
    rows: [{ name: 'db', what: 'NXDOMAIN, REFUSED, then the answer at position 3', extra: ['glibc-v4'] }],
  },
  {
    file: 'ndots15.conf',
    rows: [
      { name: 'x.y.web.a.svc.cluster.local', what: '6 dots < ndots 15: search first, NXDOMAIN everywhere' },
      { name: 'web.a.svc.cluster.local', what: '4 dots: 2 NXDOMAIN, then the answer as is' },
      { name: DOTS15, what: '15 dots = ndots 15: as is first' },
    ],
  },
  {
    file: 'ndots20.conf',
    rows: [{ name: DOTS15, what: 'ndots 20 clamped to 15: 15 dots, as is first' }],
  },
];

export interface Case {
  file: string;
  name: string;
  what: string;
  client: ClientKind;
}

export function cases(): Case[] {
  const out: Case[] = [];
  for (const v of variants) {
    for (const r of v.rows) {
      for (const client of ['glibc', ...(r.extra ?? []), 'musl', 'go'] as ClientKind[]) {
        out.push({ file: v.file, name: r.name, what: r.what, client });
      }
    }
  }
  return out;
}
