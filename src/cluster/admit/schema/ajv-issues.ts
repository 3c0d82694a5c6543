// ajv errors (from kubernetes-models' precompiled validators and from compiled CRD schemas) in
// words: the field in Positions form, what is wrong and the fix.

import { jsonExcerpt } from '../../model/finding.js';
import { nearestName } from './suggest.js';
import type { AjvError, FieldIssue } from './types.js';

/** The field an ajv instancePath names, with the value there ('/spec/ports/0' -> 'spec.ports[0]'). */
export function locate(obj: unknown, instancePath: string): { path: string; value: unknown } {
  if (instancePath === '') return { path: '', value: obj };
  let path = '';
  let cur: unknown = obj;
  for (const raw of instancePath.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      path += `[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      path = path === '' ? seg : `${path}.${seg}`;
      cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[seg] : undefined;
    }
  }
  return { path, value: cur };
}

const ARTICLE: Readonly<Record<string, string>> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};
const typeWords = (t: unknown): string => (Array.isArray(t) ? t.map(typeWords).join(' or ') : (ARTICLE[String(t)] ?? String(t)));

const NUMERIC = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function typeFix(wanted: unknown, value: unknown): string {
  if (value === null) return '; give it a value or remove the field';
  if (typeof wanted !== 'string') return ''; // a union: the message says it all
  const fix = fixFor(wanted, value);
  return fix === '' ? '' : `; ${fix}`;
}

function fixFor(want: string, value: unknown): string {
  if ((want === 'integer' || want === 'number') && typeof value === 'string' && NUMERIC.test(value.trim())) return 'write it without quotes';
  if (want === 'integer' && typeof value === 'number') return 'use a whole number';
  if (want === 'string' && (typeof value === 'number' || typeof value === 'boolean')) return 'quote it';
  // `name: a: b` reads as a mapping: a value with ": " in it needs quotes.
  if (want === 'string' && typeof value === 'object') return 'write one value, quoted if it contains ": "';
  if (want === 'boolean' && (value === 'true' || value === 'false')) return 'write true or false without quotes';
  if (want === 'object' && Array.isArray(value)) return 'write a mapping (key: value), not a list';
  if (want === 'array') return 'write a list (items starting with "- ")';
  if (want === 'object') return 'check its indentation';
  return `write ${typeWords(want)}`;
}

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  int32: 'an integer between -2147483648 and 2147483647',
  int64: 'an integer between -9223372036854775808 and 9223372036854775807',
  'date-time': 'an RFC 3339 time such as "2024-05-01T12:00:00Z"',
  byte: 'base64-encoded text',
  quantity: 'a quantity such as 500m, 128Mi or 2',
  cidr: 'a CIDR such as 10.0.0.0/8',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
};

const quoteList = (xs: readonly unknown[]): string => xs.map((x) => JSON.stringify(x)).join(', ');

function describe(e: AjvError, path: string, value: unknown, siblings: readonly AjvError[]): FieldIssue | undefined {
  const p = e.params;
  const at = path === '' ? 'the object' : path;
  switch (e.keyword) {
    case 'type':
      return { path, code: 'schema-type', message: `${at} must be ${typeWords(p['type'])}, got ${jsonExcerpt(value)}${typeFix(p['type'], value)}` };
    case 'required': {
      const field = String(p['missingProperty']);
      const full = path === '' ? field : `${path}.${field}`;
      return { path: full, code: 'schema-required', message: `missing required field "${field}" in ${at}; add ${full}` };
    }
    case 'enum': {
      const allowed = Array.isArray(p['allowedValues']) ? (p['allowedValues'] as unknown[]) : [];
      const near =
        typeof value === 'string'
          ? nearestName(
              value,
              allowed.filter((a): a is string => typeof a === 'string'),
            )
          : undefined;
      const fix = near !== undefined ? `did you mean ${JSON.stringify(near)}?` : 'use one of them (values are case-sensitive)';
      return { path, code: 'schema-enum', message: `${at} must be one of ${quoteList(allowed)}, got ${jsonExcerpt(value)}; ${fix}` };
    }
    case 'format': {
      const f = String(p['format']);
      return { path, code: 'schema-format', message: `${at} must be ${FORMAT_WORDS[f] ?? `a valid ${f}`}, got ${jsonExcerpt(value)}` };
    }
    case 'oneOf':
    case 'anyOf': {
      // IntOrString, Quantity and the like: the branches' own type errors say what is allowed.
      const types = siblings.filter((s) => s.keyword === 'type').map((s) => typeWords(s.params['type']));
      if (types.length === 0) return { path, code: 'schema-one-of', message: `${at} ${jsonExcerpt(value)} matches none of the forms its schema allows` };
      const want = [...new Set(types)].join(' or ');
      return { path, code: 'schema-type', message: `${at} must be ${want}, got ${jsonExcerpt(value)}` };
    }
    case 'pattern':
      return { path, code: 'schema-pattern', message: `${at} ${jsonExcerpt(value)} does not match the pattern ${JSON.stringify(p['pattern'])}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path, code: 'schema-range', message: `${at} must be ${p['comparison']} ${p['limit']}, got ${jsonExcerpt(value)}` };
    case 'minLength':
    case 'maxLength':
      return { path, code: 'schema-length', message: `${at} must be ${e.keyword === 'minLength' ? 'at least' : 'at most'} ${p['limit']} characters long` };
    case 'minItems':
    case 'maxItems':
      return { path, code: 'schema-items', message: `${at} must have ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${p['limit']} items` };
    case 'minProperties':
    case 'maxProperties':
      return { path, code: 'schema-items', message: `${at} must have ${e.keyword === 'minProperties' ? 'at least' : 'at most'} ${p['limit']} fields` };
    case 'uniqueItems':
      return { path, code: 'schema-unique', message: `${at} has the same item twice (items ${p['j']} and ${p['i']}); remove one` };
    case 'const':
      return { path, code: 'schema-enum', message: `${at} must be ${JSON.stringify(p['allowedValue'])}, got ${jsonExcerpt(value)}` };
    default:
      return { path, code: `schema-${e.keyword}`, message: `${at} ${e.message ?? `fails the schema's "${e.keyword}" rule`}` };
  }
}

const MAX_ISSUES = 20;

/**
 * FieldIssues for ajv `errors` of `obj`. Dropped: what kubectl would not report, i.e. apiVersion and
 * kind errors (the lookup matched them; a legacy version was read as the current one) and enum or
 * format errors of a null (the API server drops a null optional field before validating).
 */
export function issuesOf(obj: unknown, errors: readonly AjvError[] | null | undefined): FieldIssue[] {
  if (!errors || errors.length === 0) return [];
  const out: FieldIssue[] = [];
  const seen = new Set<string>();
  // Branch errors under a oneOf/anyOf at the same place are folded into its one message.
  const union = new Set(errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const e of errors) {
    if (out.length >= MAX_ISSUES) break;
    if (e.instancePath === '/apiVersion' || e.instancePath === '/kind') continue;
    if (e.instancePath === '' && e.keyword === 'required' && (e.params['missingProperty'] === 'apiVersion' || e.params['missingProperty'] === 'kind')) continue;
    if (union.has(e.instancePath) && e.keyword !== 'oneOf' && e.keyword !== 'anyOf') continue;
    const { path, value } = locate(obj, e.instancePath);
    if (value === null && (e.keyword === 'enum' || e.keyword === 'format')) continue;
    const siblings = union.has(e.instancePath) ? errors.filter((s) => s.instancePath === e.instancePath) : [];
    const issue = describe(e, path, value, siblings);
    if (issue === undefined) continue;
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}
