// `bind ADDRESS... [{ except ADDRESS... }]` -> a BindConfig, the addresses a server block listens
// on, as CoreDNS's plugin/bind/setup.go reads them (IP addresses or interface names).
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { PluginDefinition } from '../../chain/registry.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { pushAll } from '../../pkg/arrays.js';

function interfaceAddresses(name: string): string[] | undefined {
  const iface = networkInterfaces()[name];
  return iface?.map((a) => (a.family === 'IPv6' && a.scopeid ? `${a.address}%${name}` : a.address));
}

/** IPs of each argument: an IP address, or every address of a network interface. */
function listIP(r: OptionReader): string[] {
  const out: string[] = [];
  for (const arg of r.args) {
    if (isIP(arg)) out.push(arg);
    else {
      const fromIface = interfaceAddresses(arg);
      if (!fromIface) r.fail(`"${excerpt(arg)}" is neither an IP address nor a network interface of this machine`);
      pushAll(out, fromIface);
    }
  }
  return out;
}

interface BindConfig {
  addresses: string[];
}

function parseBind(directives: readonly Directive[]): BindConfig {
  const all: string[] = [];
  for (const d of directives) {
    const r = OptionReader.of(d).arity(1, Infinity, 'bind ADDRESS|INTERFACE...', 'bind 127.0.0.1 ::1');
    const addresses = listIP(r);
    const except = new Set<string>();
    r.block({
      except: (o) => {
        for (const a of listIP(o.arity(1, Infinity, 'except ADDRESS|INTERFACE...'))) except.add(a);
      },
    });
    pushAll(
      all,
      addresses.filter((a) => !except.has(a)),
    );
  }
  const addresses = [...new Set(all)];
  if (addresses.length === 0) OptionReader.of(directives[directives.length - 1]!).fail('every address is excluded by except; nothing to listen on');
  return { addresses };
}

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
