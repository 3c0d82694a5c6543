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

interface Frame {
  obj: boolean;
  /** Objects: keys seen, with their offsets. */
  keys?: Map<string, number>;
  expectKey: boolean;
  /** The root object's `items` array. */
  items: boolean;
  /** Inside an object: the key whose value comes next. */
  pendingKey?: string;
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

export function scanJson(text: string): JsonScan {
  const out: JsonScan = { itemStarts: [], itemEnds: [], duplicates: [] };
  const stack: Frame[] = [];
  let scalarStart = -1;
  const top = (): Frame | undefined => stack[stack.length - 1];
  const endScalar = (at: number): void => {
    if (scalarStart < 0) return;
    if (top()?.items) out.itemEnds.push(at);
    scalarStart = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      endScalar(i);
      continue;
    }
    const frame = top();
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (frame?.obj && frame.expectKey) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
        const first = frame.keys!.get(key);
        if (first !== undefined) out.duplicates.push({ key, at: i, first });
        else frame.keys!.set(key, i);
        frame.pendingKey = key;
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
      const isItems = c === OPEN_ARR && stack.length === 1 && frame?.obj === true && frame.pendingKey === 'items';
      stack.push(c === OPEN_OBJ ? { obj: true, keys: new Map(), expectKey: true, items: false } : { obj: false, expectKey: false, items: isItems });
      continue;
    }
    if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      endScalar(i);
      stack.pop();
      if (top()?.items) out.itemEnds.push(i + 1);
      continue;
    }
    if (c === COMMA) {
      endScalar(i);
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
