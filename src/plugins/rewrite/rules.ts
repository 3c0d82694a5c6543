// `rewrite name` rules as CoreDNS's plugin/rewrite (name.go, reverter.go): match the question name
// (lowercased, fully qualified) exactly, by prefix, suffix, substring or regular expression, rewrite
// it, and build the response rules that map the answer back to what the client asked.
import { compileRegex, type CorefileRegex } from '../../chain/regex.js';

/** Rewrites one string; returns it unchanged when it does not apply. */
type StringRewriter = (s: string) => string;

/** A response rule: what it rewrites in each record (owner name, or the name in its data). */
export interface ResponseRule {
  field: 'name' | 'value';
  rewrite: StringRewriter;
}

type MatchType = 'exact' | 'prefix' | 'suffix' | 'substring' | 'regex';

export interface NameRule {
  mode: 'stop' | 'continue';
  match: MatchType;
  from: string;
  to: string;
  /** Compiled with RE2 (Go's syntax, linear-time matching), as CoreDNS's regexp. */
  pattern?: CorefileRegex;
  /** `answer auto` (always on for exact): revert the rewrite in owner names and record data. */
  auto: boolean;
  /** Explicit `answer name` / `answer value` rules. */
  answers: ResponseRule[];
  /** The Corefile text, for logs. */
  source: string;
}

export class RuleError extends Error {}

/** {0}, {1}... in `template` replaced by the regular-expression groups of the match. */
function expand(template: string, groups: readonly (string | undefined)[]): string {
  let s = template;
  groups.forEach((g, i) => {
    s = s.split(`{${i}}`).join(g ?? '');
  });
  return s;
}

function regexRewriter(pattern: CorefileRegex, replacement: string): StringRewriter {
  return (src) => {
    const m = pattern.exec(src);
    return m ? expand(replacement, m) : src;
  };
}

/** The name itself, or a name below it, mapped onto `replacement` (CoreDNS's remapStringRewriter). */
function remapRewriter(orig: string, replacement: string): StringRewriter {
  return (src) => {
    if (src === orig) return replacement;
    if (src.endsWith(`.${orig}`)) return src.slice(0, src.length - orig.length) + replacement;
    return src;
  };
}

function suffixRewriter(suffix: string, replacement: string): StringRewriter {
  return (src) => (src.endsWith(suffix) ? src.slice(0, src.length - suffix.length) + replacement : src);
}

/** CoreDNS's plugin.Name(x).Normalize(): lowercased and fully qualified. */
function normalize(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
}

function compile(pattern: string): CorefileRegex {
  try {
    return compileRegex(pattern);
  } catch (err) {
    throw new RuleError(`invalid regex matching pattern: ${pattern}: ${(err as Error).message}`);
  }
}

function checkGroups(re: CorefileRegex, to: string, from: string): void {
  let used = 0;
  for (let i = 0; i <= 100; i++) if (to.includes(`{${i}}`)) used++;
  if (used > re.groupCount)
    throw new RuleError(`the rewrite regex pattern (${to}) uses more subexpressions than its corresponding matching regex pattern (${from})`);
}

function parseAnswers(match: string, args: readonly string[]): { auto: boolean; rules: ResponseRule[] } {
  let auto = false;
  let nameRules = 0;
  const rules: ResponseRule[] = [];
  if (args.length < 2) throw new RuleError(`invalid arguments for ${match} rule: expected answer auto, answer name FROM TO or answer value FROM TO`);
  let i = 0;
  while (i < args.length) {
    if (args[i] !== 'answer') throw new RuleError(`unexpected "${args[i]}" after the ${match} rule; answer rules start with "answer"`);
    i++;
    const kind = args[i];
    if (kind === undefined) throw new RuleError(`type missing for answer rule for ${match} rule (auto, name or value)`);
    i++;
    if (kind === 'auto') {
      auto = true;
      continue;
    }
    if (kind !== 'name' && kind !== 'value') throw new RuleError(`invalid type "${kind}" for answer rule for ${match} rule (auto, name or value)`);
    const from = args[i];
    const to = args[i + 1];
    if (from === undefined || to === undefined) throw new RuleError(`${kind} answer rule for ${match} rule: 2 arguments required`);
    const re = compile(from);
    checkGroups(re, to, from);
    rules.push({ field: kind, rewrite: regexRewriter(re, normalize(to)) });
    if (kind === 'name') nameRules++;
    i += 2;
  }
  if (auto && nameRules > 0) throw new RuleError('auto name answer rule cannot be combined with explicit name answer rules');
  return { auto, rules };
}

/**
 * Parses the arguments of one `rewrite` directive (its args, or its block lines joined, as
 * CoreDNS does): `[continue|stop] name [MATCH] FROM TO [answer auto|answer name FROM TO|answer value FROM TO]...`.
 */
export function parseRule(all: readonly string[]): NameRule {
  const source = all.join(' ');
  let args = [...all];
  let mode: NameRule['mode'] = 'stop';
  const first = args[0]?.toLowerCase();
  if (first === 'continue' || first === 'stop') {
    mode = first;
    args = args.slice(1);
  }
  const field = args[0]?.toLowerCase();
  if (field === undefined) throw new RuleError('no rule type specified for rewrite (clusterdns supports: name)');
  if (field === 'answer') throw new RuleError('response rewrites must begin with a name rule');
  if (field !== 'name') throw new RuleError(`rule type "${args[0]}" is not supported by clusterdns yet (supported: name)`);
  args = args.slice(1);
  if (args.length < 2) throw new RuleError('too few arguments for a name rule: name [exact|prefix|suffix|substring|regex] FROM TO');
  let match: string;
  let from: string;
  let to: string;
  if (args.length === 2) {
    match = 'exact';
    from = normalize(args[0]!);
    to = normalize(args[1]!);
  } else {
    match = args[0]!.toLowerCase();
    if (match === 'regex') {
      from = args[1]!;
      to = args[2]!;
    } else {
      // CoreDNS normalizes every non-regex FROM and TO as a name (lowercased, trailing dot), so
      // `prefix foo bar` matches names starting with the label `foo`.
      from = normalize(args[1]!);
      to = normalize(args[2]!);
    }
  }
  if (match === 'exact' || match === 'suffix') {
    if (!from.endsWith('.')) from += '.';
    if (!to.endsWith('.')) to += '.';
  }
  const { auto, rules } = args.length > 3 ? parseAnswers(match, args.slice(3)) : { auto: false, rules: [] };
  switch (match) {
    case 'exact':
      return { mode, match, from, to, auto: true, answers: rules, source };
    case 'prefix':
    case 'substring':
      return { mode, match, from, to, auto, answers: rules, source };
    case 'suffix': {
      // The suffix mapped back is the reverse of the rule itself.
      const back = suffixRewriter(to, from);
      const answers: ResponseRule[] = auto ? [{ field: 'name', rewrite: back }, { field: 'value', rewrite: back }, ...rules] : rules;
      return { mode, match, from, to, auto: false, answers, source };
    }
    case 'regex': {
      const pattern = compile(from);
      checkGroups(pattern, to, from);
      return { mode, match, from, to: normalize(to), pattern, auto, answers: rules, source };
    }
    default:
      throw new RuleError(`name rule supports only exact, prefix, suffix, substring, and regex name matching, received: ${match}`);
  }
}

/** Applies a rule to a lowercased name: the rewritten name, or undefined when it does not match. */
export function applyRule(rule: NameRule, name: string): string | undefined {
  switch (rule.match) {
    case 'exact':
      return name === rule.from ? rule.to : undefined;
    case 'prefix':
      return name.startsWith(rule.from) ? rule.to + name.slice(rule.from.length) : undefined;
    case 'suffix':
      return name.endsWith(rule.from) ? name.slice(0, name.length - rule.from.length) + rule.to : undefined;
    case 'substring':
      return name.includes(rule.from) ? name.split(rule.from).join(rule.to) : undefined;
    case 'regex': {
      const m = rule.pattern!.exec(name);
      return m ? expand(rule.to, m) : undefined;
    }
  }
}

/** The response rules one applied rule contributes: auto maps the new name back to the old one. */
export function responseRules(rule: NameRule, before: string, after: string): ResponseRule[] {
  if (!rule.auto) return rule.answers;
  const back = remapRewriter(after, before);
  return [{ field: 'name', rewrite: back }, { field: 'value', rewrite: back }, ...rule.answers];
}
