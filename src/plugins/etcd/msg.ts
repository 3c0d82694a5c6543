// The SkyDNS service record (CoreDNS plugin/etcd/msg/service.go, type.go): one JSON value per
// etcd key, read with Go's encoding/json rules (field names match case-insensitively, `null`
// leaves a field at its zero value, a wrong type fails the whole value).
import { isIP } from 'node:net';
import { fqdn } from '../../pkg/names.js';
import { NameSyntaxError, presentationLabels } from '../../pkg/names.js';

export interface Service {
  host: string;
  port: number;
  priority: number;
  weight: number;
  text: string;
  mail: boolean;
  ttl: number;
  targetstrip: number;
  group: string;
  /** Set by external-dns (`--txt-owner-id`) and by `clusterdns sync`; not served. */
  owner: string;
}

type Kind = 'string' | 'int' | 'uint32' | 'bool';

const FIELDS: Record<keyof Service, Kind> = {
  host: 'string',
  port: 'int',
  priority: 'int',
  weight: 'int',
  text: 'string',
  mail: 'bool',
  ttl: 'uint32',
  targetstrip: 'int',
  group: 'string',
  owner: 'string',
};

function emptyService(): Service {
  return { host: '', port: 0, priority: 0, weight: 0, text: '', mail: false, ttl: 0, targetstrip: 0, group: '', owner: '' };
}

/** Largest value of a Go int on 64-bit platforms that a JSON number can carry exactly. */
const MAX_INT = Number.MAX_SAFE_INTEGER;

/**
 * Parses one etcd value. Returns the service, or a reason naming what is wrong (the caller logs
 * it with the key and skips the record). Unknown fields are refused too: CoreDNS ignores them,
 * but a misspelt `hots` would otherwise serve an empty record without a word.
 */
export function parseService(value: string): Service | string {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch (err) {
    return `not JSON (${(err as Error).message}); write a JSON object such as {"host":"10.0.0.1"}`;
  }
  const svc = emptyService();
  if (raw === null) return svc;
  if (typeof raw !== 'object' || Array.isArray(raw))
    return `a JSON ${Array.isArray(raw) ? 'array' : typeof raw}, not an object; write a JSON object such as {"host":"10.0.0.1"}`;
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    const field = name.toLowerCase() as keyof Service;
    const kind = FIELDS[field];
    if (!kind) return `unknown field "${name}"; known fields: ${Object.keys(FIELDS).join(', ')}`;
    if (v === null) continue;
    switch (kind) {
      case 'string':
        if (typeof v !== 'string') return `field "${name}" must be a string, not ${JSON.stringify(v)}`;
        (svc[field] as string) = v;
        break;
      case 'bool':
        if (typeof v !== 'boolean') return `field "${name}" must be true or false, not ${JSON.stringify(v)}`;
        (svc[field] as boolean) = v;
        break;
      case 'int':
        if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > MAX_INT) return `field "${name}" must be an integer, not ${JSON.stringify(v)}`;
        (svc[field] as number) = v;
        break;
      case 'uint32':
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
          return `field "${name}" must be an integer from 0 to 4294967295, not ${JSON.stringify(v)}`;
        (svc[field] as number) = v;
        break;
    }
  }
  if (svc.host !== '' && isIP(svc.host) === 0) {
    const problem = nameProblem(svc.host);
    if (problem)
      return `field "host" is neither an IP address nor a domain name (${JSON.stringify(svc.host)}: ${problem}); write an address such as 10.0.0.1 or a name such as svc.example.org`;
  }
  return svc;
}

/** Why `name` cannot go on the wire as a domain name (an empty or long label, ...), or undefined. */
export function nameProblem(name: string): string | undefined {
  try {
    presentationLabels(fqdnOf(name), true);
    return undefined;
  } catch (err) {
    if (err instanceof NameSyntaxError) return err.message;
    throw err;
  }
}

type HostType = { type: 'A'; ip: string } | { type: 'AAAA'; ip: string } | { type: 'CNAME'; ip?: undefined } | { type: 'TXT'; ip?: undefined };

/**
 * msg.HostType: what the host field holds. An IPv4-mapped IPv6 address counts as IPv4, as Go's
 * net.IP.To4 does.
 */
export function hostType(s: Service): HostType {
  const v = isIP(s.host);
  if (v === 4) return { type: 'A', ip: s.host };
  if (v === 6) {
    const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s.host);
    if (m) return { type: 'A', ip: m[1]! };
    return { type: 'AAAA', ip: s.host };
  }
  return s.text === '' ? { type: 'CNAME' } : { type: 'TXT' };
}

/** Fully qualifies a name as dns.Fqdn does. */
export const fqdnOf = fqdn;

/** msg.targetStrip: drop `n` labels from the left; the whole name when that overshoots. */
export function targetStrip(name: string, n: number): string {
  const l = name === '.' ? [] : name.slice(0, -1).split('.');
  if (n >= l.length) return name;
  return l.slice(n).join('.') + '.';
}

/** A service with the key it was stored under and the TTL it answers with. */
export interface KeyedService extends Service {
  key: string;
  /** True when the TTL came from an etcd lease (then the answer must not be cached). */
  leased?: boolean;
}

/**
 * msg.Group: the group of the shortest keys decides; services of another group are dropped,
 * unless two shortest keys disagree (then nothing is dropped).
 */
export function group(sx: KeyedService[]): KeyedService[] {
  if (sx.length === 0) return sx;
  let grp = sx[0]!.group;
  let slashes = count(sx[0]!.key);
  const length: number[] = new Array(sx.length);
  for (let i = 0; i < sx.length; i++) {
    const x = count(sx[i]!.key);
    length[i] = x;
    if (x < slashes) {
      if (sx[i]!.group === '') break;
      slashes = x;
      grp = sx[i]!.group;
    }
  }
  if (grp === '') return sx;
  const ret: KeyedService[] = [];
  for (let i = 0; i < sx.length; i++) {
    const s = sx[i]!;
    if (s.group === '') {
      ret.push(s);
      continue;
    }
    if (length[i] === slashes && s.group !== grp) return sx;
    if (s.group === grp) ret.push(s);
  }
  return ret;
}

function count(key: string): number {
  let n = 0;
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) === 47) n++;
  return n;
}
