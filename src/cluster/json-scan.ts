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

/** 1-based line of each offset, for increasing offsets, in one pass. */
export function linesOf(text: string, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let at = 0;
  for (const off of offsets) {
    for (let nl = text.indexOf('\n', at); nl >= 0 && nl < off; nl = text.indexOf('\n', nl + 1)) line++;
    at = Math.max(at, off);
    out.push(line);
  }
  return out;
}

/**
 * The lines of some fields of one JSON value (`text` from `start` to `end`, valid JSON, starting
 * on line `firstLine`), as the `yaml` package's reading of that text places them (yaml-docs.ts,
 * `Positions`): a key's line where its quote opens, an array element's where it starts, the last
 * writing of a duplicated key winning, `<<` keys and what they hold left out. Only paths `keep`
 * matches are recorded, and only the values of paths `descend` matches ('' is the value itself)
 * are looked into, so an object pays for the few fields asked for, not for an index of all of
 * them. Undefined when the text has what only the package should judge: an escaped key, a
 * carriage return or a tab (line breaks and separators the package may read otherwise).
 */
export function jsonFieldLines(text: string, start: number, end: number, firstLine: number, keep: RegExp, descend: RegExp): Map<string, number> | undefined {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0d || c === 0x09) return undefined;
  }
  const lines = new Map<string, number>();
  let line = firstLine;
  let counted = start;
  const lineAt = (off: number): number => {
    for (let nl = text.indexOf('\n', counted); nl >= 0 && nl < off; nl = text.indexOf('\n', nl + 1)) line++;
    counted = Math.max(counted, off);
    return line;
  };
  const skipSpace = (i: number): number => {
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a) break;
      i++;
    }
    return i;
  };
  /** One past the value starting at `i`. */
  const skipValue = (i: number): number => {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return stringEnd(text, i);
    if (c !== OPEN_OBJ && c !== OPEN_ARR) {
      while (i < end) {
        const d = text.charCodeAt(i);
        if (d === COMMA || d === CLOSE_OBJ || d === CLOSE_ARR || d === 0x20 || d === 0x0a) break;
        i++;
      }
      return i;
    }
    let depth = 0;
    for (; i < end; i++) {
      const d = text.charCodeAt(i);
      if (d === QUOTE) i = stringEnd(text, i) - 1;
      else if (d === OPEN_OBJ || d === OPEN_ARR) depth++;
      else if ((d === CLOSE_OBJ || d === CLOSE_ARR) && --depth === 0) return i + 1;
    }
    return end;
  };
  let escaped = false;
  /** Records the fields of the value at `i` (path `path`); returns one past it. */
  const visit = (i: number, path: string): number => {
    const c = text.charCodeAt(i);
    if (c !== OPEN_OBJ && c !== OPEN_ARR) return skipValue(i);
    const obj = c === OPEN_OBJ;
    let k = 0;
    i = skipSpace(i + 1);
    while (i < end && !escaped) {
      const d = text.charCodeAt(i);
      if (d === CLOSE_OBJ || d === CLOSE_ARR) return i + 1;
      if (d === COMMA) {
        i = skipSpace(i + 1);
        continue;
      }
      let p: string;
      let at: number;
      if (obj) {
        const q = i;
        const qEnd = stringEnd(text, q);
        if (hasEscape(text, q, qEnd)) {
          escaped = true;
          return end;
        }
        const key = text.slice(q + 1, qEnd - 1);
        i = skipSpace(qEnd);
        i = skipSpace(i + 1); // the colon
        if (key === '<<') {
          i = skipSpace(skipValue(i));
          continue;
        }
        p = path === '' ? key : `${path}.${key}`;
        at = q;
      } else {
        p = `${path}[${k++}]`;
        at = i;
      }
      if (keep.test(p)) lines.set(p, lineAt(at));
      i = skipSpace(descend.test(p) ? visit(i, p) : skipValue(i));
    }
    return end;
  };
  const root = skipSpace(start);
  if (descend.test('')) visit(root, '');
  return escaped ? undefined : lines;
}
