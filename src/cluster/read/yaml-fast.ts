// A reader for the plain block YAML that generators and `kubectl get -o yaml` write, at a
// fraction of the `yaml` package's cost (100k objects: seconds there). It accepts only a subset
// whose meaning is unambiguous and gives the same values as the package's core schema (YAML 1.2)
// for it: block mappings and sequences, plain keys (kubectl's `f:name`, `.`, `k:{"port":80}` as
// well) and one-line quoted keys, plain and one-line quoted values, `{}` and `[]`, literal block
// scalars `|` and `|-` (what kubectl writes for multi-line strings such as the
// last-applied-configuration annotation), full-line comments, `---` between documents.
// Anything else (anchors, tags, folded or `|+` scalars, flow collections, multi-line plain
// scalars, tabs, non-ASCII, duplicate keys, floats, odd indentation) sends that document to the
// full reader, which also reports every problem: a document read here has none to report. The
// `yaml` package splits a stream at the same `---` lines and keeps no state across them but
// directives, so a document read alone reads as in the whole file; what would break that
// (directives, `...`, `---` followed by content, CR, BOM and the other breaks) sends the whole
// file to the package.

/** One document read by the fast reader. */
export interface FastDocument {
  readonly fast: true;
  readonly value: Record<string, unknown>;
  /** Offsets the `yaml` package gives the document: its start ('---' or first content) and end. */
  readonly start: number;
  readonly end: number;
  /** 1-based lines of the document's start and of its root mapping. */
  readonly startLine: number;
  readonly rootLine: number;
  /** Lines of the root's `items` sequence entries, when it has one. */
  readonly itemLines?: readonly number[];
  /** The text the package would read for it alone: see SlowDocument. */
  readonly segment: Segment;
}

/**
 * Text between `---` lines (from the file's start, or a `---` line, to the next `---` line or
 * the end): what the package reads as one document, with the 1-based line it starts on.
 */
export interface Segment {
  readonly start: number;
  readonly end: number;
  readonly line: number;
}

/** A document outside the subset: the package reads its segment alone. */
export interface SlowDocument {
  readonly fast: false;
  readonly segment: Segment;
}

/** Thrown inside the reader when the text leaves the subset. */
class NotSimple extends Error {}
const NOT_SIMPLE = new NotSimple();

const SPACE = 0x20;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;

// Plain keys: no indicator first, no space (so no comment), ':' only where not followed by a space.
const KEY = /^[A-Za-z0-9_./][\x21-\x7e]*$/;
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
// Core-schema scalars this reader leaves to the package: octal and hex ints, floats, .inf, .nan.
const OTHER_NUMBER = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/;
// First characters of a plain scalar that are YAML indicators (or could be, as '-', '?', ':').
const INDICATOR = new Set([...'-?:,[]{}#&*!|>\'"%@`'].map((c) => c.charCodeAt(0)));
// Anything outside printable ASCII and the newline sends its document to the package; CR, the
// other controls, BOM and the Unicode breaks the whole file, as they may move lines or documents.
const UNUSUAL = /[^\x20-\x7e\n]/g;
const WHOLE_FILE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ufeff\u2028\u2029]/;

/** A plain scalar's value in the core schema. */
function plain(s: string): unknown {
  // Most keys and values start with a letter no null, bool or number starts with.
  const c = s.charCodeAt(0) | 0x20;
  if (c >= 0x61 && c <= 0x7a && c !== 0x6e && c !== 0x74 && c !== 0x66) return s;
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

  /**
   * `key: ` (plain or one-line quoted) at `at` on a line ending at `end`: the key and the offset
   * after its colon; undefined when the line holds no pair (a scalar).
   */
  private pair(at: number, end: number): [string, number] | undefined {
    const { text } = this;
    const c = text.charCodeAt(at);
    let key: string;
    let colon: number;
    if (c === 0x22 || c === 0x27) {
      let q = at;
      for (;;) {
        q = text.indexOf(c === 0x22 ? '"' : "'", q + 1);
        if (q < 0 || q >= end) throw NOT_SIMPLE;
        if (c === 0x27 && text.charCodeAt(q + 1) === 0x27)
          q++; // '' is a quote
        else break;
      }
      if (text.charCodeAt(q + 1) !== COLON || (q + 2 !== end && text.charCodeAt(q + 2) !== SPACE)) return undefined;
      const inner = text.slice(at + 1, q);
      if (c === 0x22 && inner.includes('\\')) throw NOT_SIMPLE;
      key = c === 0x22 ? inner : inner.replaceAll("''", "'");
      colon = q + 1;
    } else {
      colon = at;
      for (;;) {
        colon = text.indexOf(':', colon);
        if (colon < 0 || colon >= end) return undefined;
        if (colon + 1 === end || text.charCodeAt(colon + 1) === SPACE) break;
        colon++;
      }
      key = text.slice(at, colon);
      if (!KEY.test(key) || key === '<<' || plain(key) !== key) throw NOT_SIMPLE;
    }
    if (colon - at > 1000 || key === '__proto__') throw NOT_SIMPLE;
    return [key, colon + 1];
  }

  /**
   * A literal block scalar (`|` clips the final line break, `|-` strips it) whose header line
   * ends at `header`, inside a node at column `parent`: its content lines are those indented as
   * its first (which must be deeper than `parent`, and not blank), blank lines within.
   */
  private literal(parent: number, header: number, strip: boolean): string {
    const { text, l } = this;
    let n = -1;
    let value = '';
    let blanks = 0;
    let first = true;
    let ls = header + 1;
    while (ls < text.length) {
      let le = text.indexOf('\n', ls);
      if (le < 0) le = text.length;
      let sp = ls;
      while (sp < le && text.charCodeAt(sp) === SPACE) sp++;
      const ind = sp - ls;
      if (sp === le) {
        // Spaces beyond the indentation would be content; leading blank lines set no indentation.
        if (n < 0 || ind > n) throw NOT_SIMPLE;
        blanks++;
      } else {
        if (n < 0) {
          if (ind <= parent) throw NOT_SIMPLE; // an empty scalar
          n = ind;
        } else if (ind < n) break;
        value += first ? text.slice(ls + n, le) : `${'\n'.repeat(blanks + 1)}${text.slice(ls + n, le)}`;
        blanks = 0;
        first = false;
      }
      ls = le + 1;
    }
    if (n < 0) throw NOT_SIMPLE;
    while (this.i < l.at.length && l.at[this.i]! < ls) this.i++;
    // Clip keeps one final line break; the package adds it at the end of the file as well.
    return strip ? value : `${value}\n`;
  }

  /** A mapping or sequence whose first line is the current one, at its column. */
  block(depth: number, topItems = false): unknown {
    if (depth > 100) throw NOT_SIMPLE;
    return this.isSeqLine(this.i) ? this.seq(this.l.col[this.i]!, depth, topItems) : this.map(this.l.col[this.i]!, depth);
  }

  private map(col: number, depth: number): Record<string, unknown> {
    const { text, l } = this;
    const out: Record<string, unknown> = {};
    while (this.i < l.at.length) {
      const i = this.i;
      const c = l.col[i]!;
      if (c < col) break;
      if (c > col || this.isSeqLine(i)) throw NOT_SIMPLE;
      const end = l.end[i]!;
      const p = this.pair(l.at[i]!, end);
      if (!p || Object.hasOwn(out, p[0])) throw NOT_SIMPLE;
      const [key, after] = p;
      const rest = text.slice(after, end).trim();
      this.i++;
      if (rest !== '') {
        out[key] = rest === '|' || rest === '|-' ? this.literal(col, end, rest === '|-') : scalar(rest);
        continue;
      }
      const next = this.i;
      // The root's `items` keeps its entries' lines, indented or not.
      if (next < l.at.length && l.col[next]! > col) out[key] = this.block(depth + 1, depth === 0 && key === 'items');
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
      if (text.charCodeAt(at) !== DASH && this.pair(at, end)) {
        // "- key: value": a mapping whose column is the key's; its next keys line up under it.
        l.col[i] = at - (l.at[i]! - c);
        l.at[i] = at;
        out.push(this.map(l.col[i]!, depth + 1));
      } else {
        this.i++;
        const v = text.slice(at, end).trimEnd();
        out.push(v === '|' || v === '|-' ? this.literal(c, end, v === '|-') : scalar(v));
      }
    }
    if (lines) this.itemLines = lines;
    return out;
  }
}

/**
 * The documents of `text`, each read here when it is in the subset (and has none of the problems
 * the full reader reports), else left to the package; undefined when the whole file must be.
 */
export function readSimpleYaml(text: string): (FastDocument | SlowDocument)[] | undefined {
  // Offsets of characters that send their document to the package, in order.
  const unusual: number[] = [];
  for (const m of text.matchAll(UNUSUAL)) {
    if (WHOLE_FILE.test(m[0])) return undefined;
    unusual.push(m.index);
  }
  let u = 0;
  const docs: (FastDocument | SlowDocument)[] = [];
  let lines: Lines = { at: [], col: [], no: [], end: [] };
  let segStart = 0;
  let segLine = 1;
  let start = -1; // the document's start: its '---', else its first content line
  let startLine = 0;
  const finish = (end: number): void => {
    const segment: Segment = { start: segStart, end, line: segLine };
    let odd = false;
    for (; u < unusual.length && unusual[u]! < end; u++) odd = true;
    if (lines.at.length > 0) {
      try {
        // An indented root would make the document's offsets differ from the package's.
        if (odd || lines.col[0] !== 0) throw NOT_SIMPLE;
        const r = new Reader(text, lines);
        const rootLine = lines.no[0]!;
        const value = r.block(0);
        // A root sequence is refused, and the full reader says why.
        if (Array.isArray(value) || !r.done) throw NOT_SIMPLE;
        const itemLines = r.itemLines ? { itemLines: r.itemLines } : {};
        docs.push({ fast: true, value: value as Record<string, unknown>, start, end, startLine, rootLine, ...itemLines, segment });
      } catch (e) {
        if (e !== NOT_SIMPLE) throw e;
        docs.push({ fast: false, segment });
      }
    } else if (odd) docs.push({ fast: false, segment });
    lines = { at: [], col: [], no: [], end: [] };
    start = -1;
  };
  let no = 0;
  for (let ls = 0; ls < text.length; ) {
    no++;
    let le = text.indexOf('\n', ls);
    if (le < 0) le = text.length;
    let at = ls;
    while (at < le && text.charCodeAt(at) === SPACE) at++;
    if (at - ls === 0 && le - ls >= 3 && (text.startsWith('---', ls) || text.startsWith('...', ls))) {
      if (le - ls !== 3 || text.charCodeAt(ls) !== DASH) return undefined;
      finish(ls);
      segStart = ls;
      segLine = no;
      start = ls;
      startLine = no;
    } else if (at < le && text.charCodeAt(at) !== HASH) {
      if (at === ls && text.charCodeAt(at) === 0x25) return undefined; // a directive
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
  return docs;
}
