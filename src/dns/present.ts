// RFC 1035 presentation format of decoded records, as zone files and dig print them.
import type { Answer } from 'dns-packet';
import { ttlOf } from './records.js';
import { fqdn } from '../pkg/names.js';

function txtString(b: Buffer | string): string {
  const buf = typeof b === 'string' ? Buffer.from(b) : b;
  let out = '"';
  for (const c of buf) {
    if (c === 0x22 || c === 0x5c) out += '\\' + String.fromCharCode(c);
    else if (c < 0x20 || c > 0x7e) out += '\\' + String(c).padStart(3, '0');
    else out += String.fromCharCode(c);
  }
  return out + '"';
}

export function rdataText(rr: Answer): string {
  const data = (rr as { data?: unknown }).data as never;
  switch (rr.type) {
    case 'A':
    case 'AAAA':
      return String(data);
    case 'CNAME':
    case 'PTR':
    case 'NS':
    case 'DNAME':
      return fqdn(String(data));
    case 'SRV': {
      const d = data as { priority?: number; weight?: number; port?: number; target: string };
      return `${d.priority ?? 0} ${d.weight ?? 0} ${d.port ?? 0} ${fqdn(d.target)}`;
    }
    case 'MX': {
      const d = data as { preference?: number; exchange: string };
      return `${d.preference ?? 0} ${fqdn(d.exchange)}`;
    }
    case 'SOA': {
      const d = data as { mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number };
      return `${fqdn(d.mname)} ${fqdn(d.rname)} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    }
    case 'TXT': {
      const list = Array.isArray(data) ? (data as (Buffer | string)[]) : [data as Buffer | string];
      return list.map(txtString).join(' ');
    }
    case 'CAA': {
      const d = data as { flags?: number; tag: string; value: string };
      return `${d.flags ?? 0} ${d.tag} "${String(d.value).replace(/["\\]/g, (c) => '\\' + c)}"`;
    }
    default:
      return JSON.stringify(data);
  }
}

export function recordText(rr: Answer): string {
  return recordTextWith(rr, rdataText(rr));
}

/** recordText with the record's data already presented (callers that keyed records by it). */
export function recordTextWith(rr: Answer, rdata: string): string {
  return `${fqdn(rr.name)}\t${ttlOf(rr)}\t${(rr as { class?: string }).class ?? 'IN'}\t${rr.type}\t${rdata}`;
}
