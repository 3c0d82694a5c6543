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

import { fileKind, readRegularText, UnreadableFile } from '../pkg/regular-file.js';
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { KeyError, parseServerKey, type ServerKey } from './corefile-keys.js';
import { excerpt, excerptLongWords } from './excerpt.js';
import { pushAll } from '../pkg/arrays.js';

export { excerpt } from './excerpt.js';

export type { ServerKey } from './corefile-keys.js';

export interface Directive {
  name: string;            // first token of the line, e.g. 'kubernetes'
  args: string[];          // remaining tokens on that line (quotes removed, env substituted)
  block?: Directive[];     // nested `{ ... }` block, one Directive per line
  file: string;            // file the token came from (the imported file for imported lines)
  line: number;            // 1-based line of `name`
  imported?: boolean;      // the line came from an imported file (its text is not echoed in errors)
}

export interface ServerBlock { keys: ServerKey[]; directives: Directive[]; file: string; line: number }

export class CorefileError extends Error {
  readonly reason: string;

  constructor(readonly file: string, readonly line: number, reason: string) {
    // The safety net behind the excerpts at each echo site: no word of a message is huge.
    reason = excerptLongWords(reason);
    super(`${file}:${line}: ${reason}`);
    this.reason = reason;
    this.name = 'CorefileError';
  }
}

/**
 * Every error found in one run, in line order (the main Corefile first, then imported files in
 * the order they were read). `file`, `line` and `reason` are those of the first error, so code
 * that reports one error still works; the message lists them all, one per line.
 */
export class CorefileErrors extends CorefileError {
  constructor(readonly errors: readonly CorefileError[]) {
    super(errors[0]!.file, errors[0]!.line, errors[0]!.reason);
    this.name = 'CorefileErrors';
    this.message = errors.map((e) => e.message).join('\n');
  }
}

/** The individual errors of a CorefileError (one, or all of a CorefileErrors); undefined for other errors. */
export function corefileErrors(err: unknown): readonly CorefileError[] | undefined {
  if (err instanceof CorefileErrors) return err.errors;
  if (err instanceof CorefileError) return [err];
  return undefined;
}

/**
 * Sorts errors into line order (files in `fileOrder` first, in that order, then the others in
 * the order their first error was found) and drops repeats of the same file, line and reason.
 */
function sortErrors(errors: readonly CorefileError[], fileOrder: readonly string[] = [], max = processLimits.maxErrors): CorefileError[] {
  const rank = new Map<string, number>();
  for (const f of fileOrder) if (!rank.has(f)) rank.set(f, rank.size);
  for (const e of errors) if (!rank.has(e.file)) rank.set(e.file, rank.size);
  const seen = new Set<string>();
  const out: CorefileError[] = [];
  for (const e of errors) {
    const key = `${e.file}\0${e.line}\0${e.reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  // Array.prototype.sort is stable: errors on one line keep the order they were found in.
  out.sort((a, b) => rank.get(a.file)! - rank.get(b.file)! || a.line - b.line);
  if (out.length <= max) return out;
  const last = out[max - 1]!;
  return [...out.slice(0, max), new CorefileError(last.file, last.line,
    `stopped after ${max} errors (--max-corefile-errors); fix these and run again`)];
}

/** True once `errors` holds as many errors as are reported: time to stop looking for more. */
export function enoughErrors(errors: readonly CorefileError[]): boolean {
  return errors.length > processLimits.maxErrors;
}

/** Throws nothing for no errors, the error itself for one, a CorefileErrors for several. */
export function throwErrors(errors: readonly CorefileError[], fileOrder: readonly string[] = []): void {
  if (errors.length === 0) return;
  const sorted = sortErrors(errors, fileOrder);
  throw sorted.length === 1 ? sorted[0]! : new CorefileErrors(sorted);
}

/** Limits on reading a Corefile and its imports (see README, Limits). */
export interface CorefileLimits {
  /** Bytes of one file (the Corefile or one imported file). */
  maxBytes: number;
  /** Snippet imports, and separately files imported (each file a glob matches counts). */
  maxImports: number;
  /** Imports of imports: how deep one import may nest. */
  maxImportDepth: number;
  /** Tokens after every import is expanded. */
  maxTokens: number;
  /** Errors reported in one run; reading stops there (a file that is not a Corefile has one per line). */
  maxErrors: number;
  /** Blocks inside blocks: a server block's is 1, a plugin's option block 2. */
  maxNesting: number;
  /**
   * Zones of the server block keys, and separately of one directive's zone arguments, once a
   * CIDR off an octet boundary is split (10.0.0.0/25 is 128 zones).
   */
  maxZones: number;
  /** Distinct listen address and port pairs of all server blocks (each a UDP and a TCP socket). */
  maxListeners: number;
}

export const defaultCorefileLimits: Readonly<CorefileLimits> = Object.freeze({
  maxBytes: 1024 * 1024,
  // CoreDNS's cap on snippet and on file expansions (coredns/caddy caddyfile/parse.go).
  maxImports: 1000,
  maxImportDepth: 10,
  maxTokens: 1_000_000,
  maxErrors: 100,
  maxNesting: 16,
  maxZones: 10_000,
  maxListeners: 256,
});

let processLimits: CorefileLimits = { ...defaultCorefileLimits };

/** Sets the limits every later parse uses unless its options give others (the CLI flags). */
export function setCorefileLimits(limits: Partial<CorefileLimits>): void {
  processLimits = { ...processLimits, ...limits };
}

export function corefileLimits(): Readonly<CorefileLimits> {
  return processLimits;
}

export interface ParseOptions {
  /** Variables for {$VAR}, {%VAR%} and {env.VAR}; default process.env. */
  env?: Record<string, string | undefined>;
  /** Reads an imported file (absolute path); default readCorefileText (regular files only, size-capped). */
  readFile?: (path: string) => string;
  /** Lists a directory for `import` globs; default fs.readdirSync. */
  readDir?: (dir: string) => string[];
  /** Called for conditions CoreDNS only logs, e.g. an import glob matching no file. */
  onWarning?: (message: string) => void;
  /** Overrides of the process-wide limits (setCorefileLimits). */
  limits?: Partial<CorefileLimits>;
}

/** What parseCorefileCollect returns: the blocks that parsed, and every error found. */
export interface ParseResult {
  blocks: ServerBlock[];
  errors: CorefileError[];
  /** Files in the order they were read, the Corefile first: the order errors are reported in. */
  files: string[];
}

interface Token {
  text: string;            // raw text, quotes removed, env NOT yet substituted
  quoted: boolean;         // quoted tokens are never structural ("{" is just text)
  file: string;
  line: number;
  nl: boolean;             // first token on its line in its source file
  indent: number;          // characters before the first token of its line (to place a missing '}')
}

/** One source of tokens: the Corefile, an imported file or a snippet body, read in order. */
interface Frame {
  toks: readonly Token[];
  pos: number;
  chain: string[];         // import chain that produced these tokens, for cycle detection
  imported: boolean;       // the first token takes the place of `import`, so it starts a line
}

/** A limit was reached: stop parsing, since going on would only read more of the same. */
class Fatal extends Error {}

/**
 * Reads a Corefile or an imported file: regular files only (a FIFO would block forever, a
 * device like /dev/zero never ends) and at most maxBytes, checked on the open descriptor.
 */
export function readCorefileText(path: string, maxBytes = processLimits.maxBytes): string {
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
    if (ch === '\n') { line++; nl = true; i++; lineStart = i; continue; }
    if (/\s/.test(ch)) { i++; continue; }
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
          if (next === '\n') { line++; lineStart = i + 2; }
          i += 2;
          continue;
        }
        if (c === '"') { closed = true; i++; break; }
        if (c === '\n') { line++; lineStart = i + 1; }
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

// ---- env substitution ------------------------------------------------------

// {$VAR} and {%VAR%} are CoreDNS's forms; {env.VAR} is accepted as well. CoreDNS (caddy's
// replaceEnvVars) turns an unset variable into an empty string, which silently changes what a
// line means (`{$ZONE}:53` becomes the root zone); here it is an error naming the variable.
const ENV_REF = /\{\$([^{}]+)\}|\{%([^{}%]+)%\}|\{env\.([^{}]+)\}/g;

// ---- parser ----------------------------------------------------------------

/**
 * Parses a Corefile and returns every server block that parsed, with every error found: the
 * parser keeps going after an error wherever the structure is still clear (a bad key, an unset
 * variable, an import that fails), and stops at the first error that leaves it unclear (braces).
 */
export function parseCorefileCollect(text: string, file: string, opts: ParseOptions = {}): ParseResult {
  const limits = { ...processLimits, ...opts.limits };
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
    text = readCorefileText(path, { ...processLimits, ...opts.limits }.maxBytes);
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
      const id = `dns://${k.zone}${port === undefined ? '' : `:${port}`}`;
      const first = seen.get(id);
      if (first) {
        const where = first === b ? 'earlier in this block' : `by the server block at ${first.file}:${first.line}`;
        errors.push(new CorefileError(b.file, b.line,
          `cannot serve ${excerpt(id, 80)} - it is already defined ${where}; remove one of the keys or give it another port`));
        continue;
      }
      seen.set(id, b);
    }
  }
  return errors;
}

class Parser {
  private readonly env: Record<string, string | undefined>;
  private readonly snippets = new Map<string, Token[]>();
  private snippetImports = 0;
  private fileImports = 0;
  private tokenCount = 0;
  private zoneCount = 0;
  private frames: Frame[] = [];
  readonly blocks: ServerBlock[] = [];
  readonly errors: CorefileError[] = [];
  readonly files: string[];
  /** Every '{' matched so far with its '}', in the order they closed (see leftOpen). */
  private readonly closed: { open: Token; close: Token }[] = [];

  constructor(file: string, private readonly opts: ParseOptions, private readonly limits: CorefileLimits) {
    this.env = opts.env ?? process.env;
    this.files = [file];
  }

  start(toks: Token[], root: string): void {
    this.push(toks, [`file:${root}`], false, undefined);
  }

  // ---- token stream: a stack of frames, so an import costs no copying of what follows it

  private push(toks: readonly Token[], chain: string[], imported: boolean, at: Token | undefined): void {
    this.tokenCount += toks.length;
    if (this.tokenCount > this.limits.maxTokens) {
      this.fatal(at ?? toks[0]!, `more than ${this.limits.maxTokens} tokens after expanding imports (--max-corefile-tokens); check for snippets imported many times`);
    }
    if (toks.length > 0) this.frames.push({ toks, pos: 0, chain, imported });
  }

  /** The k-th token from the current position, across frames. */
  private peek(k = 0): Token | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i]!;
      const left = f.toks.length - f.pos;
      if (k < left) {
        const t = f.toks[f.pos + k]!;
        return f.imported && f.pos + k === 0 && !t.nl ? { ...t, nl: true } : t;
      }
      k -= left;
    }
    return undefined;
  }

  private advance(n = 1): void {
    for (; n > 0; n--) {
      const f = this.top();
      if (!f) return;
      f.pos++;
    }
  }

  /** The frame the next token comes from (dropping frames read to their end). */
  private top(): Frame | undefined {
    for (let f = this.frames[this.frames.length - 1]; f; f = this.frames[this.frames.length - 1]) {
      if (f.pos < f.toks.length) return f;
      this.frames.pop();
    }
    return undefined;
  }

  // ---- errors

  private err(t: Token, reason: string): CorefileError { return new CorefileError(t.file, t.line, reason); }
  private report(t: Token, reason: string): void {
    this.errors.push(this.err(t, reason));
    // Past the cap, stop: sortErrors says where reading stopped.
    if (this.errors.length > this.limits.maxErrors) throw new Fatal(reason);
  }
  private fatal(t: Token, reason: string): never {
    this.report(t, reason);
    throw new Fatal(reason);
  }

  /** A token's text with environment variables substituted; unset or empty results are errors. */
  private word(t: Token): string {
    if (!t.text.includes('{')) return t.text;
    const unset: string[] = [];
    const out = t.text.replace(ENV_REF, (_m, a?: string, b?: string, c?: string) => {
      const name = (a ?? b ?? c)!;
      const v = this.env[name];
      if (v === undefined) unset.push(name);
      return v ?? '';
    });
    if (unset.length > 0) {
      const names = unset.map((u) => excerpt(u)).join(', ');
      this.report(t, `environment variable ${names} is not set (used in '${excerpt(t.text)}'); set it, or write the value instead`);
    } else if (out === '') {
      this.report(t, `'${excerpt(t.text)}' is empty once environment variables are substituted; give the variable a value`);
    }
    return out;
  }

  /** True for tokens of a file other than the Corefile itself (an imported file). */
  private imported(t: Token): boolean { return t.file !== this.files[0]; }

  private is(t: Token | undefined, brace: '{' | '}'): boolean { return !!t && !t.quoted && t.text === brace; }
  private isImport(t: Token): boolean { return !t.quoted && t.text === 'import'; }

  parseAll(): void {
    for (let t = this.peek(); t; t = this.peek()) {
      if (this.is(t, '}')) this.fatal(t, "unexpected '}' with no matching '{'");
      if (this.is(t, '{')) this.fatal(t, "unexpected '{': a block must follow server block keys, e.g. 'example.org {'");
      if (this.isImport(t)) { this.expandImport(); continue; }
      const block = this.serverBlock();
      if (block) this.blocks.push(block);
    }
  }

  /** One server block or snippet definition; returns undefined for a snippet or a block with no valid key. */
  private serverBlock(): ServerBlock | undefined {
    const first = this.peek()!;
    const keyToks = this.keys();
    const open = this.peek();

    const firstKey = keyToks[0]?.text ?? '';
    if (keyToks.length === 1 && firstKey.startsWith('(') && firstKey.endsWith(')')) {
      this.snippet(first, firstKey.slice(1, -1), open);
      return undefined;
    }

    let directives: Directive[];
    if (this.is(open, '{')) {
      this.advance();
      directives = this.lines(open, 1);
    } else if (!open) {
      directives = []; // keys with nothing after them: a server with no plugins
    } else if (this.is(open, '}')) {
      this.fatal(open, "unexpected '}' with no matching '{'");
    } else {
      // Like Caddy, a Corefile holding one server may omit the braces.
      directives = this.lines(undefined, 0);
      const stray = directives.find((d) => /[.:/()]/.test(d.name));
      if (stray) {
        // Names no token: this is what a file that is not a Corefile (an `import /etc/passwd`)
        // runs into, and its lines must not end up in a log.
        this.fatal(first, 'missing server block body: the keys on this line are not followed by \'{\', '
          + `so everything after them is read as their plugins, but the line ${stray.file}:${stray.line} looks like another server block; `
          + "put '{' after the keys and a matching '}' after their plugins");
      }
    }

    const keys: ServerKey[] = [];
    for (const k of keyToks) {
      try {
        const parsed = parseServerKey(k.text);
        this.zoneCount += parsed.length;
        if (this.zoneCount > this.limits.maxZones) {
          this.fatal(k, `more than ${this.limits.maxZones} server block zones (--max-corefile-zones); a CIDR key off an octet boundary counts every zone it is split into`);
        }
        for (const key of parsed) keys.push(key);
      } catch (e) {
        // A key read from an imported file is not quoted back: the file may not be a Corefile.
        if (e instanceof KeyError) this.report(k, this.imported(k) ? 'this server block key is not a zone, CIDR or [scheme://]zone:port' : e.message);
        else throw e;
      }
    }
    // A block whose keys all failed has been reported; serving it under no zone would only add
    // confusing errors from its plugins.
    if (keys.length === 0) return undefined;
    return { keys, directives, file: first.file, line: first.line };
  }

  /** Key tokens (env substituted, split on commas) up to '{' or end of line. */
  private keys(): Token[] {
    const out: Token[] = [];
    let expectAnother = false;
    let first = true;
    let last: Token | undefined;
    for (let t = this.peek(); ; t = this.peek()) {
      if (!t) {
        if (expectAnother) this.fatal(last!, "the key list ends with ',' but no key follows; remove the trailing comma");
        break;
      }
      if (this.is(t, '{') || this.is(t, '}')) {
        if (expectAnother) this.fatal(t, `expected another key after ',' but found '${t.text}'; remove the trailing comma`);
        break;
      }
      // A trailing comma continues the key list on the next line.
      if (!first && t.nl && !expectAnother) break;
      const substituted = this.word(t);
      const text = substituted === '' && t.text !== '' ? undefined : substituted; // already reported
      this.advance();
      last = t;
      first = false;
      if (text === undefined) continue;
      const parts = text.split(',');
      expectAnother = text.endsWith(',') && text.length > 0;
      if (expectAnother) parts.pop();
      for (const part of parts) {
        if (part === '') this.report(t, 'empty server block key; remove the stray comma or "" from the key list');
        else out.push({ ...t, text: part });
      }
    }
    return out;
  }

  /** Store a `(name) { ... }` snippet's raw tokens; they are parsed where imported. */
  private snippet(def: Token, name: string, open: Token | undefined): void {
    if (name === '') this.fatal(def, "snippet name is empty: write '(name) {'");
    if (!this.is(open, '{')) this.fatal(def, `snippet (${excerpt(name)}) must be followed by '{ ... }' on the same line`);
    this.advance();
    const body: Token[] = [];
    let depth = 1;
    for (;;) {
      const t = this.peek();
      if (!t) this.fatal(open!, `snippet (${excerpt(name)}) is never closed: missing '}' for the '{' on this line`);
      this.advance();
      if (this.is(t, '{')) depth++;
      if (this.is(t, '}') && --depth === 0) break;
      body.push(t);
    }
    if (this.snippets.has(name)) {
      this.report(def, `snippet (${excerpt(name)}) is already defined; snippet names must be unique`);
      return;
    }
    this.snippets.set(name, body);
  }

  /**
   * Lines up to the '}' matching `open` (or to end of input when `open` is
   * undefined, for a brace-less server). Each line is a Directive; a '{' on a
   * line opens its nested block, and a '}' may end a line early.
   */
  private lines(open: Token | undefined, depth: number): Directive[] {
    // Each nested block is one level of recursion here; bound it before the stack is.
    if (open && depth > this.limits.maxNesting) {
      this.fatal(open, `blocks nest more than ${this.limits.maxNesting} deep (--max-corefile-nesting); a plugin's options take one block`);
    }
    const out: Directive[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) {
        if (open) {
          const left = this.leftOpen(open);
          if (left) {
            this.fatal(left.open, "unbalanced braces: the '{' on this line is never closed; add a matching '}' "
              + `(the '}' on line ${left.close.line} lines up with the block of line ${open.line}: that is the one it was written to close)`);
          }
          this.fatal(open, "unbalanced braces: the '{' on this line is never closed; add a matching '}'");
        }
        return out;
      }
      if (this.is(t, '}')) {
        if (!open) this.fatal(t, "unexpected '}' with no matching '{'");
        this.closed.push({ open, close: t });
        this.advance();
        return out;
      }
      if (this.is(t, '{')) this.fatal(t, "unexpected '{': a block must open on the same line as its directive, e.g. 'health {'");
      if (this.isImport(t)) { this.expandImport(); continue; }

      const d: Directive = { name: this.word(t), args: [], file: t.file, line: t.line };
      if (this.imported(t)) d.imported = true;
      this.advance();
      for (let a = this.peek(); a && !a.nl && !this.is(a, '}'); a = this.peek()) {
        if (this.is(a, '{')) {
          this.advance();
          d.block = this.lines(a, depth + 1);
          const after = this.peek();
          if (after && !after.nl && !this.is(after, '}')) {
            this.fatal(after, `unexpected '${excerpt(after.text)}' after '}' closing the block of '${excerpt(d.name)}'; start it on a new line`);
          }
          break;
        }
        d.args.push(this.word(a));
        this.advance();
      }
      out.push(d);
    }
  }

  /**
   * Which block a missing '}' belongs to, when the input ends with `open` unclosed. Braces pair
   * innermost first, so a '}' missing from a nested block makes the next '}' close that block and
   * leaves the outer one open: the parse alone blames the outer '{'. The indentation tells what
   * was meant: the first '}' inside `open`, in the same file, that starts a line to the left of
   * the line that opened its block closes a block it was not written for; that block is the one
   * left open. Undefined when every '}' inside lines up with its block.
   */
  private leftOpen(open: Token): { open: Token; close: Token } | undefined {
    const inside = this.closed.filter((p) => p.open.file === open.file && p.close.file === open.file && p.open.line > open.line);
    inside.sort((a, b) => a.open.line - b.open.line);
    return inside.find((p) => p.close.nl && p.close.indent < p.open.indent && p.close.indent <= open.indent);
  }

  /** Replaces `import ARG` at the current position with the snippet's or files' tokens. */
  private expandImport(): void {
    const imp = this.peek()!;
    const chain = this.top()!.chain;
    const arg = this.peek(1);
    if (!arg || arg.nl || this.is(arg, '{') || this.is(arg, '}')) {
      this.advance();
      this.report(imp, 'import needs one argument: a snippet name or a file/glob relative to this file');
      return;
    }
    this.advance(2);
    const after = this.peek();
    if (after && !after.nl && !this.is(after, '}')) {
      // Skip the rest of the line: it is not clear what was meant.
      while (this.peek() && !this.peek()!.nl && !this.is(this.peek(), '}')) this.advance();
      this.report(imp, `import takes exactly one argument (a snippet name or a file/glob), but '${excerpt(after.text)}' follows '${excerpt(arg.text)}'`);
      return;
    }
    const pattern = this.word(arg);
    if (pattern === '') {
      if (arg.text === '') this.report(imp, 'import needs a non-empty snippet name or file path');
      return;
    }
    if (chain.length > this.limits.maxImportDepth) {
      this.report(imp, `imports nest more than ${this.limits.maxImportDepth} deep (--max-corefile-import-depth): ${chain.map(describe).map((d) => excerpt(d, 80)).join(' imports ')}`);
      return;
    }

    const snippet = this.snippets.get(pattern);
    if (snippet) {
      if (++this.snippetImports > this.limits.maxImports) {
        this.fatal(imp, `more than ${this.limits.maxImports} snippet imports expanded (--max-corefile-imports); check for runaway snippet imports`);
      }
      const next = this.withChain(imp, chain, `snippet:${pattern}`);
      if (next) this.push(snippet, next, true, imp);
      return;
    }
    const paths = this.resolveImport(imp, pattern);
    if (this.fileImports + paths.length > this.limits.maxImports) {
      this.fatal(imp, `more than ${this.limits.maxImports} files imported (--max-corefile-imports); import fewer files`);
    }
    this.fileImports += paths.length;
    // Pushed in reverse, so the first file is read first.
    const frames: { toks: Token[]; chain: string[] }[] = [];
    for (const path of paths) {
      const next = this.withChain(imp, chain, `file:${path}`);
      if (!next) continue;
      const text = this.read(imp, path);
      if (text === undefined) continue;
      if (!this.files.includes(path)) this.files.push(path);
      let toks: Token[];
      try {
        toks = this.balanced(lex(text, path));
      } catch (e) {
        if (!(e instanceof CorefileError)) throw e;
        this.errors.push(e);
        continue;
      }
      frames.push({ toks, chain: next });
    }
    for (const f of frames.reverse()) this.push(f.toks, f.chain, true, imp);
  }

  // Caddy would let an imported file's braces pair up with the importer's; an
  // error inside the imported file is far easier to act on.
  private balanced(toks: Token[]): Token[] {
    const open: Token[] = [];
    for (const t of toks) {
      if (this.is(t, '{')) open.push(t);
      else if (this.is(t, '}') && !open.pop()) throw this.err(t, "unexpected '}' with no matching '{' in this imported file");
    }
    const unclosed = open.pop();
    if (unclosed) throw this.err(unclosed, "unbalanced braces: the '{' on this line is never closed in this imported file; add a matching '}'");
    return toks;
  }

  /** The chain of what `imp` imports, or undefined (reported) when it is a cycle. */
  private withChain(imp: Token, chain: string[], id: string): string[] | undefined {
    if (chain.includes(id)) {
      const names = [...chain.slice(chain.indexOf(id)), id].map(describe);
      this.report(imp, `import cycle: ${names.join(' imports ')}; remove one of these imports`);
      return undefined;
    }
    return [...chain, id];
  }

  /** Files named by `pattern`, relative to the importing token's file; [] (reported) on error. */
  private resolveImport(imp: Token, pattern: string): string[] {
    const full = nodePath.resolve(nodePath.dirname(nodePath.resolve(imp.file)), pattern);
    const wild = /[*?[\]]/.test(pattern);
    if (!wild) {
      if (!this.exists(full)) {
        this.report(imp, `import ${excerpt(pattern)}: no snippet (${excerpt(pattern)}) is defined above this line and no file ${excerpt(full, 200)} exists`);
        return [];
      }
      return [full];
    }
    // CoreDNS allows one wildcard, to keep glob expansion cheap (caddy issue #2096).
    const count = (c: string) => pattern.split(c).length - 1;
    if (count('*') > 1 || count('?') > 1 || (pattern.includes('[') && pattern.includes(']'))) {
      this.report(imp, `import pattern '${excerpt(pattern)}' may contain only one wildcard (* or ?)`);
      return [];
    }
    const dir = nodePath.dirname(full);
    const base = nodePath.basename(full);
    if (/[*?]/.test(dir)) {
      this.report(imp, `import pattern '${excerpt(pattern)}': wildcards are only supported in the file name, not in directories`);
      return [];
    }
    const re = new RegExp(`^${base.replace(/[.+^${}()|\\]/g, '\\$&').replace('*', '[^/]*').replace('?', '[^/]')}$`);
    let names: string[];
    try {
      names = (this.opts.readDir ?? ((d: string) => fs.readdirSync(d)))(dir);
    } catch {
      names = [];
    }
    const matches = names.filter((nm) => re.test(nm)).sort().map((nm) => nodePath.join(dir, nm));
    if (matches.length === 0) this.opts.onWarning?.(`${imp.file}:${imp.line}: no files match import pattern ${excerpt(pattern)}`);
    return matches;
  }

  private exists(path: string): boolean {
    if (!this.opts.readFile) return fs.existsSync(path);
    try { this.opts.readFile(path); return true; } catch { return false; }
  }

  private read(imp: Token, path: string): string | undefined {
    try {
      return (this.opts.readFile ?? ((p: string) => readCorefileText(p, this.limits.maxBytes)))(path);
    } catch (e) {
      this.report(imp, `could not import ${excerpt(path, 200)}: ${(e as Error).message}`);
      return undefined;
    }
  }
}

function describe(id: string): string {
  return id.startsWith('snippet:') ? `snippet (${id.slice(8)})` : id.slice(5);
}
