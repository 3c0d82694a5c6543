// Response codes by CoreDNS's names (miekg/dns RcodeToString), so metric labels, log lines and
// Corefile options spell them as CoreDNS does and dashboards built for CoreDNS match.

/** Codes the server itself returns or reads. */
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

/** miekg/dns RcodeToString: 16 is printed BADSIG (the TSIG name), as CoreDNS does. */
const NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'NOERROR'],
  [1, 'FORMERR'],
  [2, 'SERVFAIL'],
  [3, 'NXDOMAIN'],
  [4, 'NOTIMP'],
  [5, 'REFUSED'],
  [6, 'YXDOMAIN'],
  [7, 'YXRRSET'],
  [8, 'NXRRSET'],
  [9, 'NOTAUTH'],
  [10, 'NOTZONE'],
  [11, 'DSOTYPENI'],
  [16, 'BADSIG'],
  [17, 'BADKEY'],
  [18, 'BADTIME'],
  [19, 'BADMODE'],
  [20, 'BADNAME'],
  [21, 'BADALG'],
  [22, 'BADTRUNC'],
  [23, 'BADCOOKIE'],
]);

/** miekg/dns StringToRcode: the reverse table, plus BADVERS for 16. */
const CODES: ReadonlyMap<string, number> = new Map([...[...NAMES].map(([code, name]) => [name, code] as const), ['BADVERS', 16]]);

/** CoreDNS's rcode.ToString (metric labels, forward): the name, or `RCODE<n>` for codes without one. */
export function rcodeToString(code: number): string {
  return NAMES.get(code) ?? `RCODE${code}`;
}

/** The log plugin's `{rcode}`: the name, or the bare number for codes without one. */
export function rcodeLogString(code: number): string {
  return NAMES.get(code) ?? String(code);
}

/** A Corefile rcode name (any letter case) as its number, undefined when miekg/dns does not know it. */
export function rcodeFromString(name: string): number | undefined {
  return CODES.get(name.toUpperCase());
}
