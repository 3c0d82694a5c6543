// "Did you mean": the known name nearest to a misspelt one, for errors about a Corefile plugin, a
// Service's targetPort or a --pod argument. Bounded: a word far from every name suggests nothing.

/**
 * Levenshtein distance of `a` and `b`, or `max + 1` as soon as it is sure to exceed `max`. With
 * `swaps`, a swap of two neighbours counts as one edit (optimal string alignment: "nmae" is one
 * edit from "name"), as kind and field names are compared at admission.
 */
export function editDistance(a: string, b: string, max = Infinity, swaps = false): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (swaps && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      next[j] = d;
      if (d < least) least = d;
    }
    if (least > max) return max + 1;
    before = row;
    row = next;
  }
  return row[b.length]!;
}

/**
 * The name of `names` nearest to `word` (case ignored) within `max` edits, the first in
 * alphabetical order on a tie; undefined when none is that near, or `word` is one of them.
 */
export function closest(word: string, names: Iterable<string>, max = 2): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = max + 1;
  for (const n of names) {
    if (n === word) return undefined;
    const d = editDistance(w, n.toLowerCase(), max);
    if (d < bestD || (d === bestD && best !== undefined && n < best)) {
      best = n;
      bestD = d;
    }
  }
  return bestD <= max ? best : undefined;
}
