// `autopath [ZONES...] RESOLV-CONF` or `autopath [ZONES...] @PLUGIN` -> a validated
// AutopathConfig (CoreDNS's plugin/autopath/setup.go), and the registration.
import path from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import { readCorefileText } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { isSearchPathProvider } from '../../chain/plugin.js';
import { isSubdomain } from '../../pkg/names.js';
import { parseResolvConf } from '../../pkg/resolvconf.js';
import { AutopathPlugin } from './plugin.js';

type AutopathConfig = {
  /** Zones whose queries autopath completes, lowercased and fully qualified. */
  zones: string[];
} & AutopathSource;

type AutopathSource =
  /** `@PLUGIN`: the plugin (a SearchPathProvider) that knows each client's search path. */
  | { plugin: string }
  /** RESOLV-CONF: one search path for every client, fully qualified, ending with '' (the bare name). */
  | { search: string[] };

function parseAutopath(d: Directive, blockZones: readonly string[]): AutopathConfig {
  const r: OptionReader = OptionReader.of(d).arity(1, Infinity, 'autopath [ZONES...] RESOLV-CONF|@PLUGIN', 'autopath @kubernetes').noBlock();
  const source = r.arg(r.count - 1)!;
  if (source === '') r.fail('RESOLV-CONF is empty: write a resolv.conf path or @PLUGIN, e.g. `autopath @kubernetes`');
  const zones = r.zones(0, blockZones, r.count - 1);
  if (source.startsWith('@')) return { zones, plugin: source.slice(1) };
  const file = path.resolve(path.dirname(d.file), source);
  let text: string;
  try {
    // A regular file of bounded size: a FIFO or device named here must not hang the setup.
    text = readCorefileText(file);
  } catch (err) {
    r.fail(`cannot read ${file}: ${(err as Error).message}`);
  }
  // The search list as glibc reads it (last `search`/`domain` line wins), fully qualified.
  const search = [...parseResolvConf(text, 'glibc').search.map((s) => (s.endsWith('.') ? s : `${s}.`).toLowerCase()), ''];
  return { zones, search };
}

export const autopathPlugin: PluginDefinition = {
  name: 'autopath',
  // CoreDNS reads every autopath line of a block and the last one wins; each is still checked.
  setupAll(directives, ctx) {
    let last: Plugin | undefined;
    for (const d of directives) last = autopathPlugin.setup(d, ctx);
    return last;
  },
  setup(d, ctx) {
    const cfg = parseAutopath(d, ctx.zones);
    // CoreDNS accepts such a zone (OriginsFromArgsOrServerBlock); no query for it reaches this block.
    for (const z of cfg.zones) {
      if (!ctx.zones.some((b) => isSubdomain(z, b)))
        ctx.log.warn({ file: d.file, line: d.line }, `autopath zone ${z} is not inside the server block's zones, so autopath never sees its queries`);
    }
    if ('search' in cfg) {
      const search = cfg.search;
      return new AutopathPlugin(cfg.zones, () => search);
    }
    const name = cfg.plugin;
    return new AutopathPlugin(cfg.zones, (req) => {
      const provider = ctx.plugin(name);
      return isSearchPathProvider(provider) ? provider.searchPath(req) : undefined;
    });
  },
};
