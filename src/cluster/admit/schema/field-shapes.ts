// Unknown fields, as `kubectl apply --validate=strict` reports them (the API server's strict
// decoding: `unknown field "spec.portz"`), found against a table of the fields each position of
// an object declares.
//
// The precompiled validators of kubernetes-models do not reject undeclared properties, and carry
// no schema to read. What they do carry is code that reads every property its schema declares
// (`void 0===data.port||...`, also for absent ones) and enumerates the keys (`for (k in data)`)
// only of a map (additionalProperties). So running a validator once over Proxy-wrapped values
// tells, per position, which keys are declared: the keys it read, "map" when it enumerated, and
// "free" (x-kubernetes-preserve-unknown-fields, RawExtension, FieldsV1) when it read nothing of a
// value it did not reject. Positions are learned from the objects seen, so a position is learned
// the first time an object has a value there; afterwards a plain key walk checks objects.
// Manifest CRDs fill the same table straight from their structural schema (crd-schema.ts).

import type { AjvValidate, FieldIssue } from './types.js';
import { nearestName } from './suggest.js';

/** What one position of an object accepts. Children: by key, '[]' for list items, '*' for map values. */
export class Shape {
  /** Keys declared here; undefined while unlearned (or for map/free). */
  keys: Set<string> | undefined;
  map = false;
  free = false;
  readonly children = new Map<string, Shape>();

  child(key: string): Shape {
    let c = this.children.get(key);
    if (c === undefined) {
      c = new Shape();
      this.children.set(key, c);
    }
    return c;
  }

  get learned(): boolean {
    return this.free || this.map || this.keys !== undefined;
  }
}

type Seg = string | number;

export const pathText = (segs: readonly Seg[]): string => {
  let out = '';
  for (const s of segs) out = typeof s === 'number' ? `${out}[${s}]` : out === '' ? s : `${out}.${s}`;
  return out;
};

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

// Bounds the walk: manifests are bounded by the loader, but a learned table must never turn a deep
// value into deep recursion.
const MAX_DEPTH = 100;
const MAX_ISSUES = 20;

function unknownField(segs: readonly Seg[], key: string, declared: ReadonlySet<string>): FieldIssue {
  const path = pathText([...segs, key]);
  const near = nearestName(key, declared);
  const hint = near !== undefined ? `; did you mean "${near}"?` : '; remove it or fix its indentation';
  return { path, message: `unknown field "${path}"${hint} (kubectl apply --validate=strict rejects it)`, code: 'unknown-field' };
}

/**
 * Checks `v` against `shape`; false when it reaches a position not learned yet and `final` is
 * false (the caller learns and walks again), true otherwise. Unlearned positions are skipped when
 * `final`: the validator could not tell (it rejected the value there, and said so).
 */
function walk(v: object, shape: Shape, segs: Seg[], out: FieldIssue[], final: boolean): boolean {
  if (segs.length > MAX_DEPTH) return true;
  if (Array.isArray(v)) {
    const item = shape.children.get('[]');
    for (let i = 0; i < v.length; i++) {
      const e: unknown = v[i];
      if (!isObject(e)) continue;
      if (item === undefined) {
        if (final) return true;
        return false;
      }
      segs.push(i);
      const ok = walk(e, item, segs, out, final);
      segs.pop();
      if (!ok) return false;
    }
    return true;
  }
  if (shape.free) return true;
  if (!shape.map && shape.keys === undefined) return final;
  const keys = shape.keys;
  const rec = v as Record<string, unknown>;
  for (const k in rec) {
    if (keys !== undefined && !keys.has(k)) {
      if (out.length < MAX_ISSUES) out.push(unknownField(segs, k, keys));
      continue;
    }
    const e = rec[k];
    if (!isObject(e)) continue;
    const c = shape.children.get(shape.map ? '*' : k);
    if (c === undefined || (!c.learned && !Array.isArray(e))) {
      if (final) continue;
      return false;
    }
    segs.push(k);
    const ok = walk(e, c, segs, out, final);
    segs.pop();
    if (!ok) return false;
  }
  return true;
}

/** Unknown fields of `obj` by the learned `root`; `learn` fills positions first met here. */
export function unknownFields(obj: object, root: Shape, learn?: (obj: object, root: Shape) => void): FieldIssue[] {
  const out: FieldIssue[] = [];
  if (walk(obj, root, [], out, learn === undefined)) return out;
  learn!(obj, root);
  out.length = 0;
  walk(obj, root, [], out, true);
  return out;
}

/**
 * Runs a precompiled validator over Proxy views of `obj`, recording what it reads at each position
 * into `root`. A position the validator reported an error at is not concluded "free" (it read
 * nothing there because the value had the wrong type, not because anything goes).
 */
export function learnByProxy(validate: AjvValidate, obj: object, root: Shape): void {
  interface Seen {
    shape: Shape;
    reads: Set<string>;
    enumerated: boolean;
    path: string;
  }
  const seen: Seen[] = [];
  // One view per value and position: a validator reads a value more than once (`void 0===data.x`,
  // then validates data.x), and a YAML alias puts one value at two positions.
  const views = new WeakMap<object, Map<Shape, object>>();
  const view = (target: object, shape: Shape, path: string): object => {
    let byShape = views.get(target);
    if (byShape === undefined) views.set(target, (byShape = new Map()));
    const had = byShape.get(shape);
    if (had !== undefined) return had;
    const rec: Seen = { shape, reads: new Set(), enumerated: false, path };
    const isArr = Array.isArray(target);
    if (!isArr) seen.push(rec);
    const p = new Proxy(target, {
      get(t, key, receiver) {
        const value: unknown = Reflect.get(t, key, receiver);
        if (typeof key !== 'string') return value;
        if (isArr) {
          if (!/^\d+$/.test(key) || !isObject(value)) return value;
          return view(value, shape.child('[]'), `${path}/${key}`);
        }
        if (!Object.hasOwn(t, key) && key in t) return value; // a prototype member (valueOf), not a field
        rec.reads.add(key);
        if (!isObject(value) || !Object.hasOwn(t, key)) return value;
        return view(value, shape.child(rec.enumerated ? '*' : key), `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      },
      ownKeys(t) {
        rec.enumerated = true;
        return Reflect.ownKeys(t);
      },
    });
    byShape.set(shape, p);
    return p;
  };
  validate(view(obj, root, ''));
  const errorAt = new Set((validate.errors ?? []).map((e) => e.instancePath));
  for (const s of seen) {
    if (s.enumerated) {
      s.shape.map = true;
      s.shape.keys = undefined;
    } else if (s.reads.size > 0) {
      if (s.shape.map) continue;
      s.shape.keys ??= new Set();
      for (const k of s.reads) s.shape.keys.add(k);
    } else if (!errorAt.has(s.path) && !s.shape.learned) s.shape.free = true;
  }
}
