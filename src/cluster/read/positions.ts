// Where a manifest object and its fields are written: the object's first line, and the line of
// each field path, found again from the object's text only when a finding asks for one.
import type { Node as YamlNode, YAMLMap } from 'yaml';
import { type FieldTree, jsonFieldLines } from './json-scan.js';
import { yaml } from './yaml-package.js';

/**
 * Field path ("spec.ports[0].port") -> 1-based line, for findings that name the field's line.
 * Built on first use, by parsing the object's document again: only objects with a finding pay for
 * it, and no AST or index is kept for the others. Once the object is read (`settle`), it keeps
 * only the lines findings raised later may ask for, not its file's text.
 */
export class Positions {
  private lines: ReadonlyMap<string, number> | undefined;

  constructor(
    /** Line of the object's first line. */
    readonly line: number,
    private source?: LineSource,
  ) {}

  private index(): ReadonlyMap<string, number> {
    if (!this.lines) {
      try {
        this.lines = this.source ? fieldLines(this.source) : NO_LINES;
      } catch {
        this.lines = NO_LINES; // findings fall back to the object's line
      }
      this.source = undefined;
    }
    return this.lines;
  }

  /** Whether `path` itself is written in the object. */
  has(path: string): boolean {
    return this.index().has(path);
  }

  /** The line of `path`, else of its nearest written ancestor, else the object's line. */
  lineOf(path: string | undefined): number {
    let p = path;
    while (p !== undefined && p !== '') {
      const l = this.index().get(p);
      if (l !== undefined) return l;
      const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
      p = cut > 0 ? p.slice(0, cut) : undefined;
    }
    return this.line;
  }

  /**
   * The object has been read, and the text of its file is to go: from now on only the lines of
   * the fields `kept` names (json-scan.ts `fieldTree`) are asked for, none when undefined. A JSON
   * object keeps those lines alone, found now (json-scan.ts), or nothing when it is written on
   * one line (every line is its own); another keeps a copy of its own document's text; an item
   * of a YAML `*List` keeps its document's (the package places its lines only within the List).
   */
  settle(kept?: FieldTree): void {
    const src = this.source;
    if (!src) return; // lines found already, each from a copy of the object's text
    this.source = undefined;
    if (!kept || (src.json && src.item === undefined && oneLine(src))) this.lines = NO_LINES;
    else if (src.json && src.item === undefined) {
      const found = jsonFieldLines(src.text, src.start, src.end, src.firstLine, kept);
      if (found) this.lines = found;
      else this.source = { ...src, text: ownCopy(src.text.slice(src.start, src.end)), start: 0, end: src.end - src.start };
    } else if (src.item === undefined) {
      this.source = { ...src, text: ownCopy(src.text.slice(src.start, src.end)), start: 0, end: src.end - src.start };
    } else this.source = src;
  }
}

const NO_LINES: ReadonlyMap<string, number> = new Map();

/**
 * Whether an object's text is on one line (no line break: the package breaks lines at CR too).
 * Then every field is on the object's own line, which is what lineOf gives with no lines kept,
 * whatever `has` says: a List written one item a line (what `kubectl get -o json | jq -c`, and
 * generators, write) keeps nothing.
 */
function oneLine({ text, start, end }: LineSource): boolean {
  const t = start === 0 && end === text.length ? text : text.slice(start, end);
  return !t.includes('\n') && !t.includes('\r');
}

/**
 * Where an object's field lines are read from: its document, `text` from `start` to `end`, whose
 * first line is `firstLine`; `item` selects an item of a `*List`.
 */
interface LineSource {
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly firstLine: number;
  readonly json: boolean;
  readonly item?: number;
}

/**
 * A string with its own characters. A substring of a file's text may share the text's (V8 makes
 * substrings of 13 characters or more views into their parent), and would keep a whole file of
 * tens of MB alive for a few lines; JSON.parse always builds new strings.
 */
export function ownCopy(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/** One manifest object as written, with where it starts. */
export interface RawObject {
  readonly file: string;
  /** 1-based line of the object's first line. */
  readonly line: number;
  readonly obj: unknown;
  /** Lines of the object's fields. */
  readonly positions?: Positions;
  /** For items of a `*List`: the kind and apiVersion they inherit when they name none. */
  readonly listKind?: string;
  readonly listApiVersion?: string;
}

/** Walks a document's AST: the lines of the fields of one object root, and JSON duplicate keys. */
export function indexNode(
  root: YamlNode,
  lineAt: (offset: number) => number,
  onDuplicate?: (key: string, line: number, first: number) => void,
): Map<string, number> {
  const lines = new Map<string, number>();
  const visit = (node: unknown, path: string): void => {
    if (yaml().isMap(node)) {
      const seen = onDuplicate ? new Map<string, number>() : undefined;
      for (const pair of (node as YAMLMap).items) {
        if (!yaml().isPair(pair) || !yaml().isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        if (key === '<<') continue; // merged fields were written elsewhere: their parent's line is the best
        const line = lineAt(pair.key.range?.[0] ?? 0);
        if (seen) {
          const first = seen.get(key);
          if (first !== undefined) onDuplicate!(key, line, first);
          else seen.set(key, line);
        }
        const p = path === '' ? key : `${path}.${key}`;
        lines.set(p, line);
        visit(pair.value, p);
      }
    } else if (yaml().isSeq(node)) {
      node.items.forEach((item, i) => {
        const p = `${path}[${i}]`;
        const r = (item as YamlNode | null)?.range;
        if (r) lines.set(p, lineAt(r[0]));
        visit(item, p);
      });
    }
    // Scalars have no fields; an alias is located at the alias itself (its parent's entry).
  };
  visit(root, '');
  return lines;
}

/** The node of `key` in a mapping node, when written there (not through an alias or merge). */
export function mapValue(node: unknown, key: string): unknown {
  if (!yaml().isMap(node)) return undefined;
  for (const pair of node.items) if (yaml().isPair(pair) && yaml().isScalar(pair.key) && pair.key.value === key) return pair.value;
  return undefined;
}

/** The field lines of one object, from its document's text; `item` selects an item of a `*List`. */
function fieldLines({ text, start, end, firstLine, json, item }: LineSource): Map<string, number> {
  const lc = new (yaml().LineCounter)();
  // Parsed from a copy: the keys of the index would be views into the text otherwise.
  const doc = yaml().parseAllDocuments(ownCopy(text.slice(start, end)), {
    lineCounter: lc,
    version: '1.2',
    merge: !json,
    uniqueKeys: false,
    keepSourceTokens: false,
  });
  const first = Array.isArray(doc) ? doc[0] : undefined;
  let node: unknown = first?.contents;
  if (item !== undefined) {
    const items = mapValue(node, 'items');
    node = yaml().isSeq(items) ? items.items[item] : undefined;
  }
  return yaml().isMap(node) || yaml().isSeq(node) ? indexNode(node, (off) => lc.linePos(off).line + firstLine - 1) : new Map();
}
