// The transfer plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies
// them, with the address test plugin.ts runs against a `to` network.
import { cidrContains as inCidr, type Cidr } from '../../pkg/ip.js';

export type TransferTarget = { kind: 'any' } | { kind: 'ip'; ip: string } | { kind: 'cidr'; cidr: Cidr };

export interface TransferStanza {
  /** Lowercased, fully qualified. */
  zones: string[];
  to: TransferTarget[];
  /**
   * `source IP`: in CoreDNS the address NOTIFY messages are sent from. clusterdns sends no
   * NOTIFY, so it is only validated, so that a CoreDNS Corefile with it still loads.
   */
  source?: string;
}

export interface TransferConfig {
  stanzas: TransferStanza[];
}

export function cidrContains(net: Extract<TransferTarget, { kind: 'cidr' }>, ip: string): boolean {
  return inCidr(net.cidr, ip);
}
