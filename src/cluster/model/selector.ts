// Label selectors: Service selectors are plain maps (every key must equal); workload selectors
// (metav1.LabelSelector) are matchLabels AND matchExpressions with In, NotIn, Exists, DoesNotExist,
// as in k8s.io/apimachinery/pkg/labels. An empty LabelSelector matches everything; a missing one
// matches nothing (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()).

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

export function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels).length === 0 && sel.matchExpressions.length === 0;
}
