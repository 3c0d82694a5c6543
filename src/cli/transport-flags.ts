// `serve --tcp-*` and `--tls-handshake-timeout` flags: the TCP and DNS over TLS limits, checked and
// turned into TcpOptions.
import type { Command } from 'commander';
import { parseGoDuration } from '../pkg/duration.js';
import { defaultTcpOptions, type TcpOptions } from '../server/tcp.js';

export interface TransportFlags {
  tcpIdleTimeout?: string;
  tcpMessageTimeout?: string;
  tcpWriteTimeout?: string;
  tcpMaxConnections?: string;
  tcpMaxConnectionsPerClient?: string;
  tcpMaxUnsent?: string;
  tcpMaxUnsentTotal?: string;
  tcpMaxInFlight?: string;
  tlsHandshakeTimeout?: string;
}

const d = defaultTcpOptions;

export function addTransportFlags(cmd: Command): Command {
  return cmd
    .option('--tcp-idle-timeout <duration>', `close a TCP connection idle this long (default ${d.idleTimeoutMs / 1000}s)`)
    .option(
      '--tcp-message-timeout <duration>',
      `close a TCP connection whose message is not complete this long after its first byte (default ${d.messageTimeoutMs / 1000}s)`,
    )
    .option(
      '--tcp-write-timeout <duration>',
      `close a TCP connection whose client reads none of its pending replies for this long (default ${d.writeTimeoutMs / 1000}s)`,
    )
    .option('--tcp-max-connections <n>', `TCP connections per listener; at the cap an idle one makes room (default ${d.maxConnections})`)
    .option('--tcp-max-connections-per-client <n>', `TCP connections per client address (default ${d.maxConnectionsPerClient})`)
    .option('--tcp-max-unsent <bytes>', `unsent reply bytes before a TCP connection stops being read (default ${d.maxUnsentBytes / 1024 / 1024}MiB)`)
    .option('--tcp-max-unsent-total <bytes>', `unsent reply bytes of all TCP connections of a listener (default ${d.maxUnsentTotalBytes / 1024 / 1024}MiB)`)
    .option('--tcp-max-in-flight <n>', `pipelined queries answered at once per TCP connection (default ${d.maxInFlight})`)
    .option(
      '--tls-handshake-timeout <duration>',
      `close a DNS over TLS connection whose TLS handshake is not done this long after it opened (default ${d.handshakeTimeoutMs / 1000}s)`,
    );
}

function duration(flag: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined || !(ms > 0)) throw new Error(`--${flag} ${text}: give a positive duration such as 500ms, 3s or 1m`);
  return ms;
}

function count(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) throw new Error(`--${flag} ${text}: give a whole number of at least 1`);
  return n;
}

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1 << 20, mib: 1 << 20, g: 1 << 30, gib: 1 << 30 };

function bytes(flag: string, text: string): number {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? BYTE_UNITS[m[2]!.toLowerCase()] : undefined;
  const n = m && unit ? Number(m[1]) * unit : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${flag} ${text}: give a size in bytes such as 65536, 256KiB or 1MiB`);
  return n;
}

/** The TCP options the flags set; throws naming the flag and the fix when one is invalid. */
export function transportOptions(flags: TransportFlags): Partial<TcpOptions> {
  const out: Partial<TcpOptions> = {};
  if (flags.tcpIdleTimeout !== undefined) out.idleTimeoutMs = duration('tcp-idle-timeout', flags.tcpIdleTimeout);
  if (flags.tcpMessageTimeout !== undefined) out.messageTimeoutMs = duration('tcp-message-timeout', flags.tcpMessageTimeout);
  if (flags.tcpWriteTimeout !== undefined) out.writeTimeoutMs = duration('tcp-write-timeout', flags.tcpWriteTimeout);
  if (flags.tcpMaxConnections !== undefined) out.maxConnections = count('tcp-max-connections', flags.tcpMaxConnections);
  if (flags.tcpMaxConnectionsPerClient !== undefined) out.maxConnectionsPerClient = count('tcp-max-connections-per-client', flags.tcpMaxConnectionsPerClient);
  if (flags.tcpMaxUnsent !== undefined) out.maxUnsentBytes = bytes('tcp-max-unsent', flags.tcpMaxUnsent);
  if (flags.tcpMaxUnsentTotal !== undefined) out.maxUnsentTotalBytes = bytes('tcp-max-unsent-total', flags.tcpMaxUnsentTotal);
  if (flags.tcpMaxInFlight !== undefined) out.maxInFlight = count('tcp-max-in-flight', flags.tcpMaxInFlight);
  if (flags.tlsHandshakeTimeout !== undefined) out.handshakeTimeoutMs = duration('tls-handshake-timeout', flags.tlsHandshakeTimeout);
  return out;
}
