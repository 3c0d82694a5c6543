// A directive's option block, read so that every bad option line is reported in one run: option
// lines are independent, so an error in one does not stop the others from being checked.
import { type CorefileError, corefileErrors, throwErrors, type Directive } from './corefile.js';
import { pushAll } from '../pkg/arrays.js';

export function forEachOption(options: readonly Directive[] | undefined, fn: (o: Directive) => void): void {
  const errors: CorefileError[] = [];
  for (const o of options ?? []) {
    try {
      fn(o);
    } catch (err) {
      const found = corefileErrors(err);
      if (!found) throw err;
      pushAll(errors, found);
    }
  }
  throwErrors(errors);
}

/**
 * The `ttl SECONDS` argument k8s_gateway and k8s_external take (as CoreDNS's plugins do): an
 * integer in [0, 3600]. `fail` words the error for the plugin (its name before the reason).
 */
export function ttlSeconds(arg: string, line: number, fail: (line: number, reason: string) => never): number {
  if (!/^-?\d+$/.test(arg)) fail(line, `ttl "${arg}" is not an integer`);
  const t = Number(arg);
  if (t < 0 || t > 3600) fail(line, `ttl must be in range [0, 3600]: ${t}`);
  return t;
}
