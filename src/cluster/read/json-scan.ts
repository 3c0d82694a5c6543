// One pass over a JSON text that JSON.parse has already accepted, for what JSON.parse does not
// tell: where each element of the root object's `items` array starts and ends (a kubectl List's
// objects, for their lines) and which object keys are duplicated (every JSON reader keeps the
// last one silently). Hand-written because no JSON library reports both in linear time without
// building an AST of a 50 MB List; the text is known to be valid JSON, so it only has to follow
// strings and nesting.

export interface JsonScan {
  /** Offsets of the root object's `items` elements: start, and one past the end. */
  itemStarts: number[];
  itemEnds: number[];
  /** Keys written twice in one object: where, and where first. */
  duplicates: { key: string; at: number; first: number }[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

// Objects up to this many keys find a duplicate by comparing the keys' text in place; larger
// ones (and any with an escaped key) keep a Map of the keys as strings.
const SPAN_KEYS = 8;

/** One open object or array; reused for every container at its depth. */
interface Frame {
  obj: boolean;
  expectKey: boolean;
  /** The root object's `items` array. */
  items: boolean;
  /** The root object: the key whose value comes next. */
  pendingKey?: string;
  /** Objects: the keys seen (escape-free), as offsets of their opening quote and lengths. */
  quotes: number[];
  lengths: number[];
  /** Objects past SPAN_KEYS keys or with an escaped key: keys seen, with their quote's offset. */
  keys?: Map<string, number>;
}

/** The end (one past the closing quote) of the string starting at `start` (its opening quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0) return text.length;
    let backslashes = 0;
    for (let j = q - 1; j > start && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** Whether the string from quote `q` to `end` has an escape. */
function hasEscape(text: string, q: number, end: number): boolean {
  for (let j = q + 1; j < end - 1; j++) if (text.charCodeAt(j) === BACKSLASH) return true;
  return false;
}

/** The value of the key string from quote `q` to `end`. */
function keyText(text: string, q: number, end: number): string {
  return hasEscape(text, q, end) ? (JSON.parse(text.slice(q, end)) as string) : text.slice(q + 1, end - 1);
}

/** Whether the `len` characters after quotes `a` and `b` are the same. */
function sameText(text: string, a: number, b: number, len: number): boolean {
  for (let k = 1; k <= len; k++) if (text.charCodeAt(a + k) !== text.charCodeAt(b + k)) return false;
  return true;
}

/**
 * A key of an object: its first writing, when it was written before (and is not recorded again,
 * so a third writing also names the first); else -1, and it is recorded.
 */
function firstWriting(text: string, frame: Frame, q: number, end: number): number {
  const len = end - q - 2;
  if (!frame.keys) {
    const n = frame.quotes.length;
    if (n < SPAN_KEYS && !hasEscape(text, q, end)) {
      for (let j = 0; j < n; j++) if (frame.lengths[j] === len && sameText(text, frame.quotes[j]!, q, len)) return frame.quotes[j]!;
      frame.quotes.push(q);
      frame.lengths.push(len);
      return -1;
    }
    frame.keys = new Map();
    for (let j = 0; j < n; j++) frame.keys.set(text.slice(frame.quotes[j]! + 1, frame.quotes[j]! + 1 + frame.lengths[j]!), frame.quotes[j]!);
  }
  const key = keyText(text, q, end);
  const first = frame.keys.get(key);
  if (first !== undefined) return first;
  frame.keys.set(key, q);
  return -1;
}

export function scanJson(text: string): JsonScan {
  const out: JsonScan = { itemStarts: [], itemEnds: [], duplicates: [] };
  const frames: Frame[] = [];
  let depth = 0;
  let frame: Frame | undefined;
  let scalarStart = -1;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      if (scalarStart >= 0) {
        if (frame?.items) out.itemEnds.push(i);
        scalarStart = -1;
      }
      continue;
    }
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (frame?.obj && frame.expectKey) {
        const first = firstWriting(text, frame, i, end);
        if (first >= 0) out.duplicates.push({ key: keyText(text, i, end), at: i, first });
        if (depth === 1) frame.pendingKey = keyText(text, i, end);
        frame.expectKey = false;
      } else if (frame?.items) {
        out.itemStarts.push(i);
        out.itemEnds.push(end);
      }
      i = end - 1;
      continue;
    }
    if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (frame?.items) out.itemStarts.push(i);
      const isItems = c === OPEN_ARR && depth === 1 && frame?.obj === true && frame.pendingKey === 'items';
      let next = frames[depth];
      if (!next) {
        next = { obj: false, expectKey: false, items: false, quotes: [], lengths: [] };
        frames[depth] = next;
      }
      next.obj = c === OPEN_OBJ;
      next.expectKey = next.obj;
      next.items = isItems;
      next.pendingKey = undefined;
      next.quotes.length = 0;
      next.lengths.length = 0;
      next.keys = undefined;
      frame = next;
      depth++;
      continue;
    }
    if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      if (scalarStart >= 0) {
        if (frame?.items) out.itemEnds.push(i);
        scalarStart = -1;
      }
      if (depth > 0) depth--; // the text may not be JSON: an extra close is ignored
      frame = depth > 0 ? frames[depth - 1] : undefined;
      if (frame?.items) out.itemEnds.push(i + 1);
      continue;
    }
    if (c === COMMA) {
      if (scalarStart >= 0) {
        if (frame?.items) out.itemEnds.push(i);
        scalarStart = -1;
      }
      if (frame?.obj) frame.expectKey = true;
      continue;
    }
    if (c === COLON) continue;
    // A number, true, false or null.
    if (scalarStart < 0) {
      scalarStart = i;
      if (frame?.items) out.itemStarts.push(i);
    }
  }
  return out;
}

/**
 * Counts the lines of a text up to increasing offsets, finding each line break once. The next
 * break past the last offset asked is kept, not searched for again: on a text with few breaks
 * (a List written on one line) a search from each offset, forward or back, would run to an end
 * of the text every time, a cost of items x bytes.
 */
export class LineCounter {
  private line: number;
  private lineStart = 0;
  private nextBreak: number;

  constructor(
    private readonly text: string,
    firstLine: number,
  ) {
    this.line = firstLine;
    this.nextBreak = text.indexOf('\n');
  }

  /** The line of `off`, for `off` no lower than at the last call. */
  at(off: number): number {
    while (this.nextBreak >= 0 && this.nextBreak < off) {
      this.line++;
      this.lineStart = this.nextBreak + 1;
      this.nextBreak = this.text.indexOf('\n', this.nextBreak + 1);
    }
    return this.line;
  }

  /** Where the line of `off` starts (one past the last break before it), as `at` goes. */
  startOf(off: number): number {
    this.at(off);
    return this.lineStart;
  }
}

/** 1-based line of each offset, for increasing offsets, in one pass. */
export function linesOf(text: string, offsets: readonly number[]): number[] {
  const lines = new LineCounter(text, 1);
  return offsets.map((off) => lines.at(off));
}

/**
 * Fields asked for by path: `keep` records the field's own line, `fields` the object keys below it
 * that are asked for (or lead to one that is), `items` the same for every element of an array.
 */
export interface FieldTree {
  readonly keep: boolean;
  readonly fields?: ReadonlyMap<string, FieldTree>;
  readonly items?: FieldTree;
}

/**
 * The tree of `paths` ("spec.ports[].nodePort": `[]` any element) and of their ancestors, whose
 * lines stand in for a field that is not written.
 */
export function fieldTree(paths: readonly string[]): FieldTree {
  type Node = { keep: boolean; fields?: Map<string, Node>; items?: Node };
  const root: Node = { keep: false };
  for (const path of paths) {
    let node = root;
    for (const part of path.split('.')) {
      const [key, ...arrays] = part.split('[]');
      let next = node.fields?.get(key!);
      if (!next) {
        next = { keep: true };
        (node.fields ??= new Map()).set(key!, next);
      }
      node = next;
      for (let a = 0; a < arrays.length; a++) node = node.items ??= { keep: true };
    }
  }
  return root;
}

/**
 * The lines of some fields of one JSON value (`text` from `start` to `end`, valid JSON, starting
 * on line `firstLine`), as the `yaml` package's reading of that text places them (yaml-docs.ts,
 * `Positions`): a key's line where its quote opens, an array element's where it starts, the last
 * writing of a duplicated key winning, `<<` keys and what they hold left out. Only the fields of
 * `tree` are recorded or looked into, so an object pays for the few fields asked for, not for an
 * index of all of them. Undefined when the text has what only the package should judge: an
 * escaped key, a carriage return or a tab (line breaks and separators it may read otherwise).
 */
export function jsonFieldLines(text: string, start: number, end: number, firstLine: number, tree: FieldTree): Map<string, number> | undefined {
  // The object alone (a view into the text, not a copy), so every search ends at its end.
  const t = start === 0 && end === text.length ? text : text.slice(start, end);
  if (t.includes('\r') || t.includes('\t')) return undefined;
  const n = t.length;
  const lines = new Map<string, number>();
  const counter = new LineCounter(t, firstLine);
  const skipSpace = (i: number): number => {
    while (i < n) {
      const c = t.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a) break;
      i++;
    }
    return i;
  };
  const structure = /["[\]{}]/g;
  /** One past the value starting at `i`. */
  const skipValue = (i: number): number => {
    const c = t.charCodeAt(i);
    if (c === QUOTE) return stringEnd(t, i);
    if (c !== OPEN_OBJ && c !== OPEN_ARR) {
      while (i < n) {
        const d = t.charCodeAt(i);
        if (d === COMMA || d === CLOSE_OBJ || d === CLOSE_ARR || d === 0x20 || d === 0x0a) break;
        i++;
      }
      return i;
    }
    // From bracket to bracket, strings jumped over whole.
    let depth = 0;
    structure.lastIndex = i;
    for (let m = structure.exec(t); m; m = structure.exec(t)) {
      const d = t.charCodeAt(m.index);
      if (d === QUOTE) structure.lastIndex = stringEnd(t, m.index);
      else if (d === OPEN_OBJ || d === OPEN_ARR) depth++;
      else if (--depth === 0) return m.index + 1;
    }
    return n;
  };
  let escaped = false;
  /** Records the fields of `node` in the value at `i` (path `path`); returns one past it. */
  const visit = (i: number, path: string, node: FieldTree): number => {
    const c = t.charCodeAt(i);
    const obj = c === OPEN_OBJ;
    if ((obj && !node.fields) || (c === OPEN_ARR && !node.items) || (!obj && c !== OPEN_ARR)) return skipValue(i);
    let k = 0;
    i = skipSpace(i + 1);
    while (i < n && !escaped) {
      const d = t.charCodeAt(i);
      if (d === CLOSE_OBJ || d === CLOSE_ARR) return i + 1;
      if (d === COMMA) {
        i = skipSpace(i + 1);
        continue;
      }
      let child: FieldTree | undefined;
      let p = '';
      const at = i;
      if (obj) {
        const qEnd = stringEnd(t, i);
        if (hasEscape(t, i, qEnd)) {
          escaped = true;
          return n;
        }
        const key = t.slice(i + 1, qEnd - 1);
        // `<<` is no field to the package: neither it nor what it holds is indexed.
        child = key === '<<' ? undefined : node.fields!.get(key);
        if (child) p = path === '' ? key : `${path}.${key}`;
        i = skipSpace(skipSpace(qEnd) + 1); // past the colon
      } else {
        child = node.items;
        p = `${path}[${k++}]`;
      }
      if (child?.keep) lines.set(p, counter.at(at));
      i = skipSpace(child ? visit(i, p, child) : skipValue(i));
    }
    return n;
  };
  visit(skipSpace(0), '', tree);
  return escaped ? undefined : lines;
}
