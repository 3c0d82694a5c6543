// Label selectors: Service selectors are plain maps (every key must equal); workload selectors
// (metav1.LabelSelector) are matchLabels AND matchExpressions with In, NotIn, Exists, DoesNotExist,
// as in k8s.io/apimachinery/pkg/labels. An empty LabelSelector matches everything; a missing one
// matches nothing (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()).

import { jsonExcerpt } from '../read/yaml-docs.js';
import type { Checker, Obj } from '../admit/validate.js';
import { isObj, labelValueProblem, qualifiedNameProblem } from '../admit/validate.js';

export interface SelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly SelectorRequirement[];
}

export type Labels = Readonly<Record<string, string>>;

/** Service selector semantics: every key/value of the map is present on the labels. */
export function matchesMap(selector: Labels, labels: Labels): boolean {
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

export function matchesSelector(sel: LabelSelector, labels: Labels): boolean {
  if (!matchesMap(sel.matchLabels, labels)) return false;
  for (const r of sel.matchExpressions) {
    const has = Object.hasOwn(labels, r.key);
    const v = labels[r.key];
    switch (r.operator) {
      case 'In':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'NotIn':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/**
 * Reads a metav1.LabelSelector at parent[key]; undefined when absent (errors are recorded). With
 * `validate` (a built-in kind's selector), keys and values are checked as the API server's
 * metav1validation ValidateLabelSelector does: matchLabels by ValidateLabels, expression keys as
 * qualified names and their values as label values. A custom resource's selector (Gateway API)
 * gets only its schema, so it is read without.
 */
export function readLabelSelector(parent: Obj, key: string, path: string, check: Checker, validate = false): LabelSelector | undefined {
  const v = parent[key];
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) {
    check.error(`${path} must be a mapping with matchLabels and/or matchExpressions`, path);
    return undefined;
  }
  const matchLabels = validate ? check.labels(v, 'matchLabels', `${path}.matchLabels`) : check.stringMap(v, 'matchLabels', `${path}.matchLabels`);
  const matchExpressions: SelectorRequirement[] = [];
  check.arr(v, 'matchExpressions', `${path}.matchExpressions`).forEach((e, i) => {
    const ep = `${path}.matchExpressions[${i}]`;
    if (!isObj(e)) {
      check.error(`${ep} must be a mapping with key, operator and values`, ep);
      return;
    }
    const k = check.str(e, 'key', `${ep}.key`);
    const op = check.str(e, 'operator', `${ep}.operator`);
    const values: string[] = [];
    for (const x of check.arr(e, 'values', `${ep}.values`)) values.push(String(x));
    if (k === undefined || k === '') {
      check.error(`${ep}.key is missing`, ep);
      return;
    }
    if (op !== 'In' && op !== 'NotIn' && op !== 'Exists' && op !== 'DoesNotExist') {
      check.error(`${ep}.operator ${jsonExcerpt(op)} is not valid; use In, NotIn, Exists or DoesNotExist`, `${ep}.operator`);
      return;
    }
    if ((op === 'In' || op === 'NotIn') && values.length === 0) {
      check.error(`${ep}: operator ${op} needs at least one value`, ep);
      return;
    }
    if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0) {
      check.error(`${ep}: operator ${op} takes no values; remove them`, `${ep}.values`);
      return;
    }
    if (validate) {
      // ValidateLabelSelectorRequirement: the key a qualified name, each value a label value.
      const kp = qualifiedNameProblem(k);
      if (kp !== undefined) check.error(`${ep}.key ${jsonExcerpt(k)} ${kp}; use [prefix/]name such as app`, `${ep}.key`, 'invalid-label-key');
      values.forEach((x, j) => {
        const vp = labelValueProblem(x);
        if (vp !== undefined) check.error(`${ep}.values[${j}] ${jsonExcerpt(x)} ${vp}; use at most 63 letters, digits, '-', '_' and '.'`, `${ep}.values[${j}]`, 'invalid-label-value');
      });
    }
    matchExpressions.push({ key: k, operator: op, values });
  });
  return { matchLabels, matchExpressions };
}

export function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels).length === 0 && sel.matchExpressions.length === 0;
}
