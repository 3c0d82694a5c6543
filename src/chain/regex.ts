// Regular expressions written in a Corefile, compiled with RE2JS (a JavaScript port of RE2):
// CoreDNS compiles them with Go's regexp, which is RE2, so the syntax is Go's and matching takes
// time linear in the input. JavaScript's own RegExp backtracks: a pattern such as
// `^(([a-z0-9]+)-?)*\.rx\.` held the server for seconds on one 30-character label.
import { RE2JS } from 're2js';

export interface CorefileRegex {
  /** The pattern as written. */
  readonly source: string;
  /** Capturing groups in the pattern (group 0, the whole match, not counted). */
  readonly groupCount: number;
  /** Go's FindStringSubmatch: the leftmost match and its groups ('' for a group that took no part), or null. */
  exec(input: string): string[] | null;
  /** Go's MatchString: a match anywhere in the input. */
  test(input: string): boolean;
}

/** Compiles `pattern` in Go's RE2 syntax; throws an Error saying what is wrong with it. */
export function compileRegex(pattern: string): CorefileRegex {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw new Error((err as Error).message);
  }
  const groupCount = re.groupCount();
  return {
    source: pattern,
    groupCount,
    exec(input) {
      const m = re.exec(input) as (string | null | undefined)[] | null;
      if (!m) return null;
      const out: string[] = [];
      for (let i = 0; i <= groupCount; i++) out.push(m[i] ?? '');
      return out;
    },
    test: (input) => re.test(input),
  };
}
