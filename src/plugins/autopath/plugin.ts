// autopath: server-side search path completion (CoreDNS plugin/autopath). When a query carries
// the first suffix of the client's search path, the server walks the rest of the path itself and
// answers the first name that exists with a CNAME from the asked name, so the client stops after
// one query instead of walking its search list.
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { Rcode, rr, ttlOf } from '../../dns/records.js';
import { isSubdomain, matchZone } from '../../pkg/names.js';

export class AutopathPlugin implements Plugin {
  readonly name = 'autopath';

  constructor(
    private readonly zones: readonly string[],
    /** The search path for a request, ending with '' (the bare name); undefined: no autopath. */
    private readonly searchPath: (req: DnsRequest) => string[] | undefined,
  ) {}

  async serve(req: DnsRequest, next: Next): Promise<DnsResponse> {
    if (!matchZone(req.qname, this.zones)) return next(req);
    const path = this.searchPath(req);
    const first = path?.[0];
    if (!path || first === undefined || first === '' || req.qname === first || !isSubdomain(req.qname, first)) {
      // The answer depends on who asks (another pod may get a CNAME), so it is never reused.
      return { ...(await next(req)), cacheable: false };
    }
    // The name the client's application asked for, before its resolver added the first suffix.
    const base = req.name.slice(0, req.name.length - first.length - 1);
    let firstReply: DnsResponse | undefined;
    for (const suffix of path) {
      const name = suffix === '' ? `${base}.` : `${base}.${suffix}`;
      const res = await next({ ...req, name, qname: name.toLowerCase() });
      firstReply ??= res;
      if (res.rcode === Rcode.NXDOMAIN) continue;
      return { ...withCname(res, req.name), cacheable: false };
    }
    // Every candidate is NXDOMAIN: answer the first, the client walks its list as usual.
    return { ...firstReply!, cacheable: false };
  }
}

/** Puts a CNAME from the asked name to the name that answered in front of the answer. */
function withCname(res: DnsResponse, original: string): DnsResponse {
  const found = res.answer.find((r) => r.name.toLowerCase() !== original.toLowerCase());
  if (!found) return res;
  const cname = rr(original, 'CNAME', ttlOf(found), found.name);
  return { ...res, answer: [cname, ...res.answer] };
}
