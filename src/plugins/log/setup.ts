// `log [NAMES...] [FORMAT] { class CLASSES... }` -> a LogConfig (rules in Corefile order), as
// CoreDNS's plugin/log/setup.go: the common log format by default, every response class.
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { COMBINED_LOG_FORMAT, COMMON_LOG_FORMAT } from './format.js';
import { LogPlugin } from './plugin.js';
import { fqdn } from '../../pkg/names.js';
import type { LogRule, ResponseClass } from './config.js';

const CLASSES: readonly ResponseClass[] = ['success', 'denial', 'error', 'all'];

const lowerFqdn = (n: string): string => fqdn(n).toLowerCase();

/** CoreDNS's logParse for one `log` line. */
function parseLog(d: Directive): LogRule[] {
  let args = [...d.args];
  let format = COMMON_LOG_FORMAT;
  let names: string[];
  if (args.length === 0) names = ['.'];
  else if (args.length === 1) names = [args[0]!];
  else {
    const last = args[args.length - 1]!;
    if (last.includes('{')) {
      // As CoreDNS: the names stand for their formats anywhere in the format string.
      format = last.replaceAll('{common}', COMMON_LOG_FORMAT).replaceAll('{combined}', COMBINED_LOG_FORMAT);
      args = args.slice(0, -1);
    }
    names = args;
  }
  const classes = parseClasses(OptionReader.of(d));
  return names.map((n) => ({ nameScope: n === '.' ? '.' : lowerFqdn(n), format, classes }));
}

/** The `class` lines of a log block, adding up; `all` when there are none. */
function parseClasses(r: OptionReader): Set<ResponseClass> {
  const classes = new Set<ResponseClass>();
  r.block({
    class: (o) => {
      o.arity(1, Infinity, 'class success|denial|error|all...');
      for (let i = 0; i < o.count; i++) classes.add(o.choice(i, 'class', CLASSES));
    },
  });
  if (classes.size === 0) classes.add('all');
  return classes;
}

export const logPlugin: PluginDefinition = {
  name: 'log',
  setup(d, ctx) {
    return logPlugin.setupAll!([d], ctx);
  },
  // A block may have several `log` lines; their rules add up in order, as in CoreDNS.
  setupAll(directives, ctx) {
    const plugin = new LogPlugin({ rules: directives.flatMap((d) => parseLog(d)) }, ctx.keys, ctx.log.child({ plugin: 'log' }));
    ctx.observe(plugin.observe);
    return plugin;
  },
};
