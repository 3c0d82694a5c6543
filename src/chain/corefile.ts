// Corefile parser: the Caddyfile dialect CoreDNS reads (github.com/coredns/caddy,
// caddyfile/lexer.go + parse.go), plus CoreDNS's server-key rules
// (core/dnsserver/register.go, plugin/normalize.go). See corefile-keys.ts for keys.
//
// Pipeline: lex each file into tokens that remember file, line and whether they
// start a line; then parse server blocks. `import` is resolved while parsing by
// splicing tokens into the stream, as Caddy does, so a snippet or file may hold
// anything from one directive to whole server blocks.

import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { KeyError, parseServerKey, type ServerKey } from './corefile-keys.js';

export type { ServerKey } from './corefile-keys.js';

export interface Directive {
  name: string;            // first token of the line, e.g. 'kubernetes'
  args: string[];          // remaining tokens on that line (quotes removed, env substituted)
  block?: Directive[];     // nested `{ ... }` block, one Directive per line
  file: string;            // file the token came from (the imported file for imported lines)
  line: number;            // 1-based line of `name`
}

export interface ServerBlock { keys: ServerKey[]; directives: Directive[]; file: string; line: number }

export class CorefileError extends Error {
  constructor(readonly file: string, readonly line: number, readonly reason: string) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'CorefileError';
  }
}

export interface ParseOptions {
  /** Variables for {$VAR}, {%VAR%} and {env.VAR}; default process.env. */
  env?: Record<string, string | undefined>;
  /** Reads an imported file (absolute path); default fs.readFileSync(path, 'utf8'). */
  readFile?: (path: string) => string;
  /** Lists a directory for `import` globs; default fs.readdirSync. */
  readDir?: (dir: string) => string[];
  /** Called for conditions CoreDNS only logs, e.g. an import glob matching no file. */
  onWarning?: (message: string) => void;
}

interface Token {
  text: string;            // raw text, quotes removed, env NOT yet substituted
  quoted: boolean;         // quoted tokens are never structural ("{" is just text)
  file: string;
  line: number;
  nl: boolean;             // first token on its line in its source file
  chain: string[];         // import chain that produced this token, for cycle detection
}

// Bounds non-cyclic but exponential snippet fan-out (CoreDNS caps at 1000 too).
const MAX_IMPORTS = 1000;

// ---- lexer -----------------------------------------------------------------

export function lex(text: string, file: string, chain: string[] = []): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let nl = true;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i]!;
    if (ch === '\n') { line++; nl = true; i++; continue; }
    if (/\s/.test(ch)) { i++; continue; }
    // Caddy starts a comment at any unquoted '#', even in the middle of a word.
    if (ch === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    const start = line;
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
          if (next === '\n') line++;
          i += 2;
          continue;
        }
        if (c === '"') { closed = true; i++; break; }
        if (c === '\n') line++;
        val += c;
        i++;
      }
      if (!closed) throw new CorefileError(file, start, 'unterminated quoted string: add the closing "');
    } else {
      while (i < n) {
        const c = text[i]!;
        if (/\s/.test(c) || c === '#') break;
        val += c;
        i++;
      }
    }
    tokens.push({ text: val, quoted, file, line: start, nl, chain });
    nl = false;
  }
  return tokens;
}

// ---- env substitution ------------------------------------------------------

// {$VAR} and {%VAR%} are CoreDNS's forms; {env.VAR} is accepted as well.
// Unset variables become empty, as in CoreDNS.
const ENV_REF = /\{\$([^{}]+)\}|\{%([^{}%]+)%\}|\{env\.([^{}]+)\}/g;

function substitute(s: string, env: Record<string, string | undefined>): string {
  if (!s.includes('{')) return s;
  return s.replace(ENV_REF, (_m, a?: string, b?: string, c?: string) => env[(a ?? b ?? c)!] ?? '');
}

// ---- parser ----------------------------------------------------------------

export function parseCorefile(text: string, file: string, opts: ParseOptions = {}): ServerBlock[] {
  const root = nodePath.resolve(file);
  const p = new Parser(lex(text, file, [`file:${root}`]), opts);
  const blocks = p.parseAll();
  checkDuplicateKeys(blocks);
  return blocks;
}

export function loadCorefile(path: string, opts: Omit<ParseOptions, 'readFile'> = {}): ServerBlock[] {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new CorefileError(path, 0, `cannot read Corefile: ${(e as Error).message}`);
  }
  return parseCorefile(text, path, opts);
}

/**
 * CoreDNS refuses two server keys with the same zone and port ("cannot serve X -
 * it is already defined"). parseCorefile runs this with port-less keys kept
 * distinct; call it again with the CLI's default port once that is known, so
 * that `example.org` and `example.org:53` collide when the default is 53.
 */
export function checkDuplicateKeys(blocks: ServerBlock[], defaultPort?: number): void {
  const seen = new Map<string, ServerBlock>();
  for (const b of blocks) {
    for (const k of b.keys) {
      const port = k.port ?? defaultPort;
      const id = `dns://${k.zone}${port === undefined ? '' : `:${port}`}`;
      const first = seen.get(id);
      if (first) {
        const where = first === b ? 'earlier in this block' : `by the server block at ${first.file}:${first.line}`;
        throw new CorefileError(b.file, b.line,
          `cannot serve ${id} - it is already defined ${where}; remove one of the keys or give it another port`);
      }
      seen.set(id, b);
    }
  }
}

class Parser {
  private pos = 0;
  private readonly env: Record<string, string | undefined>;
  private readonly snippets = new Map<string, Token[]>();
  private imports = 0;

  constructor(private readonly toks: Token[], private readonly opts: ParseOptions) {
    this.env = opts.env ?? process.env;
  }

  private peek(): Token | undefined { return this.toks[this.pos]; }
  private word(t: Token): string { return substitute(t.text, this.env); }
  private is(t: Token | undefined, brace: '{' | '}'): boolean { return !!t && !t.quoted && t.text === brace; }
  private err(t: Token, reason: string): CorefileError { return new CorefileError(t.file, t.line, reason); }

  parseAll(): ServerBlock[] {
    const blocks: ServerBlock[] = [];
    for (let t = this.peek(); t; t = this.peek()) {
      if (this.is(t, '}')) throw this.err(t, "unexpected '}' with no matching '{'");
      if (this.is(t, '{')) throw this.err(t, "unexpected '{': a block must follow server block keys, e.g. 'example.org {'");
      if (!t.quoted && this.word(t) === 'import') { this.expandImport(); continue; }
      const block = this.serverBlock();
      if (block) blocks.push(block);
    }
    return blocks;
  }

  /** One server block or snippet definition; returns undefined for a snippet. */
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
      this.pos++;
      directives = this.lines(open);
    } else if (!open) {
      directives = []; // keys with nothing after them: a server with no plugins
    } else if (this.is(open, '}')) {
      throw this.err(open, "unexpected '}' with no matching '{'");
    } else {
      // Like Caddy, a Corefile holding one server may omit the braces.
      directives = this.lines(undefined);
      const stray = directives.find((d) => /[.:/()]/.test(d.name));
      if (stray) {
        throw this.err(first, `missing server block body: keys '${keyToks.map((k) => k.text).join(' ')}' are not followed by '{', `
          + `so everything after them is read as their plugins, but '${stray.name}' at ${stray.file}:${stray.line} looks like another server block; `
          + "put '{' after the keys and a matching '}' after their plugins");
      }
    }

    const keys: ServerKey[] = [];
    for (const k of keyToks) {
      try {
        keys.push(...parseServerKey(k.text));
      } catch (e) {
        if (e instanceof KeyError) throw this.err(k, e.message);
        throw e;
      }
    }
    return { keys, directives, file: first.file, line: first.line };
  }

  /** Key tokens (env substituted, split on commas) up to '{' or end of line. */
  private keys(): Token[] {
    const out: Token[] = [];
    let expectAnother = false;
    let first = true;
    for (let t = this.peek(); ; t = this.peek()) {
      if (!t) {
        if (expectAnother) throw this.err(out[out.length - 1]!, "the key list ends with ',' but no key follows; remove the trailing comma");
        break;
      }
      if (this.is(t, '{') || this.is(t, '}')) {
        if (expectAnother) throw this.err(t, `expected another key after ',' but found '${t.text}'; remove the trailing comma`);
        break;
      }
      // A trailing comma continues the key list on the next line.
      if (!first && t.nl && !expectAnother) break;
      const text = this.word(t);
      const parts = text.split(',');
      expectAnother = text.endsWith(',') && text.length > 0;
      if (expectAnother) parts.pop();
      for (const part of parts) {
        if (part === '') throw this.err(t, 'empty server block key; remove the stray comma or "" from the key list');
        out.push({ ...t, text: part });
      }
      this.pos++;
      first = false;
    }
    return out;
  }

  /** Store a `(name) { ... }` snippet's raw tokens; they are parsed where imported. */
  private snippet(def: Token, name: string, open: Token | undefined): void {
    if (name === '') throw this.err(def, "snippet name is empty: write '(name) {'");
    if (!this.is(open, '{')) throw this.err(def, `snippet (${name}) must be followed by '{ ... }' on the same line`);
    if (this.snippets.has(name)) throw this.err(def, `snippet (${name}) is already defined; snippet names must be unique`);
    this.pos++;
    const body: Token[] = [];
    let depth = 1;
    for (;;) {
      const t = this.peek();
      if (!t) throw this.err(open!, `snippet (${name}) is never closed: missing '}' for the '{' on this line`);
      this.pos++;
      if (this.is(t, '{')) depth++;
      if (this.is(t, '}') && --depth === 0) break;
      body.push(t);
    }
    this.snippets.set(name, body);
  }

  /**
   * Lines up to the '}' matching `open` (or to end of input when `open` is
   * undefined, for a brace-less server). Each line is a Directive; a '{' on a
   * line opens its nested block, and a '}' may end a line early.
   */
  private lines(open: Token | undefined): Directive[] {
    const out: Directive[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) {
        if (open) throw this.err(open, "unbalanced braces: the '{' on this line is never closed; add a matching '}'");
        return out;
      }
      if (this.is(t, '}')) {
        if (!open) throw this.err(t, "unexpected '}' with no matching '{'");
        this.pos++;
        return out;
      }
      if (this.is(t, '{')) throw this.err(t, "unexpected '{': a block must open on the same line as its directive, e.g. 'health {'");
      if (!t.quoted && this.word(t) === 'import') { this.expandImport(); continue; }

      const d: Directive = { name: this.word(t), args: [], file: t.file, line: t.line };
      this.pos++;
      for (let a = this.peek(); a && !a.nl && !this.is(a, '}'); a = this.peek()) {
        if (this.is(a, '{')) {
          this.pos++;
          d.block = this.lines(a);
          const after = this.peek();
          if (after && !after.nl && !this.is(after, '}')) {
            throw this.err(after, `unexpected '${after.text}' after '}' closing the block of '${d.name}'; start it on a new line`);
          }
          break;
        }
        d.args.push(this.word(a));
        this.pos++;
      }
      out.push(d);
    }
  }

  /** Replace `import ARG` at this.pos with the snippet's or files' tokens. */
  private expandImport(): void {
    const imp = this.peek()!;
    const arg = this.toks[this.pos + 1];
    if (!arg || arg.nl || this.is(arg, '{') || this.is(arg, '}')) {
      throw this.err(imp, 'import needs one argument: a snippet name or a file/glob relative to this file');
    }
    const after = this.toks[this.pos + 2];
    if (after && !after.nl && !this.is(after, '}')) {
      throw this.err(imp, `import takes exactly one argument (a snippet name or a file/glob), but '${after.text}' follows '${arg.text}'`);
    }
    const pattern = this.word(arg);
    if (pattern === '') throw this.err(imp, 'import needs a non-empty snippet name or file path');
    if (++this.imports > MAX_IMPORTS) throw this.err(imp, `more than ${MAX_IMPORTS} imports expanded; check for runaway snippet imports`);

    let spliced: Token[];
    const snippet = this.snippets.get(pattern);
    if (snippet) {
      spliced = this.withChain(imp, `snippet:${pattern}`, snippet);
    } else {
      spliced = [];
      for (const path of this.resolveImport(imp, pattern)) {
        const text = this.read(imp, path);
        spliced.push(...this.withChain(imp, `file:${path}`, this.balanced(lex(text, path))));
      }
    }
    // The first spliced token takes the place of `import`, so it starts a line.
    if (spliced[0]) spliced[0] = { ...spliced[0], nl: true };
    this.toks.splice(this.pos, 2, ...spliced);
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

  private withChain(imp: Token, id: string, toks: Token[]): Token[] {
    if (imp.chain.includes(id)) {
      const names = [...imp.chain.slice(imp.chain.indexOf(id)), id].map(describe);
      throw this.err(imp, `import cycle: ${names.join(' imports ')}; remove one of these imports`);
    }
    const chain = [...imp.chain, id];
    return toks.map((t) => ({ ...t, chain }));
  }

  /** Files named by `pattern`, relative to the importing token's file. */
  private resolveImport(imp: Token, pattern: string): string[] {
    const full = nodePath.resolve(nodePath.dirname(nodePath.resolve(imp.file)), pattern);
    const wild = /[*?[\]]/.test(pattern);
    if (!wild) {
      if (!this.exists(full)) {
        throw this.err(imp, `import ${pattern}: no snippet (${pattern}) is defined above this line and no file ${full} exists`);
      }
      return [full];
    }
    // CoreDNS allows one wildcard, to keep glob expansion cheap (caddy issue #2096).
    const count = (c: string) => pattern.split(c).length - 1;
    if (count('*') > 1 || count('?') > 1 || (pattern.includes('[') && pattern.includes(']'))) {
      throw this.err(imp, `import pattern '${pattern}' may contain only one wildcard (* or ?)`);
    }
    const dir = nodePath.dirname(full);
    const base = nodePath.basename(full);
    if (/[*?]/.test(dir)) throw this.err(imp, `import pattern '${pattern}': wildcards are only supported in the file name, not in directories`);
    const re = new RegExp(`^${base.replace(/[.+^${}()|\\]/g, '\\$&').replace('*', '[^/]*').replace('?', '[^/]')}$`);
    let names: string[];
    try {
      names = (this.opts.readDir ?? ((d: string) => fs.readdirSync(d)))(dir);
    } catch {
      names = [];
    }
    const matches = names.filter((nm) => re.test(nm)).sort().map((nm) => nodePath.join(dir, nm));
    if (matches.length === 0) this.opts.onWarning?.(`${imp.file}:${imp.line}: no files match import pattern ${pattern}`);
    return matches;
  }

  private exists(path: string): boolean {
    if (!this.opts.readFile) return fs.existsSync(path);
    try { this.opts.readFile(path); return true; } catch { return false; }
  }

  private read(imp: Token, path: string): string {
    try {
      return (this.opts.readFile ?? ((p: string) => fs.readFileSync(p, 'utf8')))(path);
    } catch (e) {
      throw this.err(imp, `could not import ${path}: ${(e as Error).message}`);
    }
  }
}

function describe(id: string): string {
  return id.startsWith('snippet:') ? `snippet (${id.slice(8)})` : id.slice(5);
}
