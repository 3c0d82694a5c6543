// Shell-style globs with '*' (any run of characters, '/' included) and '?' (one character), for
// name patterns given on the command line (`--not-ready`). Matched by the iterative algorithm
// that remembers only the last '*': at most pattern x text steps, where a RegExp built from the
// glob (`.*` per star) backtracks polynomially in the number of stars.

/** Whether `text` matches `pattern` as a whole. */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const c = pattern.charCodeAt(p);
    if (p < pattern.length && (c === 0x3f || c === text.charCodeAt(t))) {
      p++;
      t++;
    } else if (p < pattern.length && c === 0x2a) {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      // The last star takes one more character; everything after it is matched again from there.
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (p < pattern.length && pattern.charCodeAt(p) === 0x2a) p++;
  return p === pattern.length;
}
