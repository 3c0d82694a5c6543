// `bind ADDRESS... [{ except ADDRESS... }]`: the addresses a server block listens on.
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError } from '../../chain/corefile.js';

function interfaceAddresses(name: string): string[] | undefined {
  const iface = networkInterfaces()[name];
  return iface?.map((a) => (a.family === 'IPv6' && a.scopeid ? `${a.address}%${name}` : a.address));
}

export const bindPlugin: PluginDefinition = {
  name: 'bind',
  setup(d, ctx) {
    if (d.args.length === 0) throw new CorefileError(d.file, d.line, 'bind needs at least one address or interface name, e.g. `bind 127.0.0.1 ::1`');
    const addresses: string[] = [];
    for (const arg of d.args) {
      if (isIP(arg)) addresses.push(arg);
      else {
        const fromIface = interfaceAddresses(arg);
        if (!fromIface) throw new CorefileError(d.file, d.line, `bind: "${arg}" is neither an IP address nor a network interface of this machine`);
        addresses.push(...fromIface);
      }
    }
    const except = new Set<string>();
    for (const opt of d.block ?? []) {
      if (opt.name !== 'except') throw new CorefileError(opt.file, opt.line, `unknown bind option "${opt.name}"; the only option is except`);
      for (const a of opt.args) {
        if (!isIP(a)) throw new CorefileError(opt.file, opt.line, `bind except: "${a}" is not an IP address`);
        except.add(a);
      }
    }
    ctx.bindAddresses = [...new Set(addresses.filter((a) => !except.has(a)))];
    if (ctx.bindAddresses.length === 0) throw new CorefileError(d.file, d.line, 'bind: every address is excluded by except; nothing to listen on');
    return undefined;
  },
};
