// The rewrite plugin's query path (CoreDNS plugin/rewrite, rewrite.go + reverter.go): rules rewrite
// the question name before the rest of the chain sees it; the response goes back to the client with
// its own question (the server always echoes the question as asked) and record names mapped back.
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { Rcode, withData, withName, type Rr } from '../../dns/records.js';
import { fqdn } from '../../pkg/names.js';
import { applyRule, responseRules, type NameRule, type ResponseRule } from './rules.js';
import { pushAll } from '../../pkg/arrays.js';

/** RR types whose data holds a name that `answer value` / `answer auto` rewrite (CoreDNS's list). */
function nameInData(rr: Rr): string | undefined {
  const data = (rr as { data?: unknown }).data;
  switch (rr.type) {
    case 'CNAME':
    case 'NS':
    case 'DNAME':
    case 'PTR':
      return typeof data === 'string' ? data : undefined;
    case 'SRV':
      return (data as { target: string }).target;
    case 'MX':
      return (data as { exchange: string }).exchange;
    case 'SOA':
      return (data as { mname: string }).mname;
    default:
      return undefined;
  }
}

function withValue(rr: Rr, value: string): Rr {
  const data = (rr as { data?: unknown }).data;
  switch (rr.type) {
    case 'SRV':
      return withData(rr, { ...(data as object), target: value });
    case 'MX':
      return withData(rr, { ...(data as object), exchange: value });
    case 'SOA':
      return withData(rr, { ...(data as object), mname: value });
    default:
      return withData(rr, value);
  }
}

/** One record through every response rule, in the order the rules were applied (CoreDNS). */
function revertRecord(rr: Rr, rules: readonly ResponseRule[]): Rr {
  let out = rr;
  for (const rule of rules) {
    if (rule.field === 'name') {
      const name = rule.rewrite(fqdn(out.name.toLowerCase()));
      if (name !== fqdn(out.name.toLowerCase())) out = withName(out, name);
    } else {
      const value = nameInData(out);
      if (value === undefined || value === '') continue;
      const next = rule.rewrite(fqdn(value.toLowerCase()));
      if (next !== fqdn(value.toLowerCase())) out = withValue(out, next);
    }
  }
  return out;
}

/** A valid presentation name: labels of 1..63 octets, 255 in all (dns.IsDomainName, roughly). */
function validName(name: string): boolean {
  if (name === '.') return true;
  if (!name.endsWith('.') || name.length > 254) return false;
  return name
    .slice(0, -1)
    .split('.')
    .every((l) => l.length > 0 && l.length <= 63);
}

export class RewritePlugin implements Plugin {
  readonly name = 'rewrite';

  constructor(
    readonly rules: readonly NameRule[],
    private readonly log: { error(obj: object, msg: string): void },
  ) {}

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    let name = req.qname;
    let rewritten = false;
    const revert: ResponseRule[] = [];
    for (const rule of this.rules) {
      const to = applyRule(rule, name);
      if (to === undefined) continue;
      if (!validName(to)) {
        this.log.error({ plugin: 'rewrite', rule: rule.source, name: to }, `invalid name after rewrite: ${to}`);
        return { rcode: Rcode.SERVFAIL, aa: false, answer: [], authority: [], additional: [] };
      }
      pushAll(revert, responseRules(rule, name, to));
      name = to;
      rewritten = true;
      if (rule.mode === 'stop') break;
    }
    if (!rewritten) return next(req);
    const inner: DnsRequest = { ...req, name, qname: name.toLowerCase() };
    const res = next(inner);
    if (revert.length === 0) return res;
    const back = (r: DnsResponse): DnsResponse => ({
      ...r,
      answer: r.answer.map((rr) => revertRecord(rr, revert)),
      authority: r.authority.map((rr) => revertRecord(rr, revert)),
      additional: r.additional.map((rr) => revertRecord(rr, revert)),
    });
    return res instanceof Promise ? res.then(back) : back(res);
  }
}
