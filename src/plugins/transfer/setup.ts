// `transfer [ZONE...] { to ADDRESS...; source IP }` -> a validated TransferConfig, following CoreDNS's
// plugin/transfer/setup.go: `to` is required, ADDRESS is `*`, an IP, IP:port or a CIDR network.
import { isIP } from 'node:net';
import type { Directive } from '../../chain/corefile.js';
import { excerpt } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { coreDnsOrder, type PluginDefinition } from '../../chain/registry.js';
import { isTransferer, type Transferer } from '../../chain/plugin.js';
import { canonicalIp, parseCidr } from '../../pkg/ip.js';
import { TransferPlugin } from './plugin.js';
import type { TransferStanza, TransferTarget } from './config.js';

function parseTarget(raw: string, fail: (reason: string) => never): TransferTarget {
  if (raw === '*') return { kind: 'any' };
  const slash = raw.indexOf('/');
  if (slash >= 0) {
    // Go's net.ParseCIDR takes leading zeros in the prefix length.
    const bits = raw.slice(slash + 1);
    const cidr = /^\d+$/.test(bits) ? parseCidr(`${raw.slice(0, slash)}/${Number(bits)}`) : undefined;
    if (!cidr) fail(`"${excerpt(raw)}" is not a valid CIDR network`);
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
  if (!ip) fail(`"${excerpt(raw)}" is not an IP address, IP:port, CIDR network or *`);
  return { kind: 'ip', ip: ip! };
}

export function parseTransfer(d: Directive, blockZones: readonly string[]): TransferStanza {
  const r: OptionReader = OptionReader.of(d);
  // Zones normalised as CoreDNS's OriginsFromArgsOrServerBlock (a CIDR means its reverse zones).
  const zones = r.zones(0, blockZones);
  const to: TransferTarget[] = [];
  let source: string | undefined;
  r.block({
    to: (o) => {
      o.arity(1, Infinity, 'to ADDRESS...', 'to 10.0.0.2 192.0.2.0/24');
      for (const a of o.args) to.push(parseTarget(a, (reason) => o.fail(reason)));
    },
    source: (o) => {
      o.arity(1, 1, 'source ADDRESS', 'source 10.0.0.1');
      if (source !== undefined) o.fail('source already specified');
      if (isIP(o.arg(0)!) === 0) o.fail(`"${excerpt(o.arg(0)!)}" is not an IP address`);
      source = o.arg(0)!;
    },
  });
  if (to.length === 0) r.fail("'to' is required, e.g. transfer { to * } or transfer { to 10.0.0.2 }");
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
