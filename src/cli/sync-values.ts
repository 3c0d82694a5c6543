// The SkyDNS values `clusterdns sync` writes for a record set (CoreDNS's etcd schema), one key
// per record, stable across runs so a second sync writes nothing.
import { createHash } from 'node:crypto';
import type { Answer } from 'dns-packet';
import type { Logger } from 'pino';
import { isReverse } from '../pkg/names.js';
import { namePath } from '../plugins/etcd/path.js';

type Value = Record<string, string | number | boolean>;

/** Priority of address entries: any value but SRV's (0, read as 10) would do. */
const ADDRESS_PRIORITY = 65535;

/** Records named in a warning about what was left out; the rest are counted. */
const NAMED_IN_WARNING = 10;

/**
 * TXT data as the `text` of a SkyDNS value, in miekg/dns presentation escaping as CoreDNS reads
 * it: `\"` and `\\`, and `\DDD` for every byte outside printable ASCII. A zone's TXT may hold
 * any bytes (`\255`), which a JSON string of decoded text would turn into U+FFFD; escaped, the
 * value is plain ASCII, so its size in bytes is also its length.
 */
export function txtValueText(data: readonly (string | Buffer)[] | string | Buffer): string {
  const parts = Array.isArray(data) ? data : [data as string | Buffer];
  let out = '';
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part) : part;
    for (const c of bytes) {
      if (c === 0x22 || c === 0x5c) out += '\\' + String.fromCharCode(c);
      else if (c < 0x20 || c > 0x7e) out += '\\' + String(c).padStart(3, '0');
      else out += String.fromCharCode(c);
    }
  }
  return out;
}

/**
 * SkyDNS values for a record set. Each record is one key under its owner's path, labelled by a
 * hash of its data (stable across runs), and grouped by its owner name: CoreDNS answers a name
 * with its whole subtree, and the group keeps a service's answer to its own records instead of
 * its endpoints' too. Addresses carry port -1 so they never turn into SRV answers of port 0.
 */
export function skydnsValues(byZone: Map<string, Map<string, Answer>>, prefix: string, owner: string, log?: Logger): Map<string, string> {
  const out = new Map<string, string>();
  const dropped: string[] = [];
  let droppedCount = 0;
  let skipped = 0;
  for (const rrs of byZone.values()) {
    for (const rr of rrs.values()) {
      const name = rr.name.toLowerCase().replace(/\.?$/, '.');
      const ttl = (rr as { ttl?: number }).ttl ?? 0;
      let value: Value | undefined;
      let exact = false;
      switch (rr.type) {
        case 'A':
        case 'AAAA':
          // Port -1 keeps an address out of SRV answers; a priority of its own keeps it out of
          // the SRV weight sums (CoreDNS adds weights per priority before it skips port -1).
          value = { host: String(rr.data), port: -1, priority: ADDRESS_PRIORITY };
          break;
        case 'CNAME':
          // A CNAME query reads the exact key (backend_lookup.go CNAME), as a PTR does.
          value = { host: String(rr.data) };
          exact = true;
          break;
        case 'SRV': {
          const d = rr.data as { priority: number; weight: number; port: number; target: string };
          value = { host: d.target, port: d.port };
          if (d.priority) value.priority = d.priority;
          break;
        }
        case 'TXT':
          value = { text: txtValueText(rr.data as (string | Buffer)[] | string | Buffer) };
          break;
        case 'PTR':
          // CoreDNS reads a PTR from the exact key of the reverse name (external-dns writes it there).
          value = { host: String(rr.data) };
          exact = true;
          break;
        default:
          // SOA and NS are synthesized by the etcd plugin from the zone and ns.dns.ZONE.
          skipped++;
          continue;
      }
      if (ttl) value.ttl = ttl;
      if (!isReverse(name)) value.group = name;
      if (rr.type === 'A' || rr.type === 'AAAA') value.targetstrip = 1;
      value.owner = owner;
      const json = JSON.stringify(value);
      const base = namePath(name, prefix);
      if (exact) {
        if (out.has(base)) {
          droppedCount++;
          if (dropped.length < NAMED_IN_WARNING) dropped.push(`${name} ${rr.type} ${String(rr.data)}`);
        } else out.set(base, json);
        continue;
      }
      const label = 'x' + createHash('sha1').update(`${rr.type}|${json}`).digest('hex').slice(0, 12);
      out.set(`${base}/${label}`, json);
    }
  }
  if (droppedCount > 0) {
    log?.warn(
      { dropped: droppedCount, records: dropped, more: droppedCount - dropped.length },
      `sync: SkyDNS holds one PTR or CNAME per name (at its exact key); left out ${droppedCount}: ${dropped.join(', ')}${droppedCount > dropped.length ? ` and ${droppedCount - dropped.length} more` : ''}`,
    );
  }
  log?.debug({ skipped }, 'sync: SOA and NS records are synthesized by the etcd plugin, not written');
  return out;
}
