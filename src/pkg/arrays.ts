// Array helpers that never spread an array into a call's arguments: `out.push(...items)`,
// `Math.max(...items)` and `splice(at, 0, ...items)` put every item on the stack and throw
// "Maximum call stack size exceeded" past ~120k items (a big zone, a headless Service with
// tens of thousands of endpoints).

/** Appends every item of `items` to `out`, one at a time; returns `out`. */
export function pushAll<T>(out: T[], items: Iterable<T>): T[] {
  for (const item of items) out.push(item);
  return out;
}

/** Inserts `items` into `out` before index `at` (what `out.splice(at, 0, ...items)` does). */
export function insertAll<T>(out: T[], at: number, items: readonly T[]): T[] {
  if (items.length === 0) return out;
  const tail = out.splice(at);
  pushAll(out, items);
  return pushAll(out, tail);
}

/** The largest of `floor` and every value of `values` (`Math.max(floor, ...values)`). */
export function maxOf(values: Iterable<number>, floor = -Infinity): number {
  let max = floor;
  for (const v of values) if (v > max || Number.isNaN(v)) max = v;
  return max;
}
