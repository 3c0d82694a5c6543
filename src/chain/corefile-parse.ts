// The Corefile parser proper: server blocks, snippets, imports as a stack of token frames, env
// substitution, every error collected with file:line and every read bounded (CorefileLimits).
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { KeyError, parseServerKey, type ServerKey } from './corefile-keys.js';
import { excerpt } from './excerpt.js';
import { CorefileError, defaultCorefileLimits, type CorefileLimits, type Directive, type ParseOptions, type ServerBlock } from './corefile-types.js';
import { lex, readCorefileText, type Token } from './corefile-lex.js';

/** One source of tokens: the Corefile, an imported file or a snippet body, read in order. */
interface Frame {
  toks: readonly Token[];
  pos: number;
  chain: string[]; // import chain that produced these tokens, for cycle detection
  imported: boolean; // the first token takes the place of `import`, so it starts a line
}

/** A limit was reached: stop parsing, since going on would only read more of the same. */
export class Fatal extends Error {}

// ---- env substitution ------------------------------------------------------

// {$VAR} and {%VAR%} are CoreDNS's forms; {env.VAR} is accepted as well. CoreDNS (caddy's
// replaceEnvVars) turns an unset variable into an empty string, which silently changes what a
// line means (`{$ZONE}:53` becomes the root zone); here it is an error naming the variable.
const ENV_REF = /\{\$([^{}]+)\}|\{%([^{}%]+)%\}|\{env\.([^{}]+)\}/g;

export class Parser {
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

  constructor(
    file: string,
    private readonly opts: ParseOptions,
    private readonly limits: CorefileLimits,
  ) {
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
      this.fatal(
        at ?? toks[0]!,
        `more than ${this.limits.maxTokens} tokens after expanding imports (--max-corefile-tokens); check for snippets imported many times`,
      );
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

  private err(t: Token, reason: string): CorefileError {
    return new CorefileError(t.file, t.line, reason);
  }
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
  private imported(t: Token): boolean {
    return t.file !== this.files[0];
  }

  private is(t: Token | undefined, brace: '{' | '}'): boolean {
    return !!t && !t.quoted && t.text === brace;
  }
  private isImport(t: Token): boolean {
    return !t.quoted && t.text === 'import';
  }

  parseAll(): void {
    for (let t = this.peek(); t; t = this.peek()) {
      if (this.is(t, '}')) this.fatal(t, "unexpected '}' with no matching '{'");
      if (this.is(t, '{')) this.fatal(t, "unexpected '{': a block must follow server block keys, e.g. 'example.org {'");
      if (this.isImport(t)) {
        this.expandImport();
        continue;
      }
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
        this.fatal(
          first,
          "missing server block body: the keys on this line are not followed by '{', " +
            `so everything after them is read as their plugins, but the line ${stray.file}:${stray.line} looks like another server block; ` +
            "put '{' after the keys and a matching '}' after their plugins",
        );
      }
    }

    const keys: ServerKey[] = [];
    for (const k of keyToks) {
      try {
        const parsed = parseServerKey(k.text);
        this.zoneCount += parsed.length;
        if (this.zoneCount > this.limits.maxZones) {
          this.fatal(
            k,
            `more than ${this.limits.maxZones} server block zones (--max-corefile-zones); a CIDR key off an octet boundary counts every zone it is split into`,
          );
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
            this.fatal(
              left.open,
              "unbalanced braces: the '{' on this line is never closed; add a matching '}' " +
                `(the '}' on line ${left.close.line} lines up with the block of line ${open.line}: that is the one it was written to close)`,
            );
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
      if (this.isImport(t)) {
        this.expandImport();
        continue;
      }

      const d: Directive = { name: this.word(t), args: [], file: t.file, line: t.line };
      if (this.limits.maxZones !== defaultCorefileLimits.maxZones) d.maxZones = this.limits.maxZones;
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
      this.report(
        imp,
        `imports nest more than ${this.limits.maxImportDepth} deep (--max-corefile-import-depth): ${chain
          .map(describe)
          .map((d) => excerpt(d, 80))
          .join(' imports ')}`,
      );
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
    const re = new RegExp(
      `^${base
        .replace(/[.+^${}()|\\]/g, '\\$&')
        .replace('*', '[^/]*')
        .replace('?', '[^/]')}$`,
    );
    let names: string[];
    try {
      names = (this.opts.readDir ?? ((d: string) => fs.readdirSync(d)))(dir);
    } catch {
      names = [];
    }
    const matches = names
      .filter((nm) => re.test(nm))
      .sort()
      .map((nm) => nodePath.join(dir, nm));
    if (matches.length === 0) this.opts.onWarning?.(`${imp.file}:${imp.line}: no files match import pattern ${excerpt(pattern)}`);
    return matches;
  }

  private exists(path: string): boolean {
    if (!this.opts.readFile) return fs.existsSync(path);
    try {
      this.opts.readFile(path);
      return true;
    } catch {
      return false;
    }
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
