// `loadbalance [round_robin]`: shuffles the A and AAAA records of every answer so clients that
// take the first address spread over all of them (CoreDNS plugin/loadbalance, round_robin).
import type { PluginDefinition } from '../../chain/registry.js';
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { CorefileError } from '../../chain/corefile.js';
import type { Rr } from '../../dns/records.js';

const isAddress = (rr: Rr): boolean => rr.type === 'A' || rr.type === 'AAAA' || rr.type === 'MX';

/** Shuffles the address records in place of each other; CNAMEs and the rest keep their slots. */
export function shuffleAddresses(answer: Rr[], random: () => number = Math.random): Rr[] {
  const slots: number[] = [];
  answer.forEach((rr, i) => {
    if (isAddress(rr)) slots.push(i);
  });
  if (slots.length < 2) return answer;
  const picked = slots.map((i) => answer[i]!);
  for (let i = picked.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [picked[i], picked[j]] = [picked[j]!, picked[i]!];
  }
  const out = [...answer];
  slots.forEach((slot, k) => {
    out[slot] = picked[k]!;
  });
  return out;
}

class LoadbalancePlugin implements Plugin {
  readonly name = 'loadbalance';

  async serve(req: DnsRequest, next: Next): Promise<DnsResponse> {
    const res = await next(req);
    if (res.answer.filter(isAddress).length < 2) return res;
    // A shuffled answer must not be frozen by the server's answer cache.
    return { ...res, answer: shuffleAddresses(res.answer), cacheable: false };
  }
}

export const loadbalancePlugin: PluginDefinition = {
  name: 'loadbalance',
  // CoreDNS reads every loadbalance line of a block and the last one wins; each is still checked.
  setupAll(directives, ctx) {
    let last: Plugin | undefined;
    for (const d of directives) last = loadbalancePlugin.setup(d, ctx);
    return last;
  },
  setup(d) {
    if (d.args.length > 1 || (d.args[0] !== undefined && d.args[0] !== 'round_robin')) {
      throw new CorefileError(d.file, d.line, 'loadbalance: the only policy is round_robin (weighted is not supported)');
    }
    if (d.block && d.block.length > 0) throw new CorefileError(d.file, d.line, 'loadbalance: the option block (prefer CIDR...) is not supported');
    return new LoadbalancePlugin();
  },
};
