// /etc/hosts: parsing and the lookup each libc does before DNS.
// glibc and Go consult it first with the default `hosts: files dns`; musl always does
// (it never reads nsswitch.conf: musl 1.2.3 src/network/lookup_name.c, name_from_hosts).
import { isIP } from 'node:net';
import type { Libc } from '../pkg/resolvconf.js';

export interface HostsEntry {
  readonly address: string;
  /** Canonical name first, then aliases, as written. */
  readonly names: readonly string[];
  readonly line: number;
}

/** Parses hosts-file text: `ADDRESS NAME [ALIAS...]`, `#` starts a comment anywhere on a line. */
export function parseHosts(text: string): HostsEntry[] {
  const out: HostsEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const hash = raw.indexOf('#');
    const line = hash >= 0 ? raw.slice(0, hash) : raw;
    const f = line.split(/[ \t\r\v\f]+/).filter((t) => t !== '');
    if (f.length < 2) return;
    const addr = f[0]!;
    const pct = addr.indexOf('%');
    if (isIP(pct >= 0 ? addr.slice(0, pct) : addr) === 0) return;
    out.push({ address: addr, names: f.slice(1), line: i + 1 });
  });
  return out;
}

/**
 * Addresses the hosts file gives a libc for a name, in file order.
 * Matching: glibc compares case-insensitively and exactly (`foo.` is not `foo`); musl compares
 * case-sensitively and exactly; Go lower-cases and roots both sides (`foo.` matches `foo`).
 */
export function lookupHosts(entries: readonly HostsEntry[], name: string, libc: Libc, family: 'UNSPEC' | 'INET' | 'INET6' = 'UNSPEC'): string[] {
  const norm = (s: string): string => {
    if (libc === 'musl') return s;
    const l = s.toLowerCase();
    return libc === 'go' && !l.endsWith('.') ? `${l}.` : l;
  };
  const want = norm(name);
  const out: string[] = [];
  for (const e of entries) {
    if (!e.names.some((n) => norm(n) === want)) continue;
    const fam = isIP(e.address.split('%')[0]!);
    if (family === 'INET' && fam !== 4) continue;
    if (family === 'INET6' && fam !== 6) continue;
    if (!out.includes(e.address)) out.push(e.address);
  }
  return out;
}
