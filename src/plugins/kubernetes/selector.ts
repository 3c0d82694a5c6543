// Kubernetes label selectors as `kubectl -l` and CoreDNS's `labels` option accept them:
// `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas; read into
// the cluster's LabelSelector, which matchesSelector (cluster/model/selector.ts) evaluates.
import type { LabelSelector, SelectorRequirement } from '../../cluster/model/selector.js';

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseTerm(term: string): SelectorRequirement {
  let m = /^([A-Za-z0-9._/-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (m) {
    const [, key, op, list] = m as unknown as [string, string, string, string];
    const values = [
      ...new Set(
        list
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== ''),
      ),
    ];
    return { key, operator: op === 'in' ? 'In' : 'NotIn', values };
  }
  m = /^([A-Za-z0-9._/-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)$/.exec(term);
  if (m) {
    const [, key, op, value] = m as unknown as [string, string, string, string];
    return { key, operator: op === '!=' ? 'NotIn' : 'In', values: [value] };
  }
  m = /^(!?)([A-Za-z0-9._/-]+)$/.exec(term);
  if (m) {
    const [, neg, key] = m as unknown as [string, string, string];
    return { key, operator: neg ? 'DoesNotExist' : 'Exists', values: [] };
  }
  throw new Error(`invalid label selector term "${term}": use key=value, key!=value, key in (a,b), key notin (a,b), key or !key`);
}

export function parseSelector(text: string): LabelSelector {
  return { matchLabels: {}, matchExpressions: splitTerms(text).map(parseTerm) };
}
