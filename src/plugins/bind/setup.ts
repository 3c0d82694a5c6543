// `bind ADDRESS... [{ except ADDRESS... }]` -> a BindConfig, the addresses a server block listens
// on, as CoreDNS's plugin/bind/setup.go reads them (IP addresses or interface names).
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt, type Directive } from '../../chain/corefile.js';
import { pushAll } from '../../pkg/arrays.js';

function interfaceAddresses(name: string): string[] | undefined {
  const iface = networkInterfaces()[name];
  return iface?.map((a) => (a.family === 'IPv6' && a.scopeid ? `${a.address}%${name}` : a.address));
}

/** IPs of each argument: an IP address, or every address of a network interface. */
function listIP(d: Directive, args: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (isIP(arg)) out.push(arg);
    else {
      const fromIface = interfaceAddresses(arg);
      if (!fromIface) throw new CorefileError(d.file, d.line, `bind: "${excerpt(arg)}" is neither an IP address nor a network interface of this machine`);
      pushAll(out, fromIface);
    }
  }
  return out;
}

interface BindConfig {
  /** Addresses the block listens on, deduplicated, in the order first named; never empty. */
  addresses: string[];
}

/** Every `bind` line of a block adds its addresses, as CoreDNS consolidates them. */
function parseBind(directives: readonly Directive[]): BindConfig {
  const all: string[] = [];
  for (const d of directives) {
    if (d.args.length === 0) throw new CorefileError(d.file, d.line, 'bind needs at least one address or interface name, e.g. `bind 127.0.0.1 ::1`');
    const addresses = listIP(d, d.args);
    const except = exceptAddresses(d.block);
    pushAll(all, addresses.filter((a) => !except.has(a)));
  }
  const addresses = [...new Set(all)];
  const last = directives[directives.length - 1]!;
  if (addresses.length === 0) throw new CorefileError(last.file, last.line, 'bind: every address is excluded by except; nothing to listen on');
  return { addresses };
}

/** The addresses of a bind line's `except` options. */
function exceptAddresses(options: readonly Directive[] | undefined): Set<string> {
  const except = new Set<string>();
  for (const opt of options ?? []) {
    if (opt.name !== 'except') throw new CorefileError(opt.file, opt.line, `unknown bind option "${excerpt(opt.name)}"; the only option is except`);
    if (opt.args.length === 0) throw new CorefileError(opt.file, opt.line, 'bind except needs at least one address or interface name');
    for (const a of listIP(opt, opt.args)) except.add(a);
  }
  return except;
}

// bind serves no query: it only sets where the block's listeners open, so it puts no plugin in
// the chain and has no plugin.ts.
export const bindPlugin: PluginDefinition = {
  name: 'bind',
  setup(d, ctx) {
    return bindPlugin.setupAll!([d], ctx);
  },
  setupAll(directives, ctx) {
    ctx.bindAddresses = parseBind(directives).addresses;
    return undefined;
  },
};
