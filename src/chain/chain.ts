// A chain per server block, and the router that picks the block for a query by the most
// specific zone (as CoreDNS does for blocks sharing a listener).
import type { DnsRequest, DnsResponse, Next, Plugin } from './plugin.js';
import { emptyResponse } from './plugin.js';
import { Rcode } from '../dns/records.js';
import { isSubdomain } from '../pkg/names.js';

export class Chain {
  private readonly entry: Next;

  constructor(
    readonly zones: readonly string[],
    readonly plugins: readonly Plugin[],
  ) {
    // Compose once so serving a query allocates no closures. Falling off the end is
    // SERVFAIL, as CoreDNS's NextOrFailure.
    let next: Next = () => emptyResponse(Rcode.SERVFAIL);
    for (let i = plugins.length - 1; i >= 0; i--) {
      const plugin = plugins[i]!;
      const serve = plugin.serve?.bind(plugin);
      if (!serve) continue;
      const after = next;
      // The innermost plugin that returns a response is the one that wrote it; plugins that
      // pass a response on (or copy it) keep that name.
      const tag = (r: DnsResponse): DnsResponse => {
        r.plugin ??= plugin.name;
        return r;
      };
      next = (req) => {
        const r = serve(req, after);
        return r instanceof Promise ? r.then(tag) : tag(r);
      };
    }
    this.entry = next;
  }

  serve(req: DnsRequest): DnsResponse | Promise<DnsResponse> {
    return this.entry(req);
  }
}

/** Chains sharing one listener (address and port), each serving some zones on it. */
export class Router {
  private readonly byZone: { zone: string; chain: Chain }[];

  constructor(entries: readonly { zone: string; chain: Chain }[]) {
    this.byZone = [...entries].sort((a, b) => b.zone.length - a.zone.length);
  }

  get zones(): string[] {
    return this.byZone.map((z) => z.zone);
  }

  /** The most specific zone served for a lowercased, fully qualified name. */
  zoneFor(qname: string): string | undefined {
    for (const { zone } of this.byZone) if (isSubdomain(qname, zone)) return zone;
    return undefined;
  }

  /** The chain for a lowercased, fully qualified name, or undefined (REFUSED). */
  chainFor(qname: string): Chain | undefined {
    for (const { zone, chain } of this.byZone) if (isSubdomain(qname, zone)) return chain;
    return undefined;
  }
}
