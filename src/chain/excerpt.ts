// What an error message may echo of a token read from a file or the environment. (A manifest
// value is echoed as JSON instead: jsonExcerpt in cluster/model/finding.ts.)

const EXCERPT_CHARS = 40;
const LONG_WORD = 200;

/**
 * At most `max` characters (then "..."), control and non-ASCII characters escaped, so a message
 * never carries a whole line of a file that is not a Corefile, nor a huge token.
 */
export function excerpt(s: string, max = EXCERPT_CHARS): string {
  const cut = s.length > max ? s.slice(0, max) : s;
  // eslint-disable-next-line no-control-regex
  const safe = cut.replace(/[\u0000-\u001f\u007f-\uffff]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return s.length > max ? `${safe}...` : safe;
}

/** Cuts every run of more than 200 non-space characters (a long path stays whole) to an excerpt. */
export function excerptLongWords(message: string): string {
  if (message.length <= LONG_WORD) return message;
  return message.replace(new RegExp(`\\S{${LONG_WORD + 1},}`, 'g'), (w) => excerpt(w));
}
