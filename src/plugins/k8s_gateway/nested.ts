// Lookups a plugin sends back through the server (a load balancer host name resolved for an
// answer) can lead back to the same plugin: a status hostname that names itself, or two that
// name each other. The depth travels with the async call chain, so each nested lookup knows
// how deep it is and a loop ends after a few steps instead of growing without bound.
import { AsyncLocalStorage } from 'node:async_hooks';

/** Nested lookups allowed below one client query (the kubernetes plugin chases at most 8 CNAMEs). */
export const MAX_NESTED_LOOKUPS = 8;

const depth = new AsyncLocalStorage<number>();

/** Runs `f` one level deeper; undefined (without calling it) once the limit is reached. */
export function nestedLookup<T>(f: () => Promise<T>): Promise<T> | undefined {
  const d = depth.getStore() ?? 0;
  if (d >= MAX_NESTED_LOOKUPS) return undefined;
  return depth.run(d + 1, f);
}
