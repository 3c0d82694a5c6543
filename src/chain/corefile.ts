// Corefile parser: the Caddyfile dialect CoreDNS reads (github.com/coredns/caddy,
// caddyfile/lexer.go + parse.go), plus CoreDNS's server-key rules
// (core/dnsserver/register.go, plugin/normalize.go). See corefile-keys.ts for keys.
//
// Pipeline: lex each file into tokens that remember file, line and whether they
// start a line; then parse server blocks. `import` is resolved while parsing, as
// Caddy does, so a snippet or file may hold anything from one directive to whole
// server blocks: its tokens are read next (a stack of token frames, so an import
// copies nothing). The parser keeps going after an error wherever the structure
// stays clear, and every read is bounded (CorefileLimits).

import * as nodePath from 'node:path';
import { pushAll } from '../pkg/arrays.js';
import { excerpt } from './excerpt.js';
import { CorefileError, defaultCorefileLimits, sortErrors, throwErrors, type ParseOptions, type ParseResult, type ServerBlock } from './corefile-types.js';
import { lex, readCorefileText } from './corefile-lex.js';
import { Fatal, Parser } from './corefile-parse.js';

export { excerpt } from './excerpt.js';
export type { ServerKey } from './corefile-keys.js';
export { CorefileError, CorefileErrors, corefileErrors, defaultCorefileLimits, enoughErrors, throwErrors } from './corefile-types.js';
export type { CorefileLimits, Directive, ParseOptions, ParseResult, ServerBlock } from './corefile-types.js';
export { lex, readCorefileText } from './corefile-lex.js';

// ---- parser ----------------------------------------------------------------

/**
 * Parses a Corefile and returns every server block that parsed, with every error found: the
 * parser keeps going after an error wherever the structure is still clear (a bad key, an unset
 * variable, an import that fails), and stops at the first error that leaves it unclear (braces).
 */
export function parseCorefileCollect(text: string, file: string, opts: ParseOptions = {}): ParseResult {
  const limits = { ...defaultCorefileLimits, ...opts.limits };
  const p = new Parser(file, opts, limits);
  try {
    p.start(lex(text, file), nodePath.resolve(file));
    p.parseAll();
  } catch (e) {
    if (e instanceof CorefileError) p.errors.push(e);
    else if (!(e instanceof Fatal)) throw e;
  }
  pushAll(p.errors, duplicateKeyErrors(p.blocks));
  return { blocks: p.blocks, errors: sortErrors(p.errors, p.files, limits.maxErrors), files: p.files };
}

export function parseCorefile(text: string, file: string, opts: ParseOptions = {}): ServerBlock[] {
  const r = parseCorefileCollect(text, file, opts);
  throwErrors(r.errors, r.files);
  return r.blocks;
}

/** Reads a Corefile (a regular file of at most maxBytes) and parses it, collecting errors. */
export function loadCorefileCollect(path: string, opts: Omit<ParseOptions, 'readFile'> = {}): ParseResult {
  let text: string;
  try {
    text = readCorefileText(path, { ...defaultCorefileLimits, ...opts.limits }.maxBytes);
  } catch (e) {
    return { blocks: [], errors: [new CorefileError(path, 0, `cannot read Corefile: ${(e as Error).message}`)], files: [path] };
  }
  return parseCorefileCollect(text, path, opts);
}

export function loadCorefile(path: string, opts: Omit<ParseOptions, 'readFile'> = {}): ServerBlock[] {
  const r = loadCorefileCollect(path, opts);
  throwErrors(r.errors, r.files);
  return r.blocks;
}

/**
 * CoreDNS refuses two server keys with the same zone and port ("cannot serve X -
 * it is already defined"). parseCorefile runs this with port-less keys kept
 * distinct; call it again with the CLI's default port once that is known, so
 * that `example.org` and `example.org:53` collide when the default is 53.
 */
export function checkDuplicateKeys(blocks: ServerBlock[], defaultPort?: number): void {
  throwErrors(duplicateKeyErrors(blocks, defaultPort));
}

export function duplicateKeyErrors(blocks: readonly ServerBlock[], defaultPort?: number): CorefileError[] {
  const errors: CorefileError[] = [];
  const seen = new Map<string, ServerBlock>();
  for (const b of blocks) {
    for (const k of b.keys) {
      const port = k.port ?? defaultPort;
      const id = `${k.transport ?? 'dns'}://${k.zone}${port === undefined ? '' : `:${port}`}`;
      const first = seen.get(id);
      if (first) {
        const where = first === b ? 'earlier in this block' : `by the server block at ${first.file}:${first.line}`;
        errors.push(
          new CorefileError(b.file, b.line, `cannot serve ${excerpt(id, 80)} - it is already defined ${where}; remove one of the keys or give it another port`),
        );
        continue;
      }
      seen.set(id, b);
    }
  }
  return errors;
}
