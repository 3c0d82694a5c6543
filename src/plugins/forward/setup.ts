// `forward FROM TO... { options }` -> a validated ForwardConfig, following CoreDNS's
// plugin/forward/setup.go (parseStanza, parseBlock) and plugin/pkg/parse/host.go (HostPortOrFile);
// and the registration, one ForwardPlugin (with its upstreams' health checks) per line.
import path from 'node:path';
import { isIP } from 'node:net';
import type { Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { CorefileError, excerpt, readCorefileText } from '../../chain/corefile.js';
import { parseServerKey } from '../../chain/corefile-keys.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { Rcode, rcodeFromString } from '../../pkg/rcode.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { ForwardChain, ForwardPlugin } from './plugin.js';
import { pushAll } from '../../pkg/arrays.js';
import { isHostPortError, splitHostPort } from '../../pkg/hostport.js';

type Policy = 'random' | 'round_robin' | 'sequential';

export interface UpstreamAddress {
  /** IP address without brackets or zone. */
  host: string;
  port: number;
  /** As written for logs: `127.0.0.1:53`, `[::1]:53`. */
  label: string;
}

export interface ForwardConfig {
  /** Lowercased, fully qualified zone whose names are forwarded ('.' for all). */
  from: string;
  upstreams: UpstreamAddress[];
  /** Names (and below) never forwarded, handed to the next plugin. */
  except: string[];
  forceTcp: boolean;
  preferUdp: boolean;
  /** Idle lifetime of a cached upstream connection, ms (CoreDNS default 10s). */
  expireMs: number;
  /** Failed health checks after which an upstream is down (more than this many); 0 never. */
  maxFails: number;
  healthCheckMs: number;
  healthCheckRd: boolean;
  healthCheckDomain: string;
  policy: Policy;
  /** 0: unlimited. */
  maxConcurrent: number;
  /** 0: no cap on upstream attempts per query. */
  maxConnectAttempts: number;
  failfastAllUnhealthy: boolean;
  /** Upstream rcodes that make forward try the next upstream. */
  failover: number[];
  /** `next RCODE...`: upstream rcodes that hand the query to the next plugin instead. */
  next: number[];
  /** `next_on_nodata`: an empty NOERROR from upstream goes to the next plugin too. */
  nextOnNodata: boolean;
  /** Per-exchange read timeout, ms (CoreDNS: static 2s). */
  readTimeoutMs: number;
  /** Overall time spent on one query across upstreams, ms (CoreDNS defaultTimeout 5s). */
  queryTimeoutMs: number;
}

/** CoreDNS's limit on upstreams per forward. */
const MAX_UPSTREAMS = 15;

const OPTIONS = [
  'except', 'force_tcp', 'prefer_udp', 'expire', 'max_fails', 'health_check', 'policy', 'max_concurrent',
  'max_connect_attempts', 'failfast_all_unhealthy_upstreams', 'failover', 'next', 'next_on_nodata', 'max_idle_conns',
  'max_age', 'read_timeout',
];
/** CoreDNS options for transports clusterdns does not speak (DoT, DoH, hostname upstreams). */
const UNSUPPORTED = ['tls', 'tls_servername', 'doh_method', 'resolver'];

function zoneOf(text: string, d: Directive, what: string): string[] {
  try {
    return parseServerKey(text).map((k) => k.zone);
  } catch (err) {
    throw new CorefileError(d.file, d.line, `forward: bad ${what} "${excerpt(text)}": ${(err as Error).message}`);
  }
}

/** `IP`, `IP:port`, `[IPv6]:port`, optionally with `dns://`; undefined when it is not an address. */
export function parseUpstream(text: string): UpstreamAddress | undefined {
  const a = splitHostPort(text.toLowerCase().startsWith('dns://') ? text.slice(6) : text, { host: 'ip', defaultPort: 53 });
  if (isHostPortError(a)) return undefined;
  const host = a.host.replace(/%.*$/, '');
  return { host, port: a.port, label: isIP(host) === 6 ? `[${host}]:${a.port}` : `${host}:${a.port}` };
}

/** Nameservers of a resolv.conf (miekg/dns ClientConfigFromFile: `nameserver` lines, port 53). */
export function resolvConfNameservers(text: string): UpstreamAddress[] {
  const out: UpstreamAddress[] = [];
  for (const line of text.split(/\r?\n/)) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== 'nameserver' || words.length < 2) continue;
    const host = words[1]!.replace(/%.*$/, '');
    if (isIP(host) !== 0) out.push({ host, port: 53, label: isIP(host) === 6 ? `[${host}]:53` : `${host}:53` });
  }
  return out;
}

function duration(o: Directive, text: string | undefined, what: string): number {
  const ms = text === undefined ? undefined : parseGoDuration(text);
  if (ms === undefined) throw new CorefileError(o.file, o.line, `forward ${what}: "${excerpt(text ?? '')}" is not a duration (e.g. 500ms, 10s, 1m)`);
  if (ms < 0) throw new CorefileError(o.file, o.line, `forward ${what} can't be negative: ${text}`);
  return ms;
}

function rcodeArgs(o: Directive): number[] {
  if (o.args.length === 0) throw new CorefileError(o.file, o.line, `forward ${o.name}: name at least one RCODE, e.g. SERVFAIL`);
  return o.args.map((a) => {
    const code = rcodeFromString(a);
    if (code === undefined) throw new CorefileError(o.file, o.line, `forward ${o.name}: unknown RCODE "${excerpt(a)}"`);
    if (code === Rcode.NOERROR && o.name === 'failover') throw new CorefileError(o.file, o.line, 'forward failover: NOERROR cannot be used');
    return code;
  });
}

/** The TOs of a forward line: addresses, or resolv.conf-style files relative to the Corefile. */
function readUpstreams(d: Directive): UpstreamAddress[] {
  const fail = (reason: string): never => {
    throw new CorefileError(d.file, d.line, reason);
  };
  const upstreams: UpstreamAddress[] = [];
  for (const to of d.args.slice(1)) {
    const scheme = /^([a-z0-9+.-]+):\/\//i.exec(to)?.[1]?.toLowerCase();
    if (scheme !== undefined && scheme !== 'dns') {
      fail(`forward: '${scheme}' is not supported as a destination protocol here (${excerpt(to)}); clusterdns forwards plain DNS (dns:// or no prefix)`);
    }
    const addr = parseUpstream(to);
    if (addr) {
      upstreams.push(addr);
      continue;
    }
    // Not an address: a resolv.conf-style file, relative to the Corefile's directory.
    const file = path.resolve(path.dirname(d.file), scheme === 'dns' ? to.slice(6) : to);
    let text: string;
    try {
      // A regular file of bounded size: a FIFO or device named here must not hang the setup.
      text = readCorefileText(file);
    } catch (err) {
      return fail(`forward: "${excerpt(to)}" is not an IP address or a readable file (${(err as Error).message})`);
    }
    const found = resolvConfNameservers(text);
    if (found.length === 0) fail(`forward: no nameservers found in ${file}`);
    pushAll(upstreams, found);
  }
  if (upstreams.length > MAX_UPSTREAMS) fail(`forward: more than ${MAX_UPSTREAMS} TOs configured: ${upstreams.length}`);
  return upstreams;
}

/** CoreDNS's defaults for every option. */
function defaultForward(from: string, upstreams: UpstreamAddress[]): ForwardConfig {
  return {
    from,
    upstreams,
    except: [],
    forceTcp: false,
    preferUdp: false,
    expireMs: 10_000,
    maxFails: 2,
    healthCheckMs: 500,
    healthCheckRd: true,
    healthCheckDomain: '.',
    policy: 'random',
    maxConcurrent: 0,
    maxConnectAttempts: 0,
    failfastAllUnhealthy: false,
    failover: [],
    next: [],
    nextOnNodata: false,
    readTimeoutMs: 2000,
    queryTimeoutMs: 5000,
  };
}

/** `health_check DURATION [no_rec] [domain FQDN]`. */
function healthCheckOption(cfg: ForwardConfig, o: Directive, fail: Fail): void {
  if (o.args.length === 0) fail('forward health_check: usage `health_check DURATION [no_rec] [domain FQDN]`');
  cfg.healthCheckMs = duration(o, o.args[0], 'health_check');
  cfg.healthCheckDomain = '.';
  for (let i = 1; i < o.args.length; i++) {
    const a = o.args[i]!;
    if (a === 'no_rec') cfg.healthCheckRd = false;
    else if (a === 'domain') {
      const name = o.args[++i];
      if (name === undefined) fail('forward health_check domain: missing FQDN');
      if (!/^(\.|([a-z0-9_*-]{1,63}\.)*[a-z0-9_*-]{1,63}\.?)$/i.test(name!)) fail(`forward health_check: invalid domain name ${excerpt(name!)}`);
      cfg.healthCheckDomain = name === '.' ? '.' : name!.toLowerCase().replace(/\.?$/, '.');
    } else fail(`forward health_check: unknown option ${excerpt(a)}`);
  }
}

type Fail = (reason: string) => never;

/** The on/off options: present means on, and they take no arguments. */
function flagOption(cfg: ForwardConfig, o: Directive, fail: Fail): void {
  if (o.args.length > 0) fail(`forward ${o.name} takes no arguments`);
  switch (o.name) {
    case 'force_tcp':
      cfg.forceTcp = true;
      break;
    case 'prefer_udp':
      cfg.preferUdp = true;
      break;
    case 'failfast_all_unhealthy_upstreams':
      cfg.failfastAllUnhealthy = true;
      break;
    case 'next_on_nodata':
      cfg.nextOnNodata = true;
      break;
  }
}

/** `max_fails`, `max_concurrent`, `max_connect_attempts`, `max_idle_conns`: one count each. */
function countOption(cfg: ForwardConfig, o: Directive, fail: Fail): void {
  if (o.args.length !== 1) fail(`forward ${o.name}: usage \`${o.name} ${o.name === 'max_concurrent' ? 'MAX' : 'INTEGER'}\``);
  const text = o.args[0]!;
  if (!/^\d+$/.test(text)) fail(`forward ${o.name}: "${excerpt(text)}" must be a non-negative integer`);
  const n = Number(text);
  switch (o.name) {
    case 'max_fails':
      cfg.maxFails = n;
      break;
    case 'max_concurrent':
      cfg.maxConcurrent = n;
      break;
    case 'max_connect_attempts':
      cfg.maxConnectAttempts = n;
      break;
    // max_idle_conns is checked only: each exchange here uses a socket of its own, so there is
    // no pool of idle connections to bound.
  }
}

/**
 * `expire`, `read_timeout`, `max_age`: one duration each. `max_age` is returned, to be checked
 * against `expire` once the whole block is read.
 */
function timeOption(cfg: ForwardConfig, o: Directive, fail: Fail): number | undefined {
  if (o.args.length !== 1) fail(`forward ${o.name}: usage \`${o.name} DURATION\``);
  const ms = duration(o, o.args[0], o.name);
  switch (o.name) {
    case 'expire':
      cfg.expireMs = ms;
      break;
    case 'read_timeout':
      if (ms <= 0) fail(`forward read_timeout must be positive: ${excerpt(o.args[0]!)}`);
      cfg.readTimeoutMs = ms;
      break;
    case 'max_age':
      // Like expire and max_idle_conns, checked as CoreDNS does: each exchange here uses a
      // socket of its own, so there is no pooled connection whose age they would bound.
      return ms;
  }
  return undefined;
}

/** `policy random|round_robin|sequential`. */
function policyOption(cfg: ForwardConfig, o: Directive, fail: Fail): void {
  if (o.args.length !== 1) fail('forward policy: usage `policy random|round_robin|sequential`');
  if (o.args[0] !== 'random' && o.args[0] !== 'round_robin' && o.args[0] !== 'sequential') fail(`forward: unknown policy '${excerpt(o.args[0]!)}'`);
  cfg.policy = o.args[0] as Policy;
}

/** One option line of a forward block into `cfg`; `max_age` is returned, checked against expire at the end. */
function forwardOption(cfg: ForwardConfig, o: Directive): number | undefined {
  const fail = (reason: string): never => {
    throw new CorefileError(o.file, o.line, reason);
  };
  switch (o.name) {
    case 'force_tcp':
    case 'prefer_udp':
    case 'failfast_all_unhealthy_upstreams':
    case 'next_on_nodata':
      flagOption(cfg, o, fail);
      break;
    case 'max_fails':
    case 'max_concurrent':
    case 'max_connect_attempts':
    case 'max_idle_conns':
      countOption(cfg, o, fail);
      break;
    case 'expire':
    case 'read_timeout':
    case 'max_age':
      return timeOption(cfg, o, fail);
    case 'except':
      if (o.args.length === 0) fail('forward except: name at least one domain');
      for (const a of o.args) pushAll(cfg.except, zoneOf(a, o, 'except name'));
      break;
    case 'health_check':
      healthCheckOption(cfg, o, fail);
      break;
    case 'policy':
      policyOption(cfg, o, fail);
      break;
    case 'failover':
      cfg.failover = rcodeArgs(o);
      break;
    case 'next':
      cfg.next = rcodeArgs(o);
      break;
    default:
      if (UNSUPPORTED.includes(o.name)) fail(`forward ${o.name}: DNS-over-TLS/HTTPS and hostname upstreams are not supported by clusterdns`);
      if (o.name === 'source_address') fail('forward source_address is not supported: upstream queries leave from the address the system picks');
      fail(`unknown forward option "${excerpt(o.name)}"; valid options: ${OPTIONS.join(', ')}`);
  }
  return undefined;
}

export function parseForward(d: Directive, _blockZones: readonly string[]): ForwardConfig {
  if (d.args.length < 2) throw new CorefileError(d.file, d.line, 'forward needs FROM and at least one TO, e.g. `forward . 127.0.0.1:1053` or `forward . /etc/resolv.conf`');
  // CoreDNS uses only the first zone a CIDR FROM expands to.
  const from = zoneOf(d.args[0]!, d, 'FROM')[0]!;
  const cfg = defaultForward(from, readUpstreams(d));
  let maxAge: { ms: number; o: Directive } | undefined;
  forEachOption(d.block, (o) => {
    const ms = forwardOption(cfg, o);
    if (ms !== undefined) maxAge = { ms, o };
  });
  if (maxAge && maxAge.ms > 0 && maxAge.ms < cfg.expireMs) {
    throw new CorefileError(d.file, maxAge.o.line, `forward max_age (${excerpt(d.block!.find((o) => o.name === 'max_age')!.args[0]!)}) must not be less than expire`);
  }
  return cfg;
}

function logUpstreams(ctx: BlockContext, cfg: ForwardConfig): void {
  ctx.log.info({ plugin: 'forward', from: cfg.from, to: cfg.upstreams.map((u) => u.label), policy: cfg.policy, except: cfg.except }, 'forward upstreams');
}

export const forwardPlugin: PluginDefinition = {
  name: 'forward',
  setup(d, ctx) {
    const cfg = parseForward(d, ctx.zones);
    logUpstreams(ctx, cfg);
    return new ForwardPlugin(cfg);
  },
  setupAll(directives, ctx) {
    // Parse every line first, so that a bad one leaves no upstream health checks running.
    const cfgs = directives.map((d) => parseForward(d, ctx.zones));
    for (const cfg of cfgs) logUpstreams(ctx, cfg);
    return new ForwardChain(cfgs.map((cfg) => new ForwardPlugin(cfg)));
  },
};
