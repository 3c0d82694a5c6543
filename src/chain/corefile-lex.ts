// Reading a Corefile's text (regular files only, size-capped) and the Caddyfile lexer: tokens that
// remember their file, line, and whether they start a line.
import { fileKind, readRegularText, UnreadableFile } from '../pkg/regular-file.js';
import { CorefileError, defaultCorefileLimits } from './corefile-types.js';

export interface Token {
  text: string; // raw text, quotes removed, env NOT yet substituted
  quoted: boolean; // quoted tokens are never structural ("{" is just text)
  file: string;
  line: number;
  nl: boolean; // first token on its line in its source file
  indent: number; // characters before the first token of its line (to place a missing '}')
}

/**
 * Reads a Corefile or an imported file: regular files only (a FIFO would block forever, a
 * device like /dev/zero never ends) and at most maxBytes, checked on the open descriptor.
 */
export function readCorefileText(path: string, maxBytes = defaultCorefileLimits.maxBytes): string {
  try {
    return readRegularText(path, maxBytes);
  } catch (err) {
    if (!(err instanceof UnreadableFile)) throw err;
    const p = err.problem;
    switch (p.kind) {
      case 'open':
        throw p.cause;
      case 'special':
        throw new Error(`it is ${fileKind(p.stats)}; a Corefile and its imports must be regular files`);
      case 'size':
        throw new Error(`it is ${p.size} bytes, more than the limit of ${p.limit} (--max-corefile-bytes)`);
      case 'grew':
        throw new Error(`it is more than the limit of ${p.limit} bytes (--max-corefile-bytes)`);
    }
  }
}

// ---- lexer -----------------------------------------------------------------

export function lex(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let nl = true;
  let indent = 0;
  let lineStart = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i]!;
    if (ch === '\n') {
      line++;
      nl = true;
      i++;
      lineStart = i;
      continue;
    }
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    // Caddy starts a comment at any unquoted '#', even in the middle of a word.
    if (ch === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    const start = line;
    if (nl) indent = i - lineStart;
    let val = '';
    let quoted = false;
    if (ch === '"') {
      quoted = true;
      i++;
      let closed = false;
      while (i < n) {
        const c = text[i]!;
        if (c === '\\' && i + 1 < n) {
          const next = text[i + 1]!;
          // Caddy only unescapes \" and \<newline>; other pairs stay verbatim.
          if (next !== '"' && next !== '\n') val += '\\';
          val += next;
          if (next === '\n') {
            line++;
            lineStart = i + 2;
          }
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        if (c === '\n') {
          line++;
          lineStart = i + 1;
        }
        val += c;
        i++;
      }
      if (!closed) throw new CorefileError(file, start, 'unterminated quoted string: add the closing "');
    } else {
      const from = i;
      while (i < n) {
        const c = text[i]!;
        if (c === ' ' || c === '\t' || c === '\n' || c === '#' || /\s/.test(c)) break;
        i++;
      }
      val = text.slice(from, i);
    }
    tokens.push({ text: val, quoted, file, line: start, nl, indent });
    nl = false;
  }
  return tokens;
}
