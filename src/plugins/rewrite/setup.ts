// `rewrite [continue|stop] name [exact|prefix|suffix|substring|regex] FROM TO [answer ...]`, on one
// line or as a block whose lines are joined into one rule (CoreDNS's rewrite/setup.go).
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { RewritePlugin } from './plugin.js';
import { parseRule, RuleError, type NameRule } from './rules.js';

/** The rule of one `rewrite` directive, errors with its file and line. */
function parseRewriteDirective(d: Directive): NameRule {
  const r = OptionReader.of(d);
  const args = [...r.args];
  // Fewer than two arguments on the line: the rule is written in the block, all lines joined.
  if (args.length < 2) for (const line of d.block ?? []) args.push(line.name, ...line.args);
  else if (d.block && d.block.length > 0) r.fail('a rule is written on the line or in the block, not both');
  try {
    return parseRule(args);
  } catch (err) {
    if (err instanceof RuleError) r.fail(err.message);
    throw err;
  }
}

/**
 * Every `rewrite` directive of a block, in Corefile order. CoreDNS allows several per block; the
 * registry builds one plugin per name, so this is what a registry that passes all occurrences
 * would call (see README: "Several rules").
 */
function rewriteFromDirectives(ds: readonly Directive[], log: { error(obj: object, msg: string): void }): RewritePlugin {
  return new RewritePlugin(ds.map(parseRewriteDirective), log);
}

export const rewritePlugin: PluginDefinition = {
  name: 'rewrite',
  setup(d, ctx) {
    return rewriteFromDirectives([d], ctx.log.child({ plugin: 'rewrite' }));
  },
  // Several rewrite lines in one block are one rule list, applied in order (as CoreDNS).
  setupAll(ds, ctx) {
    return rewriteFromDirectives(ds, ctx.log.child({ plugin: 'rewrite' }));
  },
};
