// The loadbalance plugin's chain step (CoreDNS plugin/loadbalance, round_robin): shuffles the A,
// AAAA and MX records of every answer so clients that take the first address spread over all of
// them.
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import type { Rr } from '../../dns/records.js';
import type { LoadbalanceConfig } from './config.js';

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

export class LoadbalancePlugin implements Plugin {
  readonly name = 'loadbalance';

  constructor(readonly cfg: LoadbalanceConfig) {}

  async serve(req: DnsRequest, next: Next): Promise<DnsResponse> {
    const res = await next(req);
    if (res.answer.filter(isAddress).length < 2) return res;
    // A shuffled answer must not be frozen by the server's answer cache.
    return { ...res, answer: shuffleAddresses(res.answer), cacheable: false };
  }
}
