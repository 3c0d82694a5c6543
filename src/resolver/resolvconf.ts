// The client side's view of a parsed resolv.conf (the parser is pkg/resolvconf.ts).
import type { ResolvConf } from '../pkg/resolvconf.js';

/** A one-line summary of a parsed configuration, for the readable trace. */
export function describeResolvConf(c: ResolvConf): string {
  const flags = (['rotate', 'edns0', 'singleRequest', 'singleRequestReopen', 'useVc', 'noTldQuery', 'noAaaa', 'trustAd'] as const).filter((k) => c[k]);
  return `${c.libc}: search [${c.search.join(' ')}]${c.searchFromHostname ? ' (from hostname)' : ''} ndots:${c.ndots} timeout:${c.timeout} attempts:${c.attempts} nameservers [${c.nameservers.join(' ')}]${flags.length ? ` ${flags.join(' ')}` : ''}`;
}
