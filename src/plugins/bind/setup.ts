// `bind ADDRESS... [{ except ADDRESS... }]`: the addresses a server block listens on.
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt, type Directive } from '../../chain/corefile.js';

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
      out.push(...fromIface);
    }
  }
  return out;
}

export const bindPlugin: PluginDefinition = {
  name: 'bind',
  setup(d, ctx) {
    return bindPlugin.setupAll!([d], ctx);
  },
  // Every `bind` line of a block adds its addresses, as CoreDNS consolidates them.
  setupAll(directives, ctx) {
    const all: string[] = [];
    for (const d of directives) {
      if (d.args.length === 0) throw new CorefileError(d.file, d.line, 'bind needs at least one address or interface name, e.g. `bind 127.0.0.1 ::1`');
      const addresses = listIP(d, d.args);
      const except = new Set<string>();
      for (const opt of d.block ?? []) {
        if (opt.name !== 'except') throw new CorefileError(opt.file, opt.line, `unknown bind option "${excerpt(opt.name)}"; the only option is except`);
        if (opt.args.length === 0) throw new CorefileError(opt.file, opt.line, 'bind except needs at least one address or interface name');
        for (const a of listIP(opt, opt.args)) except.add(a);
      }
      all.push(...addresses.filter((a) => !except.has(a)));
    }
    ctx.bindAddresses = [...new Set(all)];
    const last = directives[directives.length - 1]!;
    if (ctx.bindAddresses.length === 0) throw new CorefileError(last.file, last.line, 'bind: every address is excluded by except; nothing to listen on');
    return undefined;
  },
};
