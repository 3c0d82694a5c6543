// `autopath [ZONES...] RESOLV-CONF` or `autopath [ZONES...] @PLUGIN`.
import path from 'node:path';
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import { CorefileError, readCorefileText } from '../../chain/corefile.js';
import { isSearchPathProvider } from '../../chain/plugin.js';
import { zoneArgs } from '../../chain/zones.js';
import { isSubdomain } from '../../pkg/names.js';
import { AutopathPlugin } from './plugin.js';
import { parseResolvConf } from '../../resolver/resolvconf.js';

export const autopathPlugin: PluginDefinition = {
  name: 'autopath',
  // CoreDNS reads every autopath line of a block and the last one wins; each is still checked.
  setupAll(directives, ctx) {
    let last: Plugin | undefined;
    for (const d of directives) last = autopathPlugin.setup(d, ctx);
    return last;
  },
  setup(d, ctx) {
    const args = [...d.args];
    const source = args.pop();
    if (!source) throw new CorefileError(d.file, d.line, 'autopath needs a resolv.conf path or @PLUGIN, e.g. `autopath @kubernetes`');
    if (d.block && d.block.length > 0) throw new CorefileError(d.file, d.line, 'autopath takes no option block');
    const zones = args.length > 0 ? zoneArgs(args, d) : [...ctx.zones];
    // CoreDNS accepts such a zone (OriginsFromArgsOrServerBlock); no query for it reaches this block.
    for (const z of zones) {
      if (!ctx.zones.some((b) => isSubdomain(z, b))) ctx.log.warn({ file: d.file, line: d.line }, `autopath zone ${z} is not inside the server block's zones, so autopath never sees its queries`);
    }
    if (source.startsWith('@')) {
      const name = source.slice(1);
      return new AutopathPlugin(zones, (req) => {
        const provider = ctx.plugin(name);
        return isSearchPathProvider(provider) ? provider.searchPath(req) : undefined;
      });
    }
    const file = path.resolve(path.dirname(d.file), source);
    let text: string;
    try {
      // A regular file of bounded size: a FIFO or device named here must not hang the setup.
      text = readCorefileText(file);
    } catch (err) {
      throw new CorefileError(d.file, d.line, `autopath: cannot read ${file}: ${(err as Error).message}`);
    }
    // The search list as glibc reads it (last `search`/`domain` line wins), fully qualified.
    const search = [...parseResolvConf(text, 'glibc').search.map((d) => (d.endsWith('.') ? d : `${d}.`).toLowerCase()), ''];
    return new AutopathPlugin(zones, () => search);
  },
};
