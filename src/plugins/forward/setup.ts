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
import type { ForwardConfig, Policy, UpstreamAddress } from './config.js';

/** CoreDNS's limit on upstreams per forward. */
const MAX_UPSTREAMS = 15;

function zoneOf(text: string, r: OptionReader, what: string): string[] {
  try {
    return parseServerKey(text).map((k) => k.zone);
  } catch (err) {
    r.fail(`bad ${what} "${excerpt(text)}": ${(err as Error).message}`);
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
    const scheme = /^([a-z0-9+.-]+):\/\//i.exec(to)?.[1]?.toLowerCase();
    if (scheme !== undefined && scheme !== 'dns') {
      r.fail(`'${scheme}' is not supported as a destination protocol here (${excerpt(to)}); clusterdns forwards plain DNS (dns:// or no prefix)`);
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

/** CoreDNS options for transports clusterdns does not speak (DoT, DoH, hostname upstreams). */
const NO_TRANSPORT = 'DNS-over-TLS/HTTPS and hostname upstreams are not supported by clusterdns';

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
      // max_idle_conns and max_age are checked only, as CoreDNS does: each exchange here uses a
      // socket of its own, so there is no pool of idle connections they would bound.
      max_idle_conns: count(() => undefined),
      max_age: time((ms, o) => {
        maxAge = { ms, o };
      }),
      read_timeout: (o) => {
        cfg.readTimeoutMs = o.arity(1, 1, 'read_timeout DURATION', 'read_timeout 2s').duration(0, '', { positive: true, examples: '500ms or 2s' });
      },
    },
    {
      unsupported: {
        tls: NO_TRANSPORT,
        tls_servername: NO_TRANSPORT,
        doh_method: NO_TRANSPORT,
        resolver: NO_TRANSPORT,
        source_address: 'upstream queries leave from the address the system picks',
      },
    },
  );
  if (maxAge && maxAge.ms > 0 && maxAge.ms < cfg.expireMs) maxAge.o.fail(`"${excerpt(maxAge.o.arg(0)!)}" must not be less than expire`);
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
    return new ForwardPlugin(cfg, ctx.metrics);
  },
  setupAll(directives, ctx) {
    // Parse every line first, so that a bad one leaves no upstream health checks running.
    const cfgs = directives.map((d) => parseForward(d, ctx.zones));
    for (const cfg of cfgs) logUpstreams(ctx, cfg);
    return new ForwardChain(cfgs.map((cfg) => new ForwardPlugin(cfg, ctx.metrics)));
  },
};
