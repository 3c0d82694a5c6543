// One reader for the arguments and option blocks of every plugin directive, modelled on CoreDNS's
// caddyfile Dispenser (NextArg, RemainingArgs, ArgErr, Errf) and plugin/pkg/parse: each kind of
// mistake has one wording, every error carries the file and line of the token read, and every
// value a message echoes goes through excerpt().
import { CorefileError, type Directive } from './corefile.js';
import { excerpt } from './excerpt.js';
import { forEachOption } from './options.js';
import { zoneArgs } from './zones.js';
import { goDurationString, parseGoDuration } from '../pkg/duration.js';
import { closest } from '../pkg/spelling.js';

export interface DurationLimits {
  /** Smallest accepted, ms (default 0: negative durations are refused). */
  min?: number;
  /** Largest accepted, ms. */
  max?: number;
  /** Also accept 0 when `min` is above it (0 then means "off"). */
  zero?: boolean;
  /** Refuse 0 (a period or timeout that must pass). */
  positive?: boolean;
  /** Examples for the fix, e.g. `500ms, 5s or 1m`. */
  examples?: string;
}

export interface IntLimits {
  min?: number;
  max?: number;
}

/** Handlers of a block's option lines, by option name. */
export type OptionHandlers = Record<string, (o: OptionReader) => void>;

export interface BlockRules {
  /** Options CoreDNS has and clusterdns refuses, with the reason given for each. */
  unsupported?: Record<string, string>;
  /** Lines that are no option (inline entries): return true when taken, false for "unknown option". */
  other?: (o: OptionReader) => boolean;
  /** What else a line may be, added to the unknown-option message (the lines `other` takes). */
  otherLines?: string;
  /** The options the unknown-option message lists, when not all of them (the most used). */
  listed?: readonly string[];
}

const DEFAULT_EXAMPLES = '500ms, 5s or 1m';

/**
 * The arguments of one Corefile line: a plugin's directive (`OptionReader.of(d)`) or one option
 * line of its block (handed to the handlers of `block()`). Messages start with `where`: the
 * plugin name, and the option name after it for a block line (`cache prefetch`).
 */
export class OptionReader {
  readonly args: readonly string[];

  private constructor(
    readonly line: Directive,
    /** The directive's plugin, for messages. */
    readonly plugin: string,
    /** How messages name the line: `cache`, or `cache prefetch` for an option line. */
    readonly where: string,
  ) {
    this.args = line.args;
  }

  /** The reader of a plugin's own line; `plugin` defaults to the directive name. */
  static of(d: Directive, plugin = d.name): OptionReader {
    return new OptionReader(d, plugin, plugin);
  }

  /** The option name (a block line's first token). */
  get name(): string {
    return this.line.name;
  }

  get count(): number {
    return this.args.length;
  }

  /** An error at this line: `where: reason`. */
  fail(reason: string): never {
    throw new CorefileError(this.line.file, this.line.line, `${this.where}: ${reason}`);
  }

  /** The i-th argument, or undefined when the line has fewer. */
  arg(i: number): string | undefined {
    return this.args[i];
  }

  /** The arguments from the i-th on. */
  rest(i: number): string[] {
    return this.args.slice(i);
  }

  /** Checks the number of arguments (CoreDNS's ArgErr), showing `usage` (and an example line) as the fix. */
  arity(min: number, max: number, usage: string, example?: string): this {
    const n = this.args.length;
    if (n >= min && n <= max) return this;
    if (max === 0) this.noArgs();
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : min === 0 ? `at most ${max}` : `${min} to ${max}`;
    this.fail(`wrong number of arguments: ${n} given, ${want} expected; usage \`${usage}\`${example === undefined ? '' : `, e.g. \`${example}\``}`);
  }

  /** A line that takes no arguments. */
  noArgs(): this {
    if (this.args.length > 0)
      throw new CorefileError(this.line.file, this.line.line, `${this.where} takes no arguments, got "${excerpt(this.args.join(' '))}"`);
    return this;
  }

  /** A line that takes no option block. */
  noBlock(): this {
    if (this.line.block && this.line.block.length > 0) throw new CorefileError(this.line.file, this.line.line, `${this.where} takes no option block`);
    return this;
  }

  /** Argument i must be one of `choices` (lowercased first with `ignoreCase`). */
  choice<T extends string>(i: number, label: string, choices: readonly T[], ignoreCase = false): T {
    const written = this.required(i, label);
    const v = ignoreCase ? written.toLowerCase() : written;
    if (!(choices as readonly string[]).includes(v)) this.fail(`${label} "${excerpt(written)}" is not one of ${orList(choices)}${suggest(v, choices)}`);
    return v as T;
  }

  /** Argument i as an integer (decimal, optional sign) within `limits`. */
  int(i: number, label: string, limits: IntLimits = {}): number {
    const v = this.required(i, label);
    if (!/^[+-]?\d+$/.test(v)) this.fail(`${label} "${excerpt(v)}" is not an integer`);
    return this.inRange(Number(v), label, limits);
  }

  /** Argument i as a TTL in seconds: an integer in [min, max], by default CoreDNS's [0, 3600]. */
  ttl(i: number, limits: IntLimits = { min: 0, max: 3600 }): number {
    return this.int(i, 'ttl', limits);
  }

  /** Argument i as a Go duration (CoreDNS's time.ParseDuration), in milliseconds. */
  duration(i: number, label: string, limits: DurationLimits = {}): number {
    const v = this.required(i, label);
    const ms = parseGoDuration(v);
    const examples = limits.examples ?? DEFAULT_EXAMPLES;
    const named = label === '' ? '' : `${label} `;
    if (ms === undefined) this.fail(`${named}"${excerpt(v)}" is not a duration; write e.g. ${examples}`);
    if (ms === 0 && limits.zero) return 0;
    if (ms === 0 && limits.positive) this.fail(`${named}"${excerpt(v)}" must be more than 0; write e.g. ${examples}`);
    const min = limits.min ?? 0;
    if (ms < min)
      this.fail(
        min === 0
          ? `${named}"${excerpt(v)}" must not be negative`
          : `${named}"${excerpt(v)}" must be ${limits.zero ? '0 or ' : ''}at least ${goDurationString(min)}`,
      );
    if (limits.max !== undefined && ms > limits.max) this.fail(`${named}"${excerpt(v)}" must be at most ${goDurationString(limits.max)}`);
    return ms;
  }

  /**
   * The arguments from the i-th on (before `end` when given) as zones, normalised like server
   * block keys, or `fallback` when there are none.
   */
  zones(i: number, fallback: readonly string[], end = this.args.length): string[] {
    return end > i ? zoneArgs(this.args.slice(i, end), this.line) : [...fallback];
  }

  /** `fallthrough [ZONES...]`: [] for every name, else the zones. */
  fallthrough(): string[] {
    return zoneArgs(this.args, this.line);
  }

  /**
   * Reads the block: each line goes to the handler of its name, and every line is read even when
   * one fails (all errors are reported together). A name without a handler is an unknown option,
   * with the nearest valid name suggested.
   */
  block(handlers: OptionHandlers, rules: BlockRules = {}): void {
    const names = Object.keys(handlers);
    forEachOption(this.line.block, (o) => {
      const reader = new OptionReader(o, this.plugin, `${this.plugin} ${o.name}`);
      const handler = Object.hasOwn(handlers, o.name) ? handlers[o.name] : undefined;
      if (handler) return handler(reader);
      const refused = rules.unsupported && Object.hasOwn(rules.unsupported, o.name) ? rules.unsupported[o.name] : undefined;
      if (refused !== undefined) throw new CorefileError(o.file, o.line, `${reader.where} is not supported: ${refused}`);
      if (rules.other?.(reader)) return;
      const message = unknownOption(this.plugin, o.name, rules.listed ?? names);
      throw new CorefileError(o.file, o.line, rules.otherLines === undefined ? message : `${message}; or ${rules.otherLines}`);
    });
  }

  private required(i: number, label: string): string {
    const v = this.args[i];
    if (v === undefined) this.fail(`missing ${label === '' ? `argument ${i + 1}` : label}`);
    return v;
  }

  private inRange(n: number, label: string, { min, max }: IntLimits): number {
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      const range = min !== undefined && max !== undefined ? `in range [${min}, ${max}]` : min !== undefined ? `at least ${min}` : `at most ${max}`;
      this.fail(`${label} must be ${range}: ${n}`);
    }
    return n;
  }
}

/** `unknown P option "X"; valid options: ...` with the nearest valid name when one is near. */
export function unknownOption(plugin: string, name: string, valid: readonly string[]): string {
  const list = valid.length === 1 ? `the only option is ${valid[0]}` : `valid options: ${valid.join(', ')}`;
  return `unknown ${plugin} option "${excerpt(name)}"${suggest(name, valid)}; ${list}`;
}

function suggest(word: string, names: readonly string[]): string {
  const near = names.length > 1 ? closest(word, names) : undefined;
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}

function orList(xs: readonly string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} or ${xs[xs.length - 1]}`;
}
