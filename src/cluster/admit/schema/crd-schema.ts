// A CustomResourceDefinition's openAPIV3Schema, checked once and then applied to its objects, as
// the API server's apiextensions validation does for structural schemas
// (k8s.io/apiextensions-apiserver pkg/apiserver/schema: pruning, nullable, int-or-string,
// preserve-unknown-fields; value validation by kube-openapi's validate package).
//
// An interpreter rather than ajv: structural schemas use a small subset of JSON Schema, and ajv
// costs ~280 ms to load and compile its first schema (measured, Node 20), more than every object
// of a large cluster costs to validate. Errors come out in ajv's shape, so ajv-issues.ts words
// both.

import { RE2JS } from 're2js';
import { canonicalIp } from '../../../pkg/ip.js';
import { Shape } from './field-shapes.js';
import type { AjvError, FieldIssue } from './types.js';
import { pushAll } from '../../../pkg/arrays.js';

type Node = Readonly<Record<string, unknown>>;

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Limits of a schema this module takes: larger ones are known by name only (crd.ts). */
/** Bounds on one CRD schema this module applies (a larger one leaves its kind unchecked). */
export interface CrdSchemaLimits {
  readonly maxNodes: number;
  readonly maxDepth: number;
}
export const MAX_SCHEMA_NODES = 20_000;
export const defaultCrdSchemaLimits: CrdSchemaLimits = { maxNodes: MAX_SCHEMA_NODES, maxDepth: 64 };
const MAX_ERRORS = 50;
const MAX_VALUE_DEPTH = 100;

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

// kube-openapi's strfmt registry checks these formats (others are accepted as any string).
const FORMATS: Readonly<Record<string, (v: string) => boolean>> = {
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  ipv4: (v) => !v.includes(':') && canonicalIp(v) !== undefined,
  ipv6: (v) => v.includes(':') && canonicalIp(v) !== undefined,
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
};
const INT_RANGE: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-2147483648, 2147483647],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/**
 * A schema pattern (Go RE2 syntax, as the API server compiles it) with RE2JS: its syntax is
 * Go's, and matching takes linear time, so a pattern written in a manifest's CRD cannot make a
 * string stall the load (a JavaScript RegExp backtracks).
 */
function compilePattern(p: string): { test(v: string): boolean } {
  const re = RE2JS.compile(p);
  return { test: (v) => re.test(v) };
}

const escapePtr = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');

export class CrdSchema {
  private readonly patterns = new Map<Node, { test(v: string): boolean }>();
  /** The unknown-field table, from the schema's properties (no learning needed). */
  readonly shape: Shape;

  private constructor(private readonly root: Node) {
    this.shape = new Shape();
  }

  /**
   * Checks `schema` (an openAPIV3Schema) can be applied; the issues name fields under `path`,
   * e.g. 'spec.versions[0].schema.openAPIV3Schema'. Undefined with issues when it cannot.
   */
  static prepare(schema: unknown, path: string, limits: CrdSchemaLimits = defaultCrdSchemaLimits): { schema?: CrdSchema; issues: FieldIssue[] } {
    const { maxNodes, maxDepth } = limits;
    const issues: FieldIssue[] = [];
    if (!isNode(schema)) return { issues: [{ path, code: 'crd-schema', message: `${path} must be a mapping (a JSON schema)` }] };
    const s = new CrdSchema(schema);
    let nodes = 0;
    const check = (n: Node, at: string, depth: number): void => {
      if (issues.length >= 10) return;
      if (++nodes > maxNodes || depth > maxDepth) {
        if (nodes === maxNodes + 1 || depth === maxDepth + 1) {
          const limits = `over ${maxNodes} nodes or ${maxDepth} levels; --max-crd-schema-nodes`;
          const message = `${path} is larger than this tool checks (${limits}); objects of this kind are accepted unchecked`;
          issues.push({ path, code: 'crd-schema-size', message });
        }
        return;
      }
      const t = n['type'];
      if (t !== undefined && (typeof t !== 'string' || !TYPES.has(t))) {
        issues.push({ path: `${at}.type`, code: 'crd-schema', message: `${at}.type must be one of object, array, string, integer, number, boolean` });
      }
      const pat = n['pattern'];
      if (pat !== undefined) {
        try {
          if (typeof pat !== 'string') throw new Error('not a string');
          s.patterns.set(n, compilePattern(pat));
        } catch (e) {
          issues.push({ path: `${at}.pattern`, code: 'crd-schema', message: `${at}.pattern does not compile: ${(e as Error).message}` });
        }
      }
      const req = n['required'];
      if (req !== undefined && (!Array.isArray(req) || req.some((r) => typeof r !== 'string'))) {
        issues.push({ path: `${at}.required`, code: 'crd-schema', message: `${at}.required must be a list of field names` });
      }
      const props = n['properties'];
      if (props !== undefined) {
        if (!isNode(props)) issues.push({ path: `${at}.properties`, code: 'crd-schema', message: `${at}.properties must be a mapping` });
        else for (const [k, v] of Object.entries(props)) if (isNode(v)) check(v, `${at}.properties.${k}`, depth + 1);
      }
      for (const key of ['items', 'additionalProperties', 'not'] as const) {
        const v = n[key];
        if (isNode(v)) check(v, `${at}.${key}`, depth + 1);
        else if (key === 'items' && v !== undefined) {
          issues.push({ path: `${at}.items`, code: 'crd-schema', message: `${at}.items must be one schema (a mapping), not a list` });
        }
      }
      for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
        const v = n[key];
        if (!Array.isArray(v)) continue;
        for (let i = 0; i < v.length; i++) if (isNode(v[i])) check(v[i], `${at}.${key}[${i}]`, depth + 1);
      }
    };
    check(schema, path, 0);
    if (issues.length > 0) return { issues };
    buildShape(schema, s.shape, true);
    return { schema: s, issues };
  }

  /** ajv-shaped errors of `value` (the whole object) against the schema, after defaulting. */
  validate(value: unknown): AjvError[] {
    const errors: AjvError[] = [];
    this.check(this.root, withDefaults(this.root, value, 0), '', errors, 0);
    return errors;
  }

  private check(n: Node, v: unknown, ptr: string, errors: AjvError[], depth: number): void {
    if (errors.length >= MAX_ERRORS || depth > MAX_VALUE_DEPTH) return;
    const err = (keyword: string, params: Record<string, unknown>): void => {
      errors.push({ instancePath: ptr, keyword, params });
    };
    // A null is dropped unless the field is nullable (pruning, before validation), so it passes.
    if (v === null) return;
    if (n['x-kubernetes-int-or-string'] === true) {
      if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)))) err('type', { type: ['integer', 'string'] });
    } else {
      const t = n['type'];
      if (typeof t === 'string' && !hasType(v, t)) {
        err('type', { type: t });
        return;
      }
    }
    const en = n['enum'];
    if (Array.isArray(en) && !en.some((x) => x === v || (typeof x === 'object' && JSON.stringify(x) === JSON.stringify(v)))) {
      err('enum', { allowedValues: en });
    }
    if (typeof v === 'string') this.checkString(n, v, err);
    else if (typeof v === 'number') checkNumber(n, v, err);
    else if (Array.isArray(v)) {
      limit(n, 'minItems', v.length, err);
      limit(n, 'maxItems', v.length, err);
      const items = n['items'];
      if (isNode(items)) for (let i = 0; i < v.length; i++) this.check(items, v[i], `${ptr}/${i}`, errors, depth + 1);
    } else if (typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const req = n['required'];
      const props = isNode(n['properties']) ? n['properties'] : undefined;
      if (Array.isArray(req)) {
        for (const r of req) {
          const child = props?.[r as string];
          if (o[r as string] === undefined || (o[r as string] === null && !(isNode(child) && child['nullable'] === true))) {
            err('required', { missingProperty: r });
          }
        }
      }
      const count = Object.keys(o).length;
      limit(n, 'minProperties', count, err);
      limit(n, 'maxProperties', count, err);
      const extra = isNode(n['additionalProperties']) ? n['additionalProperties'] : undefined;
      for (const k in o) {
        const s = props?.[k];
        if (isNode(s)) this.check(s, o[k], `${ptr}/${escapePtr(k)}`, errors, depth + 1);
        else if (extra !== undefined) this.check(extra, o[k], `${ptr}/${escapePtr(k)}`, errors, depth + 1);
      }
    }
    this.checkCombinators(n, v, ptr, errors, depth, err);
  }

  private checkString(n: Node, v: string, err: (k: string, p: Record<string, unknown>) => void): void {
    const chars = n['minLength'] !== undefined || n['maxLength'] !== undefined ? [...v].length : 0; // Go counts runes
    limit(n, 'minLength', chars, err);
    limit(n, 'maxLength', chars, err);
    const re = this.patterns.get(n);
    if (re !== undefined && !re.test(v)) err('pattern', { pattern: n['pattern'] });
    const f = n['format'];
    if (typeof f === 'string' && FORMATS[f] !== undefined && !FORMATS[f](v)) err('format', { format: f });
  }

  private checkCombinators(n: Node, v: unknown, ptr: string, errors: AjvError[], depth: number, err: (k: string, p: Record<string, unknown>) => void): void {
    const allOf = n['allOf'];
    if (Array.isArray(allOf)) for (const s of allOf) if (isNode(s)) this.check(s, v, ptr, errors, depth + 1);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const alts = n[key];
      if (!Array.isArray(alts)) continue;
      let passing = 0;
      const branchErrors: AjvError[] = [];
      for (const s of alts) {
        if (!isNode(s)) continue;
        const mine: AjvError[] = [];
        this.check(s, v, ptr, mine, depth + 1);
        if (mine.length === 0) passing++;
        else
          pushAll(
            branchErrors,
            mine.filter((e) => e.instancePath === ptr && e.keyword === 'type'),
          );
      }
      if (key === 'anyOf' ? passing === 0 : passing !== 1) {
        pushAll(errors, branchErrors);
        err(key, { passingSchemas: passing });
      }
    }
    const not = n['not'];
    if (isNode(not)) {
      const mine: AjvError[] = [];
      this.check(not, v, ptr, mine, depth + 1);
      if (mine.length === 0) err('not', {});
    }
  }
}

/**
 * `v` with the schema's defaults filled in where fields are absent, as the API server defaults a
 * custom resource before validating it (structural schemas put defaults only under properties,
 * items and additionalProperties). Copies only the objects and lists it changes.
 */
function withDefaults(n: Node, v: unknown, depth: number): unknown {
  if (depth > MAX_VALUE_DEPTH || typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const items = n['items'];
    if (!isNode(items)) return v;
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const d = withDefaults(items, v[i], depth + 1);
      if (d !== v[i]) (out ??= [...v])[i] = d;
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  const props = isNode(n['properties']) ? n['properties'] : undefined;
  if (props !== undefined) {
    for (const k in props) {
      const s = props[k];
      if (!isNode(s)) continue;
      const cur = o[k] === undefined && s['default'] !== undefined ? s['default'] : o[k];
      const d = withDefaults(s, cur, depth + 1);
      if (d !== o[k]) (out ??= { ...o })[k] = d;
    }
  }
  const extra = n['additionalProperties'];
  if (isNode(extra)) {
    for (const k in o) {
      if (props?.[k] !== undefined) continue;
      const d = withDefaults(extra, o[k], depth + 1);
      if (d !== o[k]) (out ??= { ...o })[k] = d;
    }
  }
  return out ?? v;
}

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    default:
      return typeof v === t;
  }
}

function checkNumber(n: Node, v: number, err: (k: string, p: Record<string, unknown>) => void): void {
  const min = n['minimum'];
  const max = n['maximum'];
  // OpenAPI v3.0: exclusiveMinimum/exclusiveMaximum are booleans qualifying minimum/maximum.
  const exMin = n['exclusiveMinimum'] === true;
  const exMax = n['exclusiveMaximum'] === true;
  if (typeof min === 'number' && (exMin ? v <= min : v < min)) err('minimum', { comparison: exMin ? '>' : '>=', limit: min });
  if (typeof max === 'number' && (exMax ? v >= max : v > max)) err('maximum', { comparison: exMax ? '<' : '<=', limit: max });
  const mult = n['multipleOf'];
  if (typeof mult === 'number' && mult > 0 && Math.abs(v / mult - Math.round(v / mult)) > 1e-9) err('multipleOf', { multipleOf: mult });
  const range = typeof n['format'] === 'string' ? INT_RANGE[n['format']] : undefined;
  if (range !== undefined && Number.isInteger(v) && (v < range[0] || v > range[1])) err('format', { format: n['format'] });
}

function limit(n: Node, key: string, actual: number, err: (k: string, p: Record<string, unknown>) => void): void {
  const l = n[key];
  if (typeof l !== 'number') return;
  if (key.startsWith('min') ? actual < l : actual > l) err(key, { limit: l });
}

/**
 * The unknown-field table of a structural schema: declared properties, maps (additionalProperties)
 * and free-form values (x-kubernetes-preserve-unknown-fields, or additionalProperties: true).
 * An object with neither properties nor additionalProperties keeps no fields (all pruned).
 * At the root, apiVersion, kind and metadata are always allowed, as for an embedded resource.
 */
function buildShape(n: Node, shape: Shape, root: boolean): void {
  if (n['x-kubernetes-preserve-unknown-fields'] === true || n['additionalProperties'] === true) {
    shape.free = true;
    return;
  }
  const items = n['items'];
  if (isNode(items)) buildShape(items, shape.child('[]'), false);
  const extra = n['additionalProperties'];
  if (isNode(extra)) {
    shape.map = true;
    buildShape(extra, shape.child('*'), false);
    return;
  }
  const props = isNode(n['properties']) ? n['properties'] : {};
  shape.keys = new Set(Object.keys(props));
  for (const [k, v] of Object.entries(props)) if (isNode(v)) buildShape(v, shape.child(k), false);
  if (root || n['x-kubernetes-embedded-resource'] === true) {
    for (const k of ['apiVersion', 'kind', 'metadata']) shape.keys.add(k);
    // ObjectMeta is checked by the loader (and its schema is the API server's, not the CRD's).
    shape.child('metadata').free = true;
  }
}
