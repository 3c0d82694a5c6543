// What the Corefile parser produces and how it fails: directives and server blocks, the errors
// (each with file:line, collected and reported in line order), and the limits of one parse.
import { excerptLongWords } from './excerpt.js';
import type { ServerKey } from './corefile-keys.js';

export interface Directive {
  name: string; // first token of the line, e.g. 'kubernetes'
  args: string[]; // remaining tokens on that line (quotes removed, env substituted)
  block?: Directive[]; // nested `{ ... }` block, one Directive per line
  file: string; // file the token came from (the imported file for imported lines)
  line: number; // 1-based line of `name`
  imported?: boolean; // the line came from an imported file (its text is not echoed in errors)
  /** Zones one line's zone arguments may expand to, set only when the parse's maxZones is not the default. */
  maxZones?: number;
}

export interface ServerBlock {
  keys: ServerKey[];
  directives: Directive[];
  file: string;
  line: number;
}

export class CorefileError extends Error {
  readonly reason: string;

  constructor(
    readonly file: string,
    readonly line: number,
    reason: string,
  ) {
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
export function sortErrors(errors: readonly CorefileError[], fileOrder: readonly string[] = [], max = defaultCorefileLimits.maxErrors): CorefileError[] {
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
  return [...out.slice(0, max), new CorefileError(last.file, last.line, `stopped after ${max} errors (--max-corefile-errors); fix these and run again`)];
}

/** True once `errors` holds as many errors as are reported: time to stop looking for more. */
export function enoughErrors(errors: readonly CorefileError[], max = defaultCorefileLimits.maxErrors): boolean {
  return errors.length > max;
}

/** Throws nothing for no errors, the error itself for one, a CorefileErrors for several. */
export function throwErrors(errors: readonly CorefileError[], fileOrder: readonly string[] = [], max = defaultCorefileLimits.maxErrors): void {
  if (errors.length === 0) return;
  const sorted = sortErrors(errors, fileOrder, max);
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

export interface ParseOptions {
  /** Variables for {$VAR}, {%VAR%} and {env.VAR}; default process.env. */
  env?: Record<string, string | undefined>;
  /** Reads an imported file (absolute path); default readCorefileText (regular files only, size-capped). */
  readFile?: (path: string) => string;
  /** Lists a directory for `import` globs; default fs.readdirSync. */
  readDir?: (dir: string) => string[];
  /** Called for conditions CoreDNS only logs, e.g. an import glob matching no file. */
  onWarning?: (message: string) => void;
  /** Limits other than defaultCorefileLimits (an App's, from the --max-corefile-* flags). */
  limits?: Partial<CorefileLimits>;
}

/** What parseCorefileCollect returns: the blocks that parsed, and every error found. */
export interface ParseResult {
  blocks: ServerBlock[];
  errors: CorefileError[];
  /** Files in the order they were read, the Corefile first: the order errors are reported in. */
  files: string[];
}
