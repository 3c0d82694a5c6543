// Kubernetes label selectors as `kubectl -l` and CoreDNS's `labels` option accept them:
// `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas.

export type LabelSelector = (labels: Readonly<Record<string, string>>) => boolean;

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

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

function parseTerm(term: string): Requirement {
  let m = /^([A-Za-z0-9._/-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (m) {
    const [, key, op, list] = m as unknown as [string, string, string, string];
    const values = new Set(list.split(',').map((v) => v.trim()).filter((v) => v !== ''));
    return op === 'in'
      ? (l) => key in l && values.has(l[key]!)
      : (l) => !(key in l) || !values.has(l[key]!);
  }
  m = /^([A-Za-z0-9._/-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)$/.exec(term);
  if (m) {
    const [, key, op, value] = m as unknown as [string, string, string, string];
    return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  m = /^(!?)([A-Za-z0-9._/-]+)$/.exec(term);
  if (m) {
    const [, neg, key] = m as unknown as [string, string, string];
    return neg ? (l) => !(key in l) : (l) => key in l;
  }
  throw new Error(`invalid label selector term "${term}": use key=value, key!=value, key in (a,b), key notin (a,b), key or !key`);
}

export function parseSelector(text: string): LabelSelector {
  const reqs = splitTerms(text).map(parseTerm);
  return (labels) => reqs.every((r) => r(labels));
}
