// splitHostPort in the three ways clusterdns reads an address: a forward upstream (an IP, port 53
// by default), a server to query (a host name too, port 53 by default) and an HTTP listener
// (Go's net.SplitHostPort: the port required, port 0 and an empty host allowed).
import { describe, expect, it } from 'vitest';
import { splitHostPort, type HostPortOptions } from '../../src/pkg/hostport.js';

const UPSTREAM: HostPortOptions = { host: 'ip', defaultPort: 53 };
const SERVER: HostPortOptions = { host: 'name', defaultPort: 53 };
const LISTENER: HostPortOptions = { host: 'name', portZero: true, emptyHost: true };
const WAYS = { UPSTREAM, SERVER, LISTENER };

type Outcome = string | { host: string; port: number };
/** text -> [upstream, server, listener]: an address, or the problem. */
const ROWS: [string, Outcome, Outcome, Outcome][] = [
  ['10.0.0.1', { host: '10.0.0.1', port: 53 }, { host: '10.0.0.1', port: 53 }, 'no-port'],
  ['10.0.0.1:1053', { host: '10.0.0.1', port: 1053 }, { host: '10.0.0.1', port: 1053 }, { host: '10.0.0.1', port: 1053 }],
  ['10.0.0.1:0', 'port', 'port', { host: '10.0.0.1', port: 0 }],
  ['10.0.0.1:65535', { host: '10.0.0.1', port: 65535 }, { host: '10.0.0.1', port: 65535 }, { host: '10.0.0.1', port: 65535 }],
  ['10.0.0.1:65536', 'port', 'port', 'port'],
  ['10.0.0.1:00053', { host: '10.0.0.1', port: 53 }, { host: '10.0.0.1', port: 53 }, { host: '10.0.0.1', port: 53 }],
  ['10.0.0.1:000053', 'port', 'port', 'port'],
  ['10.0.0.1:0x35', 'port', 'port', 'port'],
  ['10.0.0.1:5e1', 'port', 'port', 'port'],
  ['10.0.0.1: 53', 'port', 'port', 'port'],
  ['10.0.0.1:', 'port', 'port', 'port'],
  ['10.0.0.1:http', 'port', 'port', 'port'],
  ['::1', { host: '::1', port: 53 }, { host: '::1', port: 53 }, 'colons'],
  ['::1:8080', { host: '::1:8080', port: 53 }, { host: '::1:8080', port: 53 }, 'colons'],
  ['fe80::1%eth0', { host: 'fe80::1%eth0', port: 53 }, { host: 'fe80::1%eth0', port: 53 }, 'colons'],
  ['1.2.3.4:53:53', 'colons', 'colons', 'colons'],
  ['[::1]:8181', { host: '::1', port: 8181 }, { host: '::1', port: 8181 }, { host: '::1', port: 8181 }],
  ['[fe80::1%eth0]:53', { host: 'fe80::1%eth0', port: 53 }, { host: 'fe80::1%eth0', port: 53 }, { host: 'fe80::1%eth0', port: 53 }],
  ['[fd00::1]', { host: 'fd00::1', port: 53 }, { host: 'fd00::1', port: 53 }, 'no-port'],
  ['[10.0.0.1]:53', { host: '10.0.0.1', port: 53 }, { host: '10.0.0.1', port: 53 }, { host: '10.0.0.1', port: 53 }],
  ['[::1]:', 'port', 'port', 'port'],
  ['[::1]x', 'host', 'host', 'host'],
  ['[::1', 'host', 'host', 'host'],
  ['[dns.example]:53', 'host', { host: 'dns.example', port: 53 }, { host: 'dns.example', port: 53 }],
  ['dns.example', 'host', { host: 'dns.example', port: 53 }, 'no-port'],
  ['dns.example:80', 'host', { host: 'dns.example', port: 80 }, { host: 'dns.example', port: 80 }],
  ['localhost:9153', 'host', { host: 'localhost', port: 9153 }, { host: 'localhost', port: 9153 }],
  ['a_b:80', 'host', 'host', 'host'],
  ['1.2.3.4%eth0', 'host', 'host', 'no-port'],
  [':8080', 'host', 'host', { host: '', port: 8080 }],
  ['[]:8080', 'host', 'host', { host: '', port: 8080 }],
  ['', 'host', 'host', 'no-port'],
];

describe('splitHostPort', () => {
  for (const [way, opts] of Object.entries(WAYS)) {
    const col = Object.keys(WAYS).indexOf(way) + 1;
    it.each(ROWS.map((r) => [r[0], r[col]!] as const))(`${way}: %j -> %j`, (text, want) => {
      const got = splitHostPort(text, opts);
      if (typeof want === 'string') expect(got).toMatchObject({ problem: want });
      else expect(got).toEqual(want);
    });
  }

  it('hands back the texts it cut, for the caller to name in its message', () => {
    expect(splitHostPort('bla:a', LISTENER)).toEqual({ problem: 'port', host: 'bla', port: 'a' });
    expect(splitHostPort('a_b:80', LISTENER)).toEqual({ problem: 'host', host: 'a_b', port: '80' });
    expect(splitHostPort('bla', LISTENER)).toEqual({ problem: 'no-port', host: 'bla', port: '' });
  });
});
