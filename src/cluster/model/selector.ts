// Label selectors, one type and one evaluator for every reader of labels: Service selectors are
// plain maps (every key must equal); a LabelSelector is matchLabels AND matchExpressions, as
// k8s.io/apimachinery/pkg/labels evaluates them. A workload's metav1.LabelSelector uses In, NotIn,
// Exists and DoesNotExist (admit/selector.ts reads it); a selector string of the k8s_gateway
// plugin's Corefile (labels.Parse) may also say Gt and Lt. An empty LabelSelector matches
// everything; a missing one matches nothing (metav1.LabelSelectorAsSelector(nil) is
// labels.Nothing()).

export interface SelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  /** Gt and Lt: one integer. */
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

/** labels.Requirement.Matches for each requirement: NotIn also matches labels without the key. */
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
      case 'Gt':
      case 'Lt': {
        // Both sides integers, as labels.Requirement.Matches parses them (strconv.ParseInt).
        if (!has || !INTEGER.test(v!)) return false;
        const n = BigInt(v!);
        const limit = BigInt(r.values[0]!);
        if (r.operator === 'Gt' ? n <= limit : n >= limit) return false;
        break;
      }
    }
  }
  return true;
}

const INTEGER = /^[+-]?\d+$/;

export function isEmptySelector(sel: LabelSelector): boolean {
  return Object.keys(sel.matchLabels).length === 0 && sel.matchExpressions.length === 0;
}
