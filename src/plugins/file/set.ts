// Several `file` lines in one server block (one zone file each, as CoreDNS allows): each serves
// its own zones and passes every other name to the next one.
import type { DnsRequest, DnsResponse, Next, RecordLister, Transferer } from '../../chain/plugin.js';
import type { Rr } from '../../dns/records.js';
import type { FilePlugin } from './plugin.js';

export class FileSet implements RecordLister, Transferer {
  readonly name = 'file';
  private readonly entry: (req: DnsRequest, next: Next) => DnsResponse | Promise<DnsResponse>;

  constructor(readonly members: readonly FilePlugin[]) {
    this.entry = members.reduceRight<(req: DnsRequest, next: Next) => DnsResponse | Promise<DnsResponse>>(
      (after, plugin) => (req, next) => plugin.serve(req, (r) => after(r, next)),
      (req, next) => next(req),
    );
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    return this.entry(req, next);
  }

  transfer(origin: string): Rr[] | undefined {
    for (const m of this.members) {
      const rrs = m.transfer(origin);
      if (rrs) return rrs;
    }
    return undefined;
  }

  records(): Rr[] {
    return this.members.flatMap((m) => m.records());
  }

  *listRecords(): Iterable<{ zone: string; rr: Rr }> {
    for (const m of this.members) yield* m.listRecords();
  }

  close(): void {
    for (const m of this.members) m.close();
  }
}
