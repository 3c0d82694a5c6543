// Label selector strings for `serviceLabelSelectors`, parsed with the grammar and checks of
// k8s.io/apimachinery's labels.Parse (the function k8s_gateway's setup.go calls): requirements
// joined by commas, each `key`, `!key`, `key=value`, `key==value`, `key!=value`,
// `key in (a,b)`, `key notin (a,b)`, `key>N` or `key<N`; keys are qualified names and values
// label values (validation.IsQualifiedName, IsValidLabelValue). Written for clusterdns from
// that grammar; the kubernetes plugin's `labels` option has its own, older reader. Both read into
// the cluster's LabelSelector, which matchesSelector (cluster/model/selector.ts) evaluates.

import { excerpt } from '../../chain/excerpt.js';
import type { LabelSelector, SelectorRequirement } from '../../cluster/model/selector.js';

type Operator = 'exists' | '!' | '=' | '==' | '!=' | 'in' | 'notin' | '>' | '<';

interface Requirement {
  readonly key: string;
  readonly op: Operator;
  readonly values: readonly string[];
}

export interface ParsedSelector {
  /** The selector as labels.Selector.String() writes it: requirements sorted by key. */
  readonly text: string;
  readonly selector: LabelSelector;
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** validation.IsQualifiedName: an optional DNS-1123 subdomain prefix and `/`, then a name of 63 characters at most. */
function keyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !SUBDOMAIN.test(prefix))) {
    return `key "${excerpt(key)}": the prefix before "/" must be a lower-case DNS subdomain`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `key "${excerpt(key)}": the name must be 1 to 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`;
  }
  return undefined;
}

/** validation.IsValidLabelValue: empty, or 63 characters at most of the name alphabet. */
function valueProblem(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && NAME.test(value))) return undefined;
  return `value "${excerpt(value)}": a label value is at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit`;
}

type Token = { kind: 'id'; text: string } | { kind: 'op'; text: string } | { kind: 'end' };

/** The lexer: identifiers run until whitespace or one of `=!(),<>`. */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ kind: 'op', text: two });
      i += 2;
      continue;
    }
    if ('=!(),<>'.includes(c)) {
      out.push({ kind: 'op', text: c });
      i++;
      continue;
    }
    let j = i;
    while (j < text.length && !/\s/.test(text[j]!) && !'=!(),<>'.includes(text[j]!)) j++;
    out.push({ kind: 'id', text: text.slice(i, j) });
    i = j;
  }
  out.push({ kind: 'end' });
  return out;
}

/** Parses one selector string; throws an Error whose message says what is wrong. */
export function parseLabelSelector(text: string): ParsedSelector {
  const toks = tokens(text);
  let pos = 0;
  const peek = (): Token => toks[pos]!;
  const next = (): Token => toks[pos++]!;
  const show = (t: Token): string => (t.kind === 'end' ? 'the end' : `"${excerpt(t.text)}"`);
  const reqs: Requirement[] = [];
  for (;;) {
    let t = next();
    let negated = false;
    if (t.kind === 'op' && t.text === '!') {
      negated = true;
      t = next();
    }
    if (t.kind !== 'id') throw new Error(`expected a label key, found ${show(t)}`);
    const key = t.text;
    const k = excerpt(key);
    const bad = keyProblem(key);
    if (bad) throw new Error(bad);
    let req: Requirement;
    const after = peek();
    if (negated) req = { key, op: '!', values: [] };
    else if (after.kind === 'end' || (after.kind === 'op' && after.text === ',')) req = { key, op: 'exists', values: [] };
    else if (after.kind === 'op' && (after.text === '=' || after.text === '==' || after.text === '!=')) {
      next();
      const v = peek();
      let value = '';
      if (v.kind === 'id') {
        next();
        value = v.text;
      } else if (v.kind === 'op' && v.text !== ',') {
        throw new Error(`expected a value after "${k}${after.text}", found ${show(v)}`);
      }
      req = { key, op: after.text, values: [value] };
    } else if (after.kind === 'op' && (after.text === '>' || after.text === '<')) {
      next();
      const v = next();
      if (v.kind !== 'id' || !/^[+-]?\d+$/.test(v.text)) throw new Error(`"${k}${after.text}" needs an integer, found ${show(v)}`);
      req = { key, op: after.text, values: [v.text] };
    } else if (after.kind === 'id' && (after.text === 'in' || after.text === 'notin')) {
      next();
      const open = next();
      if (open.kind !== 'op' || open.text !== '(') throw new Error(`expected "(" after "${k} ${after.text}", found ${show(open)}`);
      const values: string[] = [];
      for (;;) {
        const v = next();
        if (v.kind === 'op' && v.text === ')' && values.length === 0) break;
        if (v.kind !== 'id') throw new Error(`expected a value in "${k} ${after.text} (...)", found ${show(v)}`);
        values.push(v.text);
        const sep = next();
        if (sep.kind === 'op' && sep.text === ')') break;
        if (sep.kind !== 'op' || sep.text !== ',') throw new Error(`expected "," or ")" in "${k} ${after.text} (...)", found ${show(sep)}`);
      }
      if (values.length === 0) throw new Error(`"${k} ${after.text} ()": the set of values must not be empty`);
      req = { key, op: after.text, values: [...new Set(values)].sort() };
    } else throw new Error(`expected an operator (=, ==, !=, in, notin, >, <) or "," after "${k}", found ${show(after)}`);
    if (req.op !== '>' && req.op !== '<')
      for (const v of req.values) {
        const vb = valueProblem(v);
        if (vb) throw new Error(vb);
      }
    reqs.push(req);
    const sep = next();
    if (sep.kind === 'end') break;
    if (sep.kind !== 'op' || sep.text !== ',') throw new Error(`expected "," between requirements, found ${show(sep)}`);
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { text: reqs.map(requirementText).join(','), selector: { matchLabels: {}, matchExpressions: reqs.map(requirement) } };
}

function requirementText(r: Requirement): string {
  switch (r.op) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.op} (${r.values.join(',')})`;
    default:
      return `${r.key}${r.op}${r.values[0]}`;
  }
}

/** The requirement as the evaluator takes it: `=` and `==` are In one value, `!=` NotIn one. */
function requirement(r: Requirement): SelectorRequirement {
  switch (r.op) {
    case 'exists':
      return { key: r.key, operator: 'Exists', values: [] };
    case '!':
      return { key: r.key, operator: 'DoesNotExist', values: [] };
    case '=':
    case '==':
    case 'in':
      return { key: r.key, operator: 'In', values: r.values };
    case '!=':
    case 'notin':
      return { key: r.key, operator: 'NotIn', values: r.values };
    case '>':
      return { key: r.key, operator: 'Gt', values: r.values };
    case '<':
      return { key: r.key, operator: 'Lt', values: r.values };
  }
}
