// The transfer plugin (CoreDNS plugin/transfer): answers AXFR and IXFR over TCP for zones whose
// backend implements the Transferer contract (kubernetes, file), to the clients listed in `to`.
import { isIP } from 'node:net';
import type { DnsRequest, DnsResponse, Next, Plugin, Transferer } from '../../chain/plugin.js';
import { Rcode, type Rr } from '../../dns/records.js';
import { matchZone } from '../../pkg/names.js';
import { plainAddress } from '../../pkg/ip.js';
import { cidrContains, type TransferConfig, type TransferStanza } from './config.js';

/** CoreDNS sends a message as soon as it holds more than 500 records. */
const RECORDS_PER_MESSAGE = 501;

const refused = (): DnsResponse => ({ rcode: Rcode.REFUSED, aa: false, answer: [], authority: [], additional: [], cacheable: false });
const servfail = (): DnsResponse => ({ rcode: Rcode.SERVFAIL, aa: false, answer: [], authority: [], additional: [], cacheable: false });

/** True when the stanza's `to` list lets `address` transfer (`*`, the IP itself, or a CIDR holding it). */
export function allowed(stanza: TransferStanza, address: string): boolean {
  // Compared as `to` is written: IPv4-mapped IPv6 (dual-stack sockets) as plain IPv4, lowercase.
  const ip = plainAddress(address).toLowerCase();
  if (isIP(ip) === 0) return false;
  return stanza.to.some((t) => t.kind === 'any' || (t.kind === 'ip' ? t.ip === ip : cidrContains(t, ip)));
}

export class TransferPlugin implements Plugin {
  readonly name = 'transfer';

  constructor(
    readonly cfg: TransferConfig,
    /** The block's plugins that implement Transferer, in execution order (looked up lazily). */
    private readonly transferers: () => Transferer[],
    private readonly log: { info(obj: object, msg: string): void },
  ) {}

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    if (req.qtype !== 'AXFR' && req.qtype !== 'IXFR') return next(req);
    if (req.protocol !== 'tcp') return refused();
    const stanza = this.stanzaFor(req.qname);
    if (!stanza) return next(req);
    if (!allowed(stanza, req.client.address)) return refused();

    let serial = 0;
    if (req.qtype === 'IXFR') {
      const auth = req.queryAuthority ?? [];
      const soa = auth[0];
      if (auth.length !== 1 || !soa || soa.type !== 'SOA') return servfail();
      serial = (soa.data as { serial: number }).serial;
    }

    let records: Rr[] | undefined;
    for (const t of this.transferers()) {
      records = t.transfer(req.qname);
      if (records) break;
    }
    if (!records) return next(req);
    const soa = records[0];
    if (soa?.type !== 'SOA') return servfail();
    const current = (soa.data as { serial: number }).serial;

    // IXFR without a journal: a client already at our serial gets the SOA alone, anyone else
    // the whole zone as an AXFR-style answer (RFC 1995 section 4).
    if (req.qtype === 'IXFR' && serial !== 0 && serial === current) {
      this.log.info({ zone: req.qname, client: req.client.address, serial: current }, 'outgoing noop incremental transfer for an up-to-date zone');
      return { rcode: Rcode.NOERROR, aa: false, answer: [soa], authority: [], additional: [], cacheable: false };
    }

    const messages: Rr[][] = [];
    for (let i = 0; i < records.length; i += RECORDS_PER_MESSAGE) messages.push(records.slice(i, i + RECORDS_PER_MESSAGE));
    this.log.info({ zone: req.qname, client: req.client.address, records: records.length, serial: current }, 'outgoing zone transfer');
    return { rcode: Rcode.NOERROR, aa: true, answer: messages[0]!, authority: [], additional: [], more: messages.slice(1), cacheable: false };
  }

  /** The stanza whose zones hold the name most specifically (CoreDNS's longestMatch). */
  private stanzaFor(qname: string): TransferStanza | undefined {
    let best: TransferStanza | undefined;
    let bestZone = '';
    for (const s of this.cfg.stanzas) {
      const z = matchZone(qname, s.zones);
      if (z !== undefined && (best === undefined || z.length > bestZone.length)) {
        best = s;
        bestZone = z;
      }
    }
    return best;
  }
}
