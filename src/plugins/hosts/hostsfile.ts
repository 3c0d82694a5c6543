// /etc/hosts parsing as CoreDNS's plugin/hosts (hostsfile.go): `IP name [aliases...]` per line,
// `#` comments, names lowercased and fully qualified, only names inside the plugin's zones kept;
// an index by name per family and, unless no_reverse, by address for PTR.
import { isSubdomain } from '../../pkg/names.js';
import { canonicalIp } from '../../pkg/ip.js';

export interface HostsMap {
  /** name -> IPv4 addresses, in file order. */
  readonly name4: ReadonlyMap<string, readonly string[]>;
  readonly name6: ReadonlyMap<string, readonly string[]>;
  /** canonical address -> names, in file order (empty with no_reverse). */
  readonly addr: ReadonlyMap<string, readonly string[]>;
  /** Number of (name, address) entries. */
  readonly entries: number;
}

export const EMPTY_HOSTS: HostsMap = { name4: new Map(), name6: new Map(), addr: new Map(), entries: 0 };

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The family as written: the first '.' or ':' decides (CoreDNS's ipVersion). */
function textualFamily(s: string): 4 | 6 | 0 {
  for (const c of s) {
    if (c === '.') return 4;
    if (c === ':') return 6;
  }
  return 0;
}

function absName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
}

/** Parses hosts-file text; lines that are not `IP NAME...` are skipped, as CoreDNS does. */
export function parseHosts(text: string, origins: readonly string[], autoReverse: boolean): HostsMap {
  const name4 = new Map<string, string[]>();
  const name6 = new Map<string, string[]>();
  const addr = new Map<string, string[]>();
  let entries = 0;
  for (const raw of text.split('\n')) {
    const hash = raw.indexOf('#');
    const fields = (hash >= 0 ? raw.slice(0, hash) : raw)
      .trim()
      .split(/\s+/)
      .filter((f) => f !== '');
    if (fields.length < 2) continue;
    const literal = fields[0]!.replace(/%.*$/, ''); // an IPv6 zone is discarded
    const ip = canonicalIp(literal);
    if (!ip) continue;
    const family = textualFamily(fields[0]!);
    if (family === 0) continue;
    for (const f of fields.slice(1)) {
      const name = absName(f);
      if (!origins.some((o) => isSubdomain(name, o))) continue;
      push(family === 4 ? name4 : name6, name, ip);
      entries++;
      if (autoReverse) push(addr, ip, name);
    }
  }
  return { name4, name6, addr, entries };
}
