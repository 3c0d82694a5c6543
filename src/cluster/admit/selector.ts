// Reading a metav1.LabelSelector from a manifest, with the API server's checks of its keys and values
// (model/selector.ts evaluates it).
import { jsonExcerpt } from '../model/finding.js';
import type { LabelSelector, SelectorRequirement } from '../model/selector.js';
import { type Checker, isObj, labelValueProblem, type Obj, qualifiedNameProblem } from './validate.js';

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
        if (vp !== undefined)
          check.error(
            `${ep}.values[${j}] ${jsonExcerpt(x)} ${vp}; use at most 63 letters, digits, '-', '_' and '.'`,
            `${ep}.values[${j}]`,
            'invalid-label-value',
          );
      });
    }
    matchExpressions.push({ key: k, operator: op, values });
  });
  return { matchLabels, matchExpressions };
}
