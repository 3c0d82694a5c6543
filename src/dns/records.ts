// Records as the chain and the plugins see them: dns-packet's shapes, with names written
// fully qualified (trailing dot) inside clusterdns and converted only at the wire boundary.
import type { Answer } from 'dns-packet';

export type Rr = Answer;

export const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  NOTAUTH: 9,
  BADVERS: 16,
} as const;

export type RcodeName = keyof typeof Rcode;

export function rcodeName(code: number): string {
  for (const [name, value] of Object.entries(Rcode)) if (value === code) return name;
  return `RCODE${code}`;
}
