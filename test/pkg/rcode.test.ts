import { describe, expect, it } from 'vitest';
import { Rcode, rcodeFromString, rcodeLogString, rcodeToString } from '../../src/pkg/rcode.js';

// miekg/dns RcodeToString, as CoreDNS's rcode.ToString and the log plugin print them.
const table: Array<[number, string, string]> = [
  [0, 'NOERROR', 'NOERROR'],
  [1, 'FORMERR', 'FORMERR'],
  [2, 'SERVFAIL', 'SERVFAIL'],
  [3, 'NXDOMAIN', 'NXDOMAIN'],
  [4, 'NOTIMP', 'NOTIMP'],
  [5, 'REFUSED', 'REFUSED'],
  [6, 'YXDOMAIN', 'YXDOMAIN'],
  [7, 'YXRRSET', 'YXRRSET'],
  [8, 'NXRRSET', 'NXRRSET'],
  [9, 'NOTAUTH', 'NOTAUTH'],
  [10, 'NOTZONE', 'NOTZONE'],
  [11, 'DSOTYPENI', 'DSOTYPENI'],
  [12, 'RCODE12', '12'],
  [15, 'RCODE15', '15'],
  [16, 'BADSIG', 'BADSIG'],
  [17, 'BADKEY', 'BADKEY'],
  [23, 'BADCOOKIE', 'BADCOOKIE'],
  [24, 'RCODE24', '24'],
];

describe('rcode names', () => {
  it.each(table)('%d', (code, metric, log) => {
    expect(rcodeToString(code)).toBe(metric);
    expect(rcodeLogString(code)).toBe(log);
  });
  it('parses names in any case, BADVERS included (miekg/dns StringToRcode)', () => {
    expect(rcodeFromString('servfail')).toBe(2);
    expect(rcodeFromString('YXDomain')).toBe(6);
    expect(rcodeFromString('BADVERS')).toBe(16);
    expect(rcodeFromString('BADSIG')).toBe(16);
    expect(rcodeFromString('RCODE12')).toBeUndefined();
    expect(rcodeFromString('nope')).toBeUndefined();
  });
  it('the codes the server sends', () => {
    expect(Rcode).toMatchObject({ NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, BADVERS: 16 });
  });
});
