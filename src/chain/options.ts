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
