// `forward FROM TO... { options }` -> a validated ForwardConfig, following CoreDNS's
// plugin/forward/setup.go (parseStanza, parseBlock) and plugin/pkg/parse/host.go (HostPortOrFile);
// and the registration, one ForwardPlugin (with its upstreams' health checks) per line.
import path from 'node:path';
import { isIP } from 'node:net';
import type { Directive } from '../../chain/corefile.js';
import { excerpt, readCorefileText } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { parseServerKey } from '../../chain/corefile-keys.js';
import type { BlockContext, PluginDefinition } from '../../chain/registry.js';
import { Rcode, rcodeFromString } from '../../pkg/rcode.js';
import { ForwardChain, ForwardPlugin } from './plugin.js';
import { pushAll } from '../../pkg/arrays.js';
import { isHostPortError, splitHostPort } from '../../pkg/hostport.js';
import type { ForwardConfig, Policy, Transport, UpstreamAddress } from './config.js';
import { tlsOption } from './tls-setup.js';

/** CoreDNS's limit on upstreams per forward. */
const MAX_UPSTREAMS = 15;

function zoneOf(text: string, r: OptionReader, what: string): string[] {
  try {
    return parseServerKey(text).map((k) => k.zone);
  } catch (err) {
    r.fail(`bad ${what} "${excerpt(text)}": ${(err as Error).message}`);
  }
}

/**
 * CoreDNS's splitZone: `IP%ZONE`, `IP%ZONE:PORT` and `[IP%ZONE]:PORT` without the zone, and the
 * zone (an IPv6 zone for dns://, the TLS server name for tls://).
 */
function splitZone(text: string): { addr: string; zone?: string } {
  const at = text.lastIndexOf('%');
  if (at < 0) return { addr: text };
  let addr = text.slice(0, at);
  if (addr.startsWith('[')) addr += ']';
  let zone = text.slice(at + 1);
  const colon = zone.lastIndexOf(':');
  if (colon >= 0) {
    addr += zone.slice(colon);
    zone = zone.slice(0, colon);
  }
  // CoreDNS keeps the `]` of `[IP%ZONE]` without a port in the zone; it is no part of a name.
  zone = zone.replace(/\]$/, '');
  return zone === '' ? { addr } : { addr, zone };
}

const SCHEME = /^([a-z0-9+.-]+):\/\//i;

/** The transport a TO names (lowercased scheme), undefined without `scheme://`. */
function schemeOf(text: string): string | undefined {
  return SCHEME.exec(text)?.[1]?.toLowerCase();
}

/**
 * `IP`, `IP:port`, `[IPv6]:port`, with `dns://` or none (port 53) or `tls://` (port 853, and
 * `IP%NAME` for this upstream's TLS server name); undefined when it is not an address.
 */
export function parseUpstream(text: string): UpstreamAddress | undefined {
  const scheme = schemeOf(text);
  const transport: Transport | undefined = scheme === undefined || scheme === 'dns' ? 'dns' : scheme === 'tls' ? 'tls' : undefined;
  if (transport === undefined) return undefined;
  const { addr, zone } = splitZone(scheme === undefined ? text : text.slice(scheme.length + 3));
  const a = splitHostPort(addr, { host: 'ip', defaultPort: transport === 'tls' ? 853 : 53 });
  if (isHostPortError(a)) return undefined;
  const host = a.host.replace(/%.*$/, '');
  const label = isIP(host) === 6 ? `[${host}]:${a.port}` : `${host}:${a.port}`;
  return transport === 'tls' && zone !== undefined ? { host, port: a.port, label, transport, servername: zone } : { host, port: a.port, label, transport };
}

/** Nameservers of a resolv.conf (miekg/dns ClientConfigFromFile: `nameserver` lines, port 53). */
export function resolvConfNameservers(text: string): UpstreamAddress[] {
  const out: UpstreamAddress[] = [];
  for (const line of text.split(/\r?\n/)) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== 'nameserver' || words.length < 2) continue;
    const host = words[1]!.replace(/%.*$/, '');
    if (isIP(host) !== 0) out.push({ host, port: 53, label: isIP(host) === 6 ? `[${host}]:53` : `${host}:53`, transport: 'dns' });
  }
  return out;
}

function rcodeArgs(o: OptionReader): number[] {
  o.arity(1, Infinity, `${o.name} RCODE...`, `${o.name} SERVFAIL`);
  return o.args.map((a) => {
    const code = rcodeFromString(a);
    if (code === undefined) o.fail(`unknown RCODE "${excerpt(a)}"; write e.g. SERVFAIL or REFUSED`);
    if (code === Rcode.NOERROR && o.name === 'failover') o.fail('NOERROR cannot be used');
    return code;
  });
}

/** The TOs of a forward line: addresses, or resolv.conf-style files relative to the Corefile. */
function readUpstreams(r: OptionReader): UpstreamAddress[] {
  const d = r.line;
  const upstreams: UpstreamAddress[] = [];
  for (const to of r.rest(1)) {
    const scheme = schemeOf(to);
    if (scheme === 'https') {
      r.fail(`'https' (DNS over HTTPS) is not supported as a destination protocol by clusterdns (${excerpt(to)}); use tls:// (DNS over TLS) or dns://`);
    }
    if (scheme !== undefined && scheme !== 'dns' && scheme !== 'tls') {
      r.fail(`'${scheme}' is not supported as a destination protocol here (${excerpt(to)}); forward speaks dns:// (or no prefix) and tls://`);
    }
    const addr = parseUpstream(to);
    if (addr) {
      upstreams.push(addr);
      continue;
    }
    // CoreDNS would resolve a host name here; clusterdns takes addresses only after tls://.
    if (scheme === 'tls') r.fail(`"${excerpt(to)}" is not an IP address; write tls://IP, tls://IP:PORT or tls://IP%SERVERNAME:PORT`);
    // Not an address: a resolv.conf-style file, relative to the Corefile's directory.
    const file = path.resolve(path.dirname(d.file), scheme === 'dns' ? to.slice(6) : to);
    let text: string;
    try {
      // A regular file of bounded size: a FIFO or device named here must not hang the setup.
      text = readCorefileText(file);
    } catch (err) {
      return r.fail(`"${excerpt(to)}" is not an IP address or a readable file (${(err as Error).message})`);
    }
    const found = resolvConfNameservers(text);
    if (found.length === 0) r.fail(`no nameservers found in ${file}`);
    pushAll(upstreams, found);
  }
  if (upstreams.length > MAX_UPSTREAMS) r.fail(`more than ${MAX_UPSTREAMS} TOs configured: ${upstreams.length}`);
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
    maxAgeMs: 0,
    maxIdleConns: 0,
    tls: {},
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
function healthCheckOption(cfg: ForwardConfig, o: OptionReader): void {
  o.arity(1, 4, 'health_check DURATION [no_rec] [domain FQDN]', 'health_check 5s no_rec');
  cfg.healthCheckMs = o.duration(0, 'DURATION');
  cfg.healthCheckDomain = '.';
  for (let i = 1; i < o.count; i++) {
    const a = o.arg(i)!;
    if (a === 'no_rec') cfg.healthCheckRd = false;
    else if (a === 'domain') {
      const name = o.arg(++i);
      if (name === undefined) o.fail('missing FQDN after domain');
      if (!/^(\.|([a-z0-9_*-]{1,63}\.)*[a-z0-9_*-]{1,63}\.?)$/i.test(name)) o.fail(`invalid domain name "${excerpt(name)}"`);
      cfg.healthCheckDomain = name === '.' ? '.' : name.toLowerCase().replace(/\.?$/, '.');
    } else o.fail(`unknown option "${excerpt(a)}"; write no_rec or domain FQDN`);
  }
}

/** An on/off option: present means on, and it takes no arguments. */
function flag(set: () => void): (o: OptionReader) => void {
  return (o) => {
    o.noArgs();
    set();
  };
}

/** `max_fails`, `max_concurrent`, `max_connect_attempts`, `max_idle_conns`: one count each. */
function count(set: (n: number) => void): (o: OptionReader) => void {
  return (o) => set(o.arity(1, 1, `${o.name} ${o.name === 'max_concurrent' ? 'MAX' : 'INTEGER'}`).int(0, 'value', { min: 0 }));
}

/** `expire`, `read_timeout`, `max_age`: one duration each. */
function time(set: (ms: number, o: OptionReader) => void): (o: OptionReader) => void {
  return (o) => set(o.arity(1, 1, `${o.name} DURATION`, `${o.name} 10s`).duration(0, ''), o);
}

/**
 * The TLS settings of each tls:// upstream, as CoreDNS's parseStanza hands them out: the forward's
 * `tls_servername`, or the upstream's own `%NAME` (never both), else none (the IP address is verified).
 */
function applyServernames(r: OptionReader, cfg: ForwardConfig): void {
  const shared = cfg.tls.servername;
  for (const u of cfg.upstreams) {
    if (u.transport !== 'tls' || u.servername === undefined || shared === undefined) continue;
    r.fail(`both forward ('${excerpt(shared)}') and proxy level ('${excerpt(u.servername)}') TLS servernames are set for upstream proxy 'tls://${u.label}'`);
  }
}

export function parseForward(d: Directive, _blockZones: readonly string[]): ForwardConfig {
  const r = OptionReader.of(d).arity(2, Infinity, 'forward FROM TO...', 'forward . 127.0.0.1:1053');
  // CoreDNS uses only the first zone a CIDR FROM expands to.
  const from = zoneOf(r.arg(0)!, r, 'FROM')[0]!;
  const cfg = defaultForward(from, readUpstreams(r));
  let maxAge: { ms: number; o: OptionReader } | undefined;
  r.block(
    {
      except: (o) => {
        o.arity(1, Infinity, 'except DOMAIN...', 'except internal.example.org');
        for (const a of o.args) pushAll(cfg.except, zoneOf(a, o, 'name'));
      },
      force_tcp: flag(() => {
        cfg.forceTcp = true;
      }),
      prefer_udp: flag(() => {
        cfg.preferUdp = true;
      }),
      expire: time((ms) => {
        cfg.expireMs = ms;
      }),
      max_fails: count((n) => {
        cfg.maxFails = n;
      }),
      health_check: (o) => healthCheckOption(cfg, o),
      policy: (o) => {
        cfg.policy = o.arity(1, 1, 'policy random|round_robin|sequential').choice<Policy>(0, 'policy', ['random', 'round_robin', 'sequential']);
      },
      max_concurrent: count((n) => {
        cfg.maxConcurrent = n;
      }),
      max_connect_attempts: count((n) => {
        cfg.maxConnectAttempts = n;
      }),
      failfast_all_unhealthy_upstreams: flag(() => {
        cfg.failfastAllUnhealthy = true;
      }),
      failover: (o) => {
        cfg.failover = rcodeArgs(o);
      },
      next: (o) => {
        cfg.next = rcodeArgs(o);
      },
      next_on_nodata: flag(() => {
        cfg.nextOnNodata = true;
      }),
      // max_idle_conns and max_age bound the cached tls:// connections; plain DNS exchanges
      // each use a socket of their own, so there they have no effect.
      max_idle_conns: count((n) => {
        cfg.maxIdleConns = n;
      }),
      max_age: time((ms, o) => {
        maxAge = { ms, o };
        cfg.maxAgeMs = ms;
      }),
      tls: (o) => {
        cfg.tls = tlsOption(o, cfg.tls.servername);
      },
      tls_servername: (o) => {
        cfg.tls = { ...cfg.tls, servername: o.arity(1, 1, 'tls_servername NAME', 'tls_servername dns.quad9.net').arg(0)! };
      },
      read_timeout: (o) => {
        cfg.readTimeoutMs = o.arity(1, 1, 'read_timeout DURATION', 'read_timeout 2s').duration(0, '', { positive: true, examples: '500ms or 2s' });
      },
    },
    {
      unsupported: {
        doh_method: 'DNS over HTTPS upstreams are not supported by clusterdns (tls:// upstreams are)',
        resolver: 'host name upstreams are not supported by clusterdns: write IP addresses',
        source_address: 'upstream queries leave from the address the system picks',
      },
    },
  );
  if (maxAge && maxAge.ms > 0 && maxAge.ms < cfg.expireMs) maxAge.o.fail(`"${excerpt(maxAge.o.arg(0)!)}" must not be less than expire`);
  applyServernames(r, cfg);
  return cfg;
}

function logUpstreams(ctx: BlockContext, cfg: ForwardConfig): void {
  ctx.log.info(
    { plugin: 'forward', from: cfg.from, to: cfg.upstreams.map((u) => `${u.transport}://${u.label}`), policy: cfg.policy, except: cfg.except },
    'forward upstreams',
  );
}

export const forwardPlugin: PluginDefinition = {
  name: 'forward',
  setup(d, ctx) {
    const cfg = parseForward(d, ctx.zones);
    logUpstreams(ctx, cfg);
    return new ForwardPlugin(cfg, ctx.metrics, ctx.log);
  },
  setupAll(directives, ctx) {
    // Parse every line first, so that a bad one leaves no upstream health checks running.
    const cfgs = directives.map((d) => parseForward(d, ctx.zones));
    for (const cfg of cfgs) logUpstreams(ctx, cfg);
    return new ForwardChain(cfgs.map((cfg) => new ForwardPlugin(cfg, ctx.metrics, ctx.log)));
  },
};
