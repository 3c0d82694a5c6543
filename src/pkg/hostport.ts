// HOST:PORT as the Corefile, the command line and resolv.conf write an address: one splitter
// (Go's net.SplitHostPort rules, plus a default port), each caller saying what it accepts and
// wording its own messages.
import { isIP } from 'node:net';

export interface HostPort {
  /** Without brackets; an IPv6 zone (`%eth0`) kept as written. */
  host: string;
  port: number;
}

/**
 * Why a text is not an address:
 * - `no-port`: no `:PORT` and the caller has no default port;
 * - `colons`: more than one colon outside brackets and not a bare IPv6 address (or one with no
 *   default port: `::1:53` cannot say where the address ends);
 * - `port`: the port is not 1 to 5 digits within range;
 * - `host`: the host is not what the caller accepts, or text follows the `]` of a bracketed one.
 */
export type HostPortProblem = 'no-port' | 'colons' | 'port' | 'host';

export interface HostPortError {
  problem: HostPortProblem;
  /** The host and port texts as cut (either may be '' when the cut did not get that far). */
  host: string;
  port: string;
}

export interface HostPortOptions {
  /** What the host may be: an IP address only, or also a host name (letters, digits, '-' and '.'). */
  host: 'ip' | 'name';
  /** The port when none is written, which also makes a bare IPv6 address an address; without it a port is required. */
  defaultPort?: number;
  /** Port 0 accepted (a listener on a port the system picks). */
  portZero?: boolean;
  /** An empty host accepted (`:8080`: a listener on every address). */
  emptyHost?: boolean;
}

const HOST_NAME = /^[a-z0-9.-]+$/i;
const PORT = /^\d{1,5}$/;

/** Splits `HOST:PORT`, `[IPV6]:PORT`, and with a default port `HOST`, `[IPV6]` or a bare IPv6 address. */
export function splitHostPort(text: string, opts: HostPortOptions): HostPort | HostPortError {
  let host: string;
  let port: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    const rest = close < 0 ? '' : text.slice(close + 1);
    if (close < 0 || (rest !== '' && !rest.startsWith(':'))) return { problem: 'host', host: text, port: '' };
    host = text.slice(1, close);
    port = rest === '' ? undefined : rest.slice(1);
  } else {
    const first = text.indexOf(':');
    const last = text.lastIndexOf(':');
    if (first !== last) {
      // Several colons: only a whole IPv6 address, whose port is the default.
      if (opts.defaultPort === undefined || isIP(text) !== 6) return { problem: 'colons', host: text, port: '' };
      host = text;
    } else if (last < 0) {
      host = text;
    } else {
      host = text.slice(0, last);
      port = text.slice(last + 1);
    }
  }
  let n: number;
  if (port === undefined) {
    if (opts.defaultPort === undefined) return { problem: 'no-port', host, port: '' };
    n = opts.defaultPort;
  } else {
    n = Number(port);
    if (!PORT.test(port) || n > 65535 || (n === 0 && !opts.portZero)) return { problem: 'port', host, port };
  }
  const hostOk = host === '' ? opts.emptyHost === true : isIP(host) !== 0 || (opts.host === 'name' && HOST_NAME.test(host));
  if (!hostOk) return { problem: 'host', host, port: port ?? '' };
  return { host, port: n };
}

/** True when splitHostPort could not read the text. */
export function isHostPortError(r: HostPort | HostPortError): r is HostPortError {
  return 'problem' in r;
}
