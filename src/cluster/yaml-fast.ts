// A reader for the plain block YAML that generators and `kubectl get -o yaml` write, at a
// fraction of the `yaml` package's cost (100k objects: seconds there). It accepts only a subset
// whose meaning is unambiguous and gives the same values as the package's core schema (YAML 1.2)
// for it: block mappings and sequences, plain keys, plain and one-line quoted values, `{}` and
// `[]`, full-line comments, `---` between documents. Anything else (anchors, tags, block scalars,
// flow collections, multi-line scalars, tabs, CRLF, non-ASCII, duplicate keys, floats, odd
// indentation) makes the whole file go to the full reader, which also reports every problem: a
// file read here has none to report.

/** One document read by the fast reader. */
export interface FastDocument {
  readonly value: Record<string, unknown>;
  /** Offsets the `yaml` package gives the document: its start ('---' or first content) and end. */
  readonly start: number;
  readonly end: number;
  /** 1-based lines of the document's start and of its root mapping. */
  readonly startLine: number;
  readonly rootLine: number;
  /** Lines of the root's `items` sequence entries, when it has one. */
  readonly itemLines?: readonly number[];
}

/** Thrown inside the reader when the text leaves the subset. */
class NotSimple extends Error {}
const NOT_SIMPLE = new NotSimple();

const SPACE = 0x20;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;

const KEY = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
// Core-schema scalars this reader leaves to the package: octal and hex ints, floats, .inf, .nan.
const OTHER_NUMBER = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/;
// First characters of a plain scalar that are YAML indicators (or could be, as '-', '?', ':').
const INDICATOR = new Set([...'-?:,[]{}#&*!|>\'"%@`'].map((c) => c.charCodeAt(0)));
// Anything outside printable ASCII and the newline: tabs, CR, BOM, NEL and the Unicode breaks.
const UNUSUAL = /[^\x20-\x7e\n]/;

/** A plain scalar's value in the core schema. */
function plain(s: string): unknown {
  if (NULL.test(s)) return null;
  if (BOOL.test(s)) return s[0] === 't' || s[0] === 'T';
  if (INT.test(s)) {
    if (s.length > 15) throw NOT_SIMPLE; // beyond doubles' exact integers: the package's parseInt decides
    return parseInt(s, 10);
  }
  if (OTHER_NUMBER.test(s)) throw NOT_SIMPLE;
  return s;
}

/** A value written after `key: ` or `- ` (trailing spaces already cut). */
function scalar(s: string): unknown {
  const c = s.charCodeAt(0);
  if (c === 0x22) {
    // "..." on one line without escapes: the text between the quotes.
    if (s.length < 2 || s.charCodeAt(s.length - 1) !== 0x22 || s.indexOf('"', 1) !== s.length - 1 || s.includes('\\')) throw NOT_SIMPLE;
    return s.slice(1, -1);
  }
  if (c === 0x27) {
    // '...' on one line: '' is a quote.
    if (s.length < 2 || s.charCodeAt(s.length - 1) !== 0x27) throw NOT_SIMPLE;
    const inner = s.slice(1, -1);
    if (inner.replaceAll("''", '').includes("'")) throw NOT_SIMPLE;
    return inner.replaceAll("''", "'");
  }
  if (s === '{}') return {};
  if (s === '[]') return [];
  if (INDICATOR.has(c) && !(c === DASH && s.length > 1 && s.charCodeAt(1) !== SPACE)) throw NOT_SIMPLE;
  if (s.includes(': ') || s.includes(' #') || s.charCodeAt(s.length - 1) === COLON) throw NOT_SIMPLE;
  return plain(s);
}

/** The content lines of one document: blank and comment lines are left out. */
interface Lines {
  /** Offset of the first content character, its column, its 1-based line, the line's end. */
  at: number[];
  col: number[];
  no: number[];
  end: number[];
}

class Reader {
  private i = 0;
  itemLines: number[] | undefined;

  constructor(
    private readonly text: string,
    private readonly l: Lines,
  ) {}

  get done(): boolean {
    return this.i >= this.l.at.length;
  }

  private isSeqLine(i: number): boolean {
    const at = this.l.at[i]!;
    return this.text.charCodeAt(at) === DASH && (at + 1 === this.l.end[i] || this.text.charCodeAt(at + 1) === SPACE);
  }

  /** A mapping or sequence whose first line is the current one, at its column. */
  block(depth: number): unknown {
    if (depth > 100) throw NOT_SIMPLE;
    return this.isSeqLine(this.i) ? this.seq(this.l.col[this.i]!, depth, false) : this.map(this.l.col[this.i]!, depth);
  }

  private map(col: number, depth: number): Record<string, unknown> {
    const { text, l } = this;
    const out: Record<string, unknown> = {};
    while (this.i < l.at.length) {
      const i = this.i;
      const c = l.col[i]!;
      if (c < col) break;
      if (c > col || this.isSeqLine(i)) throw NOT_SIMPLE;
      const at = l.at[i]!;
      const end = l.end[i]!;
      const colon = text.indexOf(':', at);
      if (colon < 0 || colon >= end || colon - at > 1000) throw NOT_SIMPLE;
      const key = text.slice(at, colon);
      if (!KEY.test(key) || key === '__proto__' || plain(key) !== key || Object.hasOwn(out, key)) throw NOT_SIMPLE;
      const rest = text.slice(colon + 1, end).trimEnd();
      this.i++;
      if (rest !== '') {
        if (rest.charCodeAt(0) !== SPACE) throw NOT_SIMPLE; // "a:b" is one scalar, not a pair
        out[key] = scalar(rest.trimStart());
        continue;
      }
      const next = this.i;
      if (next < l.at.length && l.col[next]! > col) out[key] = this.block(depth + 1);
      else if (next < l.at.length && l.col[next] === col && this.isSeqLine(next)) {
        out[key] = this.seq(col, depth + 1, depth === 0 && key === 'items');
      } else out[key] = null;
    }
    return out;
  }

  private seq(col: number, depth: number, topItems: boolean): unknown[] {
    const { text, l } = this;
    const out: unknown[] = [];
    const lines: number[] | undefined = topItems ? [] : undefined;
    while (this.i < l.at.length) {
      const i = this.i;
      const c = l.col[i]!;
      if (c < col || (c === col && !this.isSeqLine(i))) break;
      if (c > col) throw NOT_SIMPLE;
      const end = l.end[i]!;
      let at = l.at[i]! + 1;
      while (at < end && text.charCodeAt(at) === SPACE) at++;
      if (at >= end || text.charCodeAt(at) === HASH) throw NOT_SIMPLE; // "-" alone: the item is on the next lines
      lines?.push(l.no[i]!);
      const colon = text.indexOf(':', at);
      const isPair = colon >= 0 && colon < end && (colon + 1 === end || text.charCodeAt(colon + 1) === SPACE) && text.charCodeAt(at) !== DASH;
      if (isPair) {
        // "- key: value": a mapping whose column is the key's; its next keys line up under it.
        l.col[i] = at - (l.at[i]! - c);
        l.at[i] = at;
        out.push(this.map(l.col[i]!, depth + 1));
      } else {
        this.i++;
        out.push(scalar(text.slice(at, end).trimEnd()));
      }
    }
    if (lines) this.itemLines = lines;
    return out;
  }
}

/**
 * The documents of `text` when all of it is in the subset (and has none of the problems the full
 * reader reports), else undefined.
 */
export function readSimpleYaml(text: string): FastDocument[] | undefined {
  if (UNUSUAL.test(text)) return undefined;
  const docs: FastDocument[] = [];
  let lines: Lines = { at: [], col: [], no: [], end: [] };
  let start = -1; // the document's start: its '---', else its first content line
  let startLine = 0;
  const finish = (end: number): void => {
    if (lines.at.length > 0) {
      // An indented root would make the document's offsets differ from the package's.
      if (lines.col[0] !== 0) throw NOT_SIMPLE;
      const r = new Reader(text, lines);
      const rootLine = lines.no[0]!;
      const value = r.block(0);
      // A root sequence is refused, and the full reader says why.
      if (Array.isArray(value) || !r.done) throw NOT_SIMPLE;
      docs.push({ value: value as Record<string, unknown>, start, end, startLine, rootLine, ...(r.itemLines ? { itemLines: r.itemLines } : {}) });
    }
    lines = { at: [], col: [], no: [], end: [] };
    start = -1;
  };
  try {
    let no = 0;
    for (let ls = 0; ls < text.length; ) {
      no++;
      let le = text.indexOf('\n', ls);
      if (le < 0) le = text.length;
      let at = ls;
      while (at < le && text.charCodeAt(at) === SPACE) at++;
      if (at - ls === 0 && le - ls >= 3 && (text.startsWith('---', ls) || text.startsWith('...', ls))) {
        if (le - ls !== 3 || text.charCodeAt(ls) !== DASH) throw NOT_SIMPLE;
        finish(ls);
        start = ls;
        startLine = no;
      } else if (at < le && text.charCodeAt(at) !== HASH) {
        if (at === ls && text.charCodeAt(at) === 0x25) throw NOT_SIMPLE; // a directive
        if (start < 0) {
          start = ls;
          startLine = no;
        }
        lines.at.push(at);
        lines.col.push(at - ls);
        lines.no.push(no);
        lines.end.push(le);
      }
      ls = le + 1;
    }
    finish(text.length);
  } catch (e) {
    if (e === NOT_SIMPLE) return undefined;
    throw e;
  }
  return docs;
}
