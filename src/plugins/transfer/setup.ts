// `transfer [ZONE...] { to ADDRESS...; source IP }` -> a validated TransferConfig, following CoreDNS's
// plugin/transfer/setup.go: `to` is required, ADDRESS is `*`, an IP, IP:port or a CIDR network.
import { isIP } from 'node:net';
import type { Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import { zoneArgs } from '../../chain/zones.js';
import { coreDnsOrder, type PluginDefinition } from '../../chain/registry.js';
import { isTransferer, type Transferer } from '../../chain/plugin.js';
import { canonicalIp, cidrContains as inCidr, parseCidr, type Cidr } from '../../pkg/ip.js';
import { TransferPlugin } from './plugin.js';

type TransferTarget =
  | { kind: 'any' }
  | { kind: 'ip'; ip: string }
  | { kind: 'cidr'; cidr: Cidr };

export interface TransferStanza {
  /** Lowercased, fully qualified. */
  zones: string[];
  to: TransferTarget[];
  /**
   * `source IP`: in CoreDNS the address NOTIFY messages are sent from. clusterdns sends no
   * NOTIFY, so it is only validated, so that a CoreDNS Corefile with it still loads.
   */
  source?: string;
}

export interface TransferConfig {
  stanzas: TransferStanza[];
}

export function cidrContains(net: Extract<TransferTarget, { kind: 'cidr' }>, ip: string): boolean {
  return inCidr(net.cidr, ip);
}

function parseTarget(raw: string, fail: (reason: string) => never): TransferTarget {
  if (raw === '*') return { kind: 'any' };
  const slash = raw.indexOf('/');
  if (slash >= 0) {
    // Go's net.ParseCIDR takes leading zeros in the prefix length.
    const bits = raw.slice(slash + 1);
    const cidr = /^\d+$/.test(bits) ? parseCidr(`${raw.slice(0, slash)}/${Number(bits)}`) : undefined;
    if (!cidr) fail(`transfer: "${excerpt(raw)}" in to is not a valid CIDR network`);
    return { kind: 'cidr', cidr: cidr! };
  }
  // IP, [IPv6]:port, IPv4:port (the port is accepted and ignored, as CoreDNS compares IPs only).
  let host = raw;
  const bracket = /^\[(.+)\](?::(\d+))?$/.exec(raw);
  if (bracket) host = bracket[1]!;
  else if (isIP(raw) === 0 && /^[^:]+:\d+$/.test(raw)) host = raw.slice(0, raw.lastIndexOf(':'));
  // A link-local IPv6 address may carry its zone (fe80::1%eth0), as Node reports such clients.
  const pct = host.indexOf('%');
  const zone = pct > 0 && host.includes(':') ? host.slice(pct) : '';
  const bare = zone ? host.slice(0, pct) : host;
  const canonical = isIP(bare) !== 0 ? canonicalIp(bare) : undefined;
  const ip = canonical === undefined ? undefined : canonical + zone;
  if (!ip) fail(`transfer: "${excerpt(raw)}" in to is not an IP address, IP:port, CIDR network or *`);
  return { kind: 'ip', ip: ip! };
}

export function parseTransfer(d: Directive, blockZones: readonly string[]): TransferStanza {
  const fail = (reason: string, line = d.line, file = d.file): never => {
    throw new CorefileError(file, line, reason);
  };
  // Zones normalised as CoreDNS's OriginsFromArgsOrServerBlock (a CIDR means its reverse zones).
  const zones = d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones];
  const to: TransferTarget[] = [];
  let source: string | undefined;
  forEachOption(d.block, (opt) => {
    if (opt.name === 'source') {
      if (opt.args.length !== 1) fail('transfer: source takes one IP address', opt.line, opt.file);
      if (source !== undefined) fail('transfer: source already specified', opt.line, opt.file);
      if (isIP(opt.args[0]!) === 0) fail(`transfer: invalid source address "${excerpt(opt.args[0]!)}"`, opt.line, opt.file);
      source = opt.args[0]!;
      return;
    }
    if (opt.name !== 'to') fail(`transfer: unknown property "${excerpt(opt.name)}"; valid options: to, source`, opt.line, opt.file);
    if (opt.args.length === 0) fail('transfer: to needs at least one ADDRESS (an IP, IP:port, CIDR network or *)', opt.line, opt.file);
    for (const a of opt.args) to.push(parseTarget(a, (r) => fail(r, opt.line, opt.file)));
  });
  if (to.length === 0) fail("transfer: 'to' is required, e.g. transfer { to * } or transfer { to 10.0.0.2 }");
  return source === undefined ? { zones, to } : { zones, to, source };
}

export const transferPlugin: PluginDefinition = {
  name: 'transfer',
  setup(d, ctx) {
    return transferPlugin.setupAll!([d], ctx);
  },
  // Each `transfer` line of a block is one stanza, as in CoreDNS.
  setupAll(directives, ctx) {
    const stanzas = directives.map((d) => parseTransfer(d, ctx.zones));
    let cached: Transferer[] | undefined;
    // The block's backends are known once the block is built; CoreDNS collects them on startup.
    const transferers = (): Transferer[] => {
      if (cached) return cached;
      const found: Transferer[] = [];
      for (const name of coreDnsOrder) {
        const p = ctx.plugin(name);
        if (isTransferer(p)) found.push(p);
      }
      cached = found;
      return found;
    };
    return new TransferPlugin({ stanzas }, transferers, ctx.log.child({ plugin: 'transfer' }));
  },
};
