// `fallthrough [ZONES...]`, as CoreDNS's plugin/pkg/fall: a backend that would answer NXDOMAIN
// hands the query to the next plugin instead, for every zone or only for the listed ones.
import { isSubdomain } from './names.js';

/**
 * Zones parsed from a `fallthrough` line: undefined when the block has none, [] for a bare
 * `fallthrough` (every name), else the zones (lowercased, fully qualified).
 */
export type Fallthrough = readonly string[] | undefined;

/** True when a query for `qname` (lowercased, fully qualified) falls through. */
export function fallsThrough(ft: Fallthrough, qname: string): boolean {
  if (!ft) return false;
  return ft.length === 0 || ft.some((z) => isSubdomain(qname, z));
}
