// `transfer [ZONE...] { to ADDRESS... }` -> a validated TransferConfig, following CoreDNS's
// plugin/transfer/setup.go: `to` is required, ADDRESS is `*`, an IP, IP:port or a CIDR network.
import { isIP } from 'node:net';
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import { coreDnsOrder, type PluginDefinition } from '../../chain/registry.js';
import { isTransferer, type Transferer } from '../../chain/plugin.js';
import { fqdn } from '../../dns/names.js';
import { canonicalIp, parseIp } from '../../cluster/ip.js';
import { TransferPlugin } from './plugin.js';

export type TransferTarget =
  | { kind: 'any' }
  | { kind: 'ip'; ip: string }
  | { kind: 'cidr'; bytes: number[]; bits: number; family: 4 | 6 };

export interface TransferStanza {
  /** Lowercased, fully qualified. */
  zones: string[];
  to: TransferTarget[];
}

export interface TransferConfig {
  stanzas: TransferStanza[];
}

function bytesOf(ip: string): { bytes: number[]; family: 4 | 6 } | undefined {
  const p = parseIp(ip);
  if (!p) return undefined;
  return { bytes: [...p.bytes], family: p.family as 4 | 6 };
}

export function cidrContains(net: Extract<TransferTarget, { kind: 'cidr' }>, ip: string): boolean {
  const b = bytesOf(ip);
  if (!b || b.family !== net.family) return false;
  for (let i = 0; i < net.bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((b.bytes[byte]! & mask) !== (net.bytes[byte]! & mask)) return false;
  }
  return true;
}

function parseTarget(raw: string, fail: (reason: string) => never): TransferTarget {
  if (raw === '*') return { kind: 'any' };
  const slash = raw.indexOf('/');
  if (slash >= 0) {
    const ip = raw.slice(0, slash);
    const bits = Number(raw.slice(slash + 1));
    const b = bytesOf(ip);
    const max = b?.family === 4 ? 32 : 128;
    if (!b || !/^\d+$/.test(raw.slice(slash + 1)) || bits > max) fail(`transfer: "${raw}" in to is not a valid CIDR network`);
    return { kind: 'cidr', bytes: b!.bytes, bits, family: b!.family };
  }
  // IP, [IPv6]:port, IPv4:port (the port is accepted and ignored, as CoreDNS compares IPs only).
  let host = raw;
  const bracket = /^\[(.+)\](?::(\d+))?$/.exec(raw);
  if (bracket) host = bracket[1]!;
  else if (isIP(raw) === 0 && /^[^:]+:\d+$/.test(raw)) host = raw.slice(0, raw.lastIndexOf(':'));
  const ip = isIP(host) !== 0 ? canonicalIp(host) : undefined;
  if (!ip) fail(`transfer: "${raw}" in to is not an IP address, IP:port, CIDR network or *`);
  return { kind: 'ip', ip: ip! };
}

export function parseTransfer(d: Directive, blockZones: readonly string[]): TransferStanza {
  const fail = (reason: string, line = d.line, file = d.file): never => {
    throw new CorefileError(file, line, reason);
  };
  const zones = d.args.length > 0 ? d.args.map((z) => fqdn(z.toLowerCase())) : [...blockZones];
  const to: TransferTarget[] = [];
  for (const opt of d.block ?? []) {
    if (opt.name !== 'to') fail(`transfer: unknown property "${opt.name}"; the only option is to ADDRESS...`, opt.line, opt.file);
    if (opt.args.length === 0) fail('transfer: to needs at least one ADDRESS (an IP, IP:port, CIDR network or *)', opt.line, opt.file);
    for (const a of opt.args) to.push(parseTarget(a, (r) => fail(r, opt.line, opt.file)));
  }
  if (to.length === 0) fail("transfer: 'to' is required, e.g. transfer { to * } or transfer { to 10.0.0.2 }");
  return { zones, to };
}

export const transferPlugin: PluginDefinition = {
  name: 'transfer',
  setup(d, ctx) {
    const stanza = parseTransfer(d, ctx.zones);
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
    return new TransferPlugin({ stanzas: [stanza] }, transferers, ctx.log.child({ plugin: 'transfer' }));
  },
};
