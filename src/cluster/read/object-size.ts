// What a document's value costs once its YAML aliases are expanded, against the limits on one
// object and one file: an alias bomb is refused before anything walks it.
import type { ManifestLimits } from '../model/limits.js';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A document whose value is too large (or cyclic) to use; the message completes "this document ...". */
export class TooBig extends Error {}

/**
 * Size of a value with every shared (aliased) part counted each time it appears: what a
 * serializer or deep copy of it would build. Stops as soon as `max` is passed.
 */
function expandedSize(v: unknown, max: number): number {
  let total = 0;
  const open = new Set<object>();
  const walk = (x: unknown): void => {
    total += 2;
    if (typeof x === 'string') total += x.length;
    else if (Array.isArray(x) || (typeof x === 'object' && x !== null)) {
      if (open.has(x)) throw new TooBig('refers to itself: an alias inside the node its anchor names; write the value out');
      open.add(x);
      if (Array.isArray(x)) for (const e of x) walk(e);
      else {
        for (const [k, e] of Object.entries(x)) {
          total += k.length;
          walk(e);
        }
      }
      open.delete(x);
    } else total += 8;
    if (total > max) throw new TooBig(`is larger than ${max} bytes once its aliases are expanded; shrink it or raise --max-manifest-object-bytes`);
  };
  walk(v);
  return total;
}

/** Throws TooBig when a document's value (a `*List`: as a file, each item as an object) is over the limits. */
export function checkSize(value: unknown, limits: ManifestLimits): void {
  const { maxObjectBytes, maxFileBytes } = limits;
  const items =
    isRecord(value) && typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items']) ? value['items'] : undefined;
  if (items) {
    expandedSize(value, Math.max(maxFileBytes, maxObjectBytes));
    for (const item of items) expandedSize(item, maxObjectBytes);
  } else expandedSize(value, maxObjectBytes);
}
